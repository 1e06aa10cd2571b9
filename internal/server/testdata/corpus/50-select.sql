-- Cross-engine SQL corpus: reading rows.

-- feature: select: basics
SELECT 1;

SELECT 1 AS one, 'two' AS two, NULL AS nothing;

SELECT id, name FROM dept ORDER BY id;

SELECT * FROM emp ORDER BY id;

SELECT name FROM emp WHERE dept_id = 1 AND active;

SELECT name, salary FROM emp WHERE salary BETWEEN 5000 AND 7000 ORDER BY salary DESC, name;

SELECT name FROM emp WHERE name LIKE 'B%' OR name LIKE '%a';

SELECT name FROM emp WHERE name ILIKE 'k%';

SELECT name FROM emp WHERE name NOT LIKE '%a%';

SELECT name FROM emp WHERE dept_id IN (1, 3) ORDER BY name;

SELECT name FROM emp WHERE dept_id NOT IN (1, 2);

SELECT emp.name AS "Employee Name", emp.id AS "ID" FROM emp WHERE id < 3 ORDER BY emp.id;

-- feature: select: values
VALUES (1, 'a'), (2, 'b');

SELECT * FROM (VALUES (1, 'one'), (2, 'two'), (3, NULL)) AS v (n, word) ORDER BY n;

-- feature: null semantics
SELECT count(*) FROM emp WHERE bonus = NULL;

SELECT count(*) FROM emp WHERE bonus IS NULL;

SELECT count(*) FROM emp WHERE dept_id NOT IN (1, NULL);

SELECT NULL = NULL AS eq, NULL IS NULL AS isnull, NULL <> 1 AS ne, 1 + NULL AS plus;

SELECT name FROM emp WHERE NOT (grade > 3) ORDER BY name;

SELECT count(bonus), count(*), sum(bonus), count(grade) FROM emp;

SELECT true AND NULL, false AND NULL, true OR NULL, false OR NULL, NOT NULL::boolean;

SELECT NULL::boolean, NULL::boolean IS NULL, NULL::boolean OR true;

SELECT id, w IS NULL, w = '' FROM words ORDER BY id;

SELECT NULL::integer + 1, NULL::text || 'x', length(NULL::text);

SELECT id, grade / 0 = NULL, NULL IN (grade / (grade - grade)), grade % 0 + NULL::integer FROM emp WHERE grade / 0 > NULL OR id < 3 ORDER BY id;

-- feature: is distinct from
SELECT count(*) FROM emp WHERE bonus IS DISTINCT FROM 0;

SELECT count(*) FROM emp WHERE grade IS NOT DISTINCT FROM NULL;

SELECT id FROM flags WHERE on_off IS DISTINCT FROM maybe ORDER BY id;

SELECT 1 IS DISTINCT FROM NULL, NULL IS DISTINCT FROM NULL, 2 IS NOT DISTINCT FROM 2;

-- feature: boolean columns
SELECT id, on_off, maybe FROM flags ORDER BY id;

SELECT count(*) FROM flags WHERE on_off;

SELECT count(*) FROM flags WHERE NOT maybe;

SELECT id FROM flags WHERE on_off = maybe ORDER BY id;

SELECT id, on_off IS TRUE, maybe IS NOT FALSE, on_off IS UNKNOWN FROM flags ORDER BY id;

-- feature: case
SELECT name, CASE WHEN salary >= 8000 THEN 'high' WHEN salary >= 5000 THEN 'mid' ELSE 'low' END AS band
    FROM emp ORDER BY id;

SELECT id, CASE grade WHEN 1 THEN 'junior' WHEN 5 THEN 'principal' END FROM emp ORDER BY id;

SELECT sum(CASE WHEN active THEN 1 ELSE 0 END) AS active_count FROM emp;

SELECT CASE WHEN NULL THEN 'yes' ELSE 'no' END;

-- feature: coalesce and nullif
SELECT name, COALESCE(bonus, 0) FROM emp ORDER BY id;

SELECT COALESCE(NULL, NULL, 'x'), NULLIF(1, 1), NULLIF(1, 2);

SELECT id, a / NULLIF(b, 0) FROM nums ORDER BY id;

SELECT GREATEST(3, 7, 5), LEAST('b', 'a', 'c'), GREATEST(1, NULL, 2);

-- feature: row values
SELECT order_id, line_no FROM order_line WHERE (order_id, line_no) IN ((1, 1), (2, 1), (3, 2)) ORDER BY 1, 2;

SELECT count(*) FROM emp WHERE (dept_id, grade) = (1, 3);

SELECT id FROM emp WHERE (salary, id) > (6600, 11) ORDER BY id;

SELECT count(*) FROM emp WHERE (dept_id, manager_id) NOT IN ((1, 1), (2, 4));

-- feature: distinct
SELECT DISTINCT dept_id FROM emp;

SELECT DISTINCT city FROM customer ORDER BY city NULLS FIRST;

SELECT DISTINCT active, grade FROM emp;

SELECT DISTINCT lower(w) FROM words WHERE w IS NOT NULL;

-- feature: distinct on
SELECT DISTINCT ON (dept_id) dept_id, name, salary FROM emp ORDER BY dept_id, salary DESC, id;

SELECT DISTINCT ON (customer_id) customer_id, id, placed FROM orders ORDER BY customer_id, placed DESC, id;

SELECT DISTINCT ON (grade) grade, name FROM emp ORDER BY grade DESC, name;

SELECT DISTINCT ON (1) dept_id AS d, name FROM emp ORDER BY 1, 2 DESC;

SELECT DISTINCT ON (dept_id) id FROM emp ORDER BY dept_id, salary, id LIMIT 2;

SELECT DISTINCT ON (dept_id) dept_id, grade, count(*) FROM emp GROUP BY dept_id, grade ORDER BY dept_id, count(*) DESC, grade NULLS FIRST;

SELECT DISTINCT ON (lower(name)) lower(name) AS l, id FROM emp WHERE active ORDER BY lower(name), id DESC;

-- feature: order by with ties
SELECT salary FROM emp ORDER BY salary DESC;

SELECT dept_id, hired FROM emp ORDER BY hired, dept_id;

-- compare: unordered
SELECT name, salary FROM emp ORDER BY salary;

SELECT name FROM emp ORDER BY salary DESC, name;

SELECT placed, customer_id FROM orders ORDER BY placed DESC, customer_id;

-- feature: nulls first / last
SELECT id, grade FROM emp ORDER BY grade NULLS FIRST, id;

SELECT id, grade FROM emp ORDER BY grade DESC, id;

SELECT id, bonus FROM emp ORDER BY bonus, id;

SELECT id, grade FROM emp ORDER BY grade ASC NULLS LAST, id;

SELECT name FROM customer ORDER BY city DESC NULLS LAST, name;

SELECT id, w FROM words ORDER BY w NULLS FIRST, id;

-- feature: order by expression, alias, ordinal
SELECT name, salary + coalesce(bonus, 0) AS total FROM emp ORDER BY total DESC, name;

SELECT name, length(name) FROM emp ORDER BY 2, 1;

SELECT name FROM emp ORDER BY lower(name);

SELECT id, w FROM words WHERE w IS NOT NULL ORDER BY w, id;

SELECT sku, price FROM product ORDER BY price * stock DESC, sku;

-- feature: limit / offset
SELECT id, name FROM emp ORDER BY id LIMIT 3;

SELECT id, name FROM emp ORDER BY id LIMIT 3 OFFSET 4;

SELECT id FROM emp ORDER BY id OFFSET 10;

SELECT id FROM emp ORDER BY id LIMIT 0;

SELECT id FROM emp ORDER BY id LIMIT ALL;

SELECT id FROM emp ORDER BY id FETCH FIRST 2 ROWS ONLY;

SELECT id FROM emp ORDER BY id OFFSET 2 ROWS FETCH NEXT 2 ROWS ONLY;

SELECT id FROM emp ORDER BY id DESC LIMIT 2 OFFSET 100;

-- feature: limit without a total order
SELECT salary FROM emp ORDER BY salary LIMIT 4;

-- compare: count
SELECT name FROM emp ORDER BY dept_id LIMIT 5;

-- compare: count
SELECT name FROM emp LIMIT 3;

SELECT count(*) FROM (SELECT id FROM emp LIMIT 5) AS s;

SELECT count(*) FROM (SELECT id FROM emp ORDER BY hired LIMIT 3 OFFSET 2) AS s;

-- feature: select: extended protocol parameters
-- params: 3
SELECT name, salary FROM emp WHERE id = $1;

-- params: 5000, true
SELECT count(*) FROM emp WHERE salary > $1 AND active = $2;

-- params: 'A%'
SELECT sku FROM product WHERE sku LIKE $1 ORDER BY sku;

-- params: 2, 1
SELECT id FROM emp ORDER BY id LIMIT $1 OFFSET $2;

-- params: NULL
SELECT count(*) FROM emp WHERE bonus IS NOT DISTINCT FROM $1;

-- params: '2020-01-01'
SELECT name FROM emp WHERE hired >= $1 ORDER BY name;

-- params: 1, 4
SELECT id, name FROM emp WHERE dept_id IN ($1, $2) ORDER BY id;

-- feature: text comparison
SELECT name FROM emp WHERE name = 'ken';

SELECT count(*) FROM emp WHERE name > 'Ivan';

SELECT count(*) FROM emp WHERE name = 'KEN';

SELECT w FROM words WHERE w = 'cherry';

SELECT sku FROM product WHERE sku = 'A-100';

SELECT code FROM words WHERE code = 'E' ORDER BY code;

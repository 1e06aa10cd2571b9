-- Cross-engine SQL corpus: joins, subqueries, set operations, CTEs.

-- feature: inner join
SELECT e.name, d.name FROM emp e JOIN dept d ON d.id = e.dept_id ORDER BY e.id;

SELECT e.name, d.name FROM emp e, dept d WHERE d.id = e.dept_id AND d.budget > 300000;

SELECT o.id, c.name, o.status FROM orders o INNER JOIN customer c ON c.id = o.customer_id ORDER BY o.id;

SELECT ol.order_id, p.title, ol.qty FROM order_line ol JOIN product p USING (sku) ORDER BY ol.order_id, ol.line_no;

SELECT e.name FROM emp e JOIN dept d ON d.id = e.dept_id AND d.name LIKE 'S%' ORDER BY e.name;

-- feature: left join
SELECT d.name, e.name FROM dept d LEFT JOIN emp e ON e.dept_id = d.id ORDER BY d.id, e.id;

SELECT c.name FROM customer c LEFT JOIN orders o ON o.customer_id = c.id WHERE o.id IS NULL ORDER BY c.name;

SELECT p.sku, coalesce(sum(ol.qty), 0) FROM product p LEFT JOIN order_line ol ON ol.sku = p.sku GROUP BY p.sku ORDER BY p.sku;

SELECT e.name, d.name FROM emp e LEFT OUTER JOIN dept d ON d.id = e.dept_id WHERE d.id IS NULL;

-- feature: right and full join
SELECT e.name, d.name FROM emp e RIGHT JOIN dept d ON d.id = e.dept_id ORDER BY d.id, e.id;

SELECT e.name, d.name FROM emp e FULL JOIN dept d ON d.id = e.dept_id ORDER BY e.id NULLS LAST, d.id;

SELECT count(*) FROM emp e FULL OUTER JOIN dept d ON d.id = e.dept_id WHERE e.id IS NULL OR d.id IS NULL;

SELECT coalesce(e.name, '-') AS who, d.name AS dept, salary FROM emp e FULL JOIN dept d ON d.id = e.dept_id AND e.salary > 5000
    ORDER BY who, dept NULLS FIRST;

SELECT d.id, count(e.id), sum(e.salary) FROM emp e FULL JOIN dept d ON d.id = e.dept_id GROUP BY d.id ORDER BY d.id NULLS FIRST;

SELECT d.name, e.name FROM emp e FULL JOIN dept d ON d.id = e.dept_id WHERE d.budget IS NULL OR e.bonus IS NOT NULL ORDER BY d.name NULLS FIRST, e.name NULLS FIRST LIMIT 5;

-- feature: self join
SELECT e.name, m.name AS manager FROM emp e LEFT JOIN emp m ON m.id = e.manager_id ORDER BY e.id;

SELECT a.name, b.name FROM emp a JOIN emp b ON a.salary = b.salary AND a.id < b.id ORDER BY a.id;

-- feature: cross join
SELECT count(*) FROM dept CROSS JOIN flags;

SELECT d.id, f.id FROM dept d CROSS JOIN flags f WHERE d.id <= 2 ORDER BY 1, 2;

-- feature: multi-way join
SELECT c.name, count(DISTINCT o.id), sum(ol.qty)
    FROM customer c JOIN orders o ON o.customer_id = c.id JOIN order_line ol ON ol.order_id = o.id
    GROUP BY c.name ORDER BY c.name;

SELECT c.name, p.title FROM customer c
    JOIN orders o ON o.customer_id = c.id
    JOIN order_line ol ON ol.order_id = o.id
    JOIN product p ON p.sku = ol.sku
    WHERE p.price > 20 ORDER BY c.name, p.title;

-- feature: lateral join
SELECT d.name, top.name FROM dept d
    CROSS JOIN LATERAL (SELECT name FROM emp WHERE emp.dept_id = d.id ORDER BY salary DESC, id LIMIT 1) AS top
    ORDER BY d.id;

SELECT d.name, low.name, low.salary FROM dept d
    LEFT JOIN LATERAL (SELECT name, salary FROM emp WHERE emp.dept_id = d.id ORDER BY salary, id LIMIT 1) AS low ON true
    ORDER BY d.id;

SELECT c.name, last.placed FROM customer c, LATERAL (SELECT placed FROM orders o WHERE o.customer_id = c.id ORDER BY placed DESC, id LIMIT 1) AS last
    ORDER BY c.id;

-- feature: exists subquery
SELECT name FROM dept d WHERE EXISTS (SELECT 1 FROM emp e WHERE e.dept_id = d.id AND e.salary > 8000) ORDER BY name;

SELECT name FROM dept d WHERE NOT EXISTS (SELECT 1 FROM emp e WHERE e.dept_id = d.id) ORDER BY name;

-- feature: in subquery
SELECT name FROM emp WHERE dept_id IN (SELECT id FROM dept WHERE budget > 300000) ORDER BY name;

SELECT name FROM emp WHERE id NOT IN (SELECT manager_id FROM emp WHERE manager_id IS NOT NULL) ORDER BY id;

SELECT count(*) FROM emp WHERE id NOT IN (SELECT manager_id FROM emp);

SELECT sku FROM product WHERE (sku, price) IN (SELECT sku, unit_price FROM order_line) ORDER BY sku;

-- feature: any / all subquery
SELECT name FROM emp WHERE salary > ALL (SELECT salary FROM emp WHERE dept_id = 2) ORDER BY name;

SELECT name FROM emp WHERE salary = ANY (SELECT max(salary) FROM emp GROUP BY dept_id) ORDER BY name;

SELECT count(*) FROM emp WHERE salary < SOME (SELECT salary FROM emp WHERE dept_id = 3);

SELECT count(*) FROM emp WHERE dept_id = ANY (ARRAY[1, 2]);

SELECT id, grade = ANY (ARRAY[1, NULL]), grade <> ALL (ARRAY[2, 3]) FROM emp ORDER BY id;

SELECT name FROM emp WHERE name = ANY (ARRAY['Alice', 'Bob', 'nobody']) OR id <> ALL (ARRAY[1, 2, 3, 4, 5, 6, 7]) ORDER BY name;

SELECT d.name FROM dept d WHERE d.budget >= ALL (SELECT budget FROM dept WHERE budget IS NOT NULL) ORDER BY 1;

SELECT e.name FROM emp e WHERE e.salary > ALL (SELECT salary FROM emp x WHERE x.dept_id = e.dept_id AND x.id <> e.id) ORDER BY e.id;

SELECT id, grade > ALL (SELECT grade FROM emp WHERE dept_id = 1), grade < SOME (SELECT grade FROM emp WHERE dept_id = 1),
    grade >= ALL (SELECT grade FROM emp WHERE grade IS NOT NULL) FROM emp ORDER BY id;

SELECT 1 > ALL (SELECT 1 WHERE false), 1 < SOME (SELECT 1 WHERE false), NULL::int > ALL (SELECT 1 WHERE false), NULL::int < SOME (SELECT 1);

SELECT 3 >= ALL (VALUES (1), (NULL::int)), 0 >= ALL (VALUES (1), (NULL::int)), 3 > SOME (VALUES (5), (NULL::int)), 9 > SOME (VALUES (5), (NULL::int)), 3 <> ALL (VALUES (1), (NULL::int));

-- feature: scalar subquery
SELECT name, (SELECT name FROM dept WHERE dept.id = emp.dept_id) AS dept FROM emp ORDER BY id;

SELECT (SELECT count(*) FROM emp) AS emps, (SELECT count(*) FROM dept) AS depts;

SELECT name FROM emp WHERE salary = (SELECT max(salary) FROM emp);

SELECT name, (SELECT max(salary) FROM emp) - salary AS gap FROM emp ORDER BY id;

SELECT id, (SELECT count(*) FROM order_line ol WHERE ol.order_id = o.id) AS lines FROM orders o ORDER BY id;

-- feature: derived table
SELECT dept_id, total FROM (SELECT dept_id, sum(salary) AS total FROM emp GROUP BY dept_id) AS t
    WHERE total > 10000 ORDER BY dept_id;

SELECT avg(cnt) FROM (SELECT count(*) AS cnt FROM emp GROUP BY dept_id) AS s;

SELECT max(n) FROM (SELECT customer_id, count(*) AS n FROM orders GROUP BY customer_id) AS per_customer;

SELECT d.name, d.budget - t.total AS unspent FROM dept d,
    (SELECT dept_id, sum(salary) AS total FROM emp GROUP BY dept_id) AS t WHERE t.dept_id = d.id ORDER BY d.id;

SELECT id, lines - 1 AS more FROM (SELECT o.id, (SELECT count(*) FROM order_line ol WHERE ol.order_id = o.id) AS lines
    FROM orders o) AS x ORDER BY id;

SELECT customer_id, spent * 2, spent - paid FROM (SELECT o.customer_id,
    (SELECT sum(ol.qty * ol.unit_price) FROM order_line ol WHERE ol.order_id = o.id) AS spent,
    (SELECT sum(ol.unit_price) FROM order_line ol WHERE ol.order_id = o.id) AS paid FROM orders o) AS t
    WHERE spent <> paid ORDER BY customer_id, spent;

SELECT a * b FROM (VALUES (2, 3), (4, 5)) AS v (a, b) ORDER BY 1;

SELECT a + b, a / 2 FROM (VALUES (1::smallint, 2), (3, 4)) AS v (a, b) ORDER BY 1;

SELECT x, x / 2, x * 3 FROM (SELECT line_no AS x FROM order_line UNION SELECT qty FROM order_line) AS u ORDER BY 1;

WITH RECURSIVE r (n) AS (SELECT 1::smallint UNION ALL SELECT 20000 UNION ALL SELECT n + 1 FROM r WHERE n > 19999 AND n < 20001)
    SELECT n + n FROM r ORDER BY 1;

-- feature: union / intersect / except
SELECT name FROM dept UNION SELECT name FROM customer ORDER BY 1;

SELECT city FROM customer UNION ALL SELECT city FROM customer;

SELECT dept_id FROM emp INTERSECT SELECT id FROM dept ORDER BY 1;

SELECT id FROM dept EXCEPT SELECT dept_id FROM emp ORDER BY 1;

SELECT grade FROM emp INTERSECT ALL SELECT grade FROM emp WHERE active;

SELECT grade FROM emp EXCEPT ALL SELECT grade FROM emp WHERE active;

SELECT dept_id, grade FROM emp INTERSECT ALL SELECT dept_id, grade FROM emp WHERE salary > 3000 ORDER BY 1 NULLS FIRST, 2 LIMIT 4;

SELECT active FROM emp EXCEPT ALL SELECT true ORDER BY 1;

(SELECT id FROM emp ORDER BY id LIMIT 2) UNION ALL (SELECT id FROM emp ORDER BY id DESC LIMIT 2) ORDER BY 1;

SELECT 1 AS n, 'one' AS word UNION SELECT 2, 'two' UNION SELECT 1, 'one' ORDER BY n;

-- feature: cte
WITH big AS (SELECT * FROM emp WHERE salary > 6000) SELECT count(*) FROM big;

WITH d AS (SELECT dept_id, sum(salary) AS s FROM emp GROUP BY dept_id), m AS (SELECT max(s) AS ms FROM d)
    SELECT dept_id FROM d, m WHERE s = ms;

WITH x AS (SELECT id, name FROM emp WHERE active) SELECT name FROM x WHERE id > 5 ORDER BY name;

WITH t (a, b) AS (VALUES (1, 2), (3, 4)) SELECT a + b FROM t ORDER BY 1;

WITH s (d, total) AS (SELECT dept_id, count(*) FROM emp GROUP BY dept_id) SELECT d, total * 2 FROM s ORDER BY d NULLS FIRST;

-- feature: recursive cte
WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10) SELECT sum(i), count(*) FROM n;

WITH RECURSIVE sub AS (
    SELECT id, label, 0 AS depth FROM tree WHERE parent_id IS NULL
    UNION ALL
    SELECT t.id, t.label, s.depth + 1 FROM tree t JOIN sub s ON t.parent_id = s.id
) SELECT id, label, depth FROM sub ORDER BY id;

WITH RECURSIVE chain AS (
    SELECT id, manager_id, name, 1 AS lvl FROM emp WHERE id = 3
    UNION ALL
    SELECT e.id, e.manager_id, e.name, c.lvl + 1 FROM emp e JOIN chain c ON e.id = c.manager_id
) SELECT name, lvl FROM chain ORDER BY lvl;

WITH RECURSIVE path AS (
    SELECT id, label::text AS p FROM tree WHERE parent_id IS NULL
    UNION ALL
    SELECT t.id, path.p || '/' || t.label FROM tree t JOIN path ON t.parent_id = path.id
) SELECT p FROM path ORDER BY p;

WITH RECURSIVE fib (n, a, b) AS (SELECT 1, 0::bigint, 1::bigint UNION ALL SELECT n + 1, b, a + b FROM fib WHERE n < 50)
    SELECT a FROM fib WHERE n = 50;

WITH RECURSIVE p (i, v) AS (SELECT 1, 1::bigint UNION ALL SELECT i + 1, v * 3 FROM p WHERE i < 30) SELECT max(v), sum(v), count(*) FROM p;

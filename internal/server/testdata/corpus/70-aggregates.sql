-- Cross-engine SQL corpus: aggregates and grouping.

-- feature: aggregates
SELECT count(*), count(bonus), sum(salary), min(salary), max(salary) FROM emp;

SELECT avg(salary) FROM emp;

SELECT round(avg(salary), 2), round(avg(grade), 3) FROM emp;

SELECT dept_id, avg(salary) * 12, round(avg(grade) / 2, 3), 100 - avg(grade), avg(salary) + 0.5, -2 * avg(grade) FROM emp GROUP BY dept_id ORDER BY dept_id;

SELECT dept_id, avg(salary) * 2 AS d FROM emp GROUP BY dept_id ORDER BY d DESC, dept_id;

SELECT dept_id, - avg(grade), count(*) + avg(salary) * 2, (avg(grade) + 1) / 3 FROM emp GROUP BY dept_id ORDER BY dept_id;

SELECT name FROM emp WHERE grade > (SELECT avg(grade) FROM emp) ORDER BY name;

SELECT id, CASE WHEN grade >= (SELECT avg(e.grade) FROM emp AS e WHERE e.dept_id = emp.dept_id) THEN 'at or above' ELSE 'below' END FROM emp ORDER BY id;

SELECT dept_id, avg(grade) >= 2 FROM emp GROUP BY dept_id HAVING avg(grade) > 1 ORDER BY dept_id;

SELECT dept_id, CAST(avg(grade) AS integer), - CAST(avg(DISTINCT grade) AS smallint) FROM emp GROUP BY dept_id ORDER BY dept_id;

SELECT COALESCE(avg(salary), 0) / 12, CAST(avg(grade) AS integer), count(*) FROM emp WHERE false;

SELECT NULLIF(7, 96 / avg(97) + 13), CASE WHEN avg(3) = 3 THEN avg(10) / 4 END, CAST(avg(2.5) AS integer);

SELECT min(name), max(name), min(hired), max(hired) FROM emp;

SELECT sum(x), avg(x), sum(f), min(f), max(r) FROM nums;

SELECT count(*), sum(salary), max(name) FROM emp WHERE false;

SELECT bool_and(active), bool_or(active), every(active) FROM emp;

SELECT sum(qty * unit_price) FROM order_line;

SELECT round(stddev_samp(salary), 4), round(var_pop(salary), 2) FROM emp;

SELECT stddev(grade), stddev_samp(grade), stddev_pop(grade), variance(grade), var_samp(grade), var_pop(grade) FROM emp;

SELECT dept_id, round(stddev(grade), 3), var_pop(grade) FILTER (WHERE active) FROM emp GROUP BY dept_id ORDER BY dept_id;

SELECT stddev(a), var_samp(b), stddev_pop(a) FROM nums;

SELECT stddev(price), var_pop(price), round(stddev_pop(unit_price), 2) FROM product, order_line WHERE order_line.sku = product.sku;

SELECT order_id, variance(unit_price), stddev(qty) FROM order_line GROUP BY order_id ORDER BY order_id;

SELECT sum(a), sum(big) FROM nums WHERE id <> 6;

-- feature: count distinct
SELECT count(DISTINCT dept_id), count(DISTINCT grade), count(DISTINCT salary) FROM emp;

SELECT count(DISTINCT (dept_id, grade)) FROM emp;

SELECT sum(DISTINCT salary), avg(DISTINCT grade)::numeric(10,4) FROM emp;

-- feature: group by
SELECT dept_id, count(*) FROM emp GROUP BY dept_id;

SELECT dept_id, count(*), sum(salary), max(hired) FROM emp GROUP BY dept_id ORDER BY dept_id NULLS LAST;

SELECT d.name, count(e.id) FROM dept d LEFT JOIN emp e ON e.dept_id = d.id GROUP BY d.name ORDER BY d.name;

SELECT active, grade, count(*) FROM emp GROUP BY active, grade;

SELECT extract(year FROM hired) AS y, count(*) FROM emp GROUP BY y ORDER BY y;

SELECT dept_id, count(*) FROM emp WHERE false GROUP BY dept_id;

SELECT status, count(*), min(placed), max(placed) FROM orders GROUP BY status ORDER BY status;

SELECT lang, count(w) FROM words GROUP BY lang ORDER BY lang NULLS FIRST;

-- feature: group by ordinal
SELECT dept_id, count(*) FROM emp GROUP BY 1 ORDER BY 1;

SELECT status, customer_id, count(*) FROM orders GROUP BY 1, 2 ORDER BY 1, 2;

-- feature: group by expression
SELECT CASE WHEN salary > 6000 THEN 'high' ELSE 'low' END AS band, count(*) FROM emp GROUP BY band ORDER BY band;

SELECT left(name, 1) AS initial, count(*) FROM emp GROUP BY left(name, 1) ORDER BY initial;

SELECT placed::date, count(*) FROM orders GROUP BY placed::date ORDER BY 1;

-- feature: having
SELECT dept_id, count(*) FROM emp GROUP BY dept_id HAVING count(*) > 2;

SELECT dept_id, sum(salary) FROM emp GROUP BY dept_id HAVING sum(salary) > 15000 ORDER BY dept_id;

SELECT o.customer_id, sum(ol.qty * ol.unit_price) AS spent
    FROM orders o JOIN order_line ol ON ol.order_id = o.id
    GROUP BY o.customer_id HAVING sum(ol.qty * ol.unit_price) > 50 ORDER BY o.customer_id;

SELECT count(*) FROM emp HAVING count(*) > 100;

SELECT grade FROM emp GROUP BY grade HAVING grade IS NOT NULL AND min(salary) > 4000 ORDER BY grade;

SELECT count(*) FROM emp GROUP BY lower(name) HAVING lower(name) > 'c' ORDER BY 1;

SELECT id, count(*) FROM emp GROUP BY id HAVING salary > 5000 AND grade IS NOT NULL ORDER BY id;

-- feature: string_agg and array_agg
SELECT string_agg(name, ', ' ORDER BY name) FROM emp;

SELECT dept_id, string_agg(name, '/' ORDER BY id DESC) FROM emp GROUP BY dept_id ORDER BY dept_id NULLS FIRST;

SELECT string_agg(DISTINCT tag, ',' ORDER BY tag) FROM tagged;

SELECT string_agg(w, '') FROM words WHERE id > 100;

SELECT array_agg(id ORDER BY id) FROM emp WHERE dept_id = 1;

-- feature: aggregate filter
SELECT count(*) FILTER (WHERE active), sum(salary) FILTER (WHERE dept_id = 1) FROM emp;

SELECT dept_id, count(*) FILTER (WHERE grade > 2), count(grade) FILTER (WHERE active), max(name) FILTER (WHERE salary > 5000),
    min(hired) FILTER (WHERE NOT active) FROM emp GROUP BY dept_id ORDER BY dept_id NULLS FIRST;

SELECT count(*) FILTER (WHERE grade IS NULL), sum(grade) FILTER (WHERE grade > 100) FROM emp;

SELECT avg(salary) FILTER (WHERE active), count(DISTINCT dept_id) FILTER (WHERE grade > 1), bool_and(active) FILTER (WHERE grade > 1),
    bool_or(active) FILTER (WHERE dept_id = 2), string_agg(name, ',' ORDER BY name) FILTER (WHERE salary > 6000) FROM emp;

-- feature: grouping sets
-- compare: unordered
SELECT dept_id, count(*) FROM emp GROUP BY ROLLUP (dept_id) ORDER BY dept_id;

SELECT dept_id, grade, sum(salary), GROUPING(dept_id, grade) FROM emp GROUP BY CUBE (dept_id, grade) ORDER BY 4, 1, 2;

SELECT active, dept_id, count(*), max(name) FROM emp GROUP BY active, GROUPING SETS ((dept_id), ()) ORDER BY 1, 2;

SELECT dept_id, grade, count(*) FROM emp GROUP BY ROLLUP (dept_id, grade) ORDER BY dept_id NULLS FIRST, grade DESC, 3;

SELECT count(*), sum(salary) FROM emp WHERE id < 0 GROUP BY ROLLUP (dept_id);

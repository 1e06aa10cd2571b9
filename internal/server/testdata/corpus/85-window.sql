-- Cross-engine SQL corpus: window functions.

-- feature: window: ranking
SELECT name, row_number() OVER (ORDER BY salary DESC, id) AS rn FROM emp ORDER BY rn;

SELECT name, salary, rank() OVER (ORDER BY salary DESC), dense_rank() OVER (ORDER BY salary DESC)
    FROM emp ORDER BY salary DESC, name;

SELECT dept_id, name, row_number() OVER (PARTITION BY dept_id ORDER BY hired, id) AS rn
    FROM emp ORDER BY dept_id NULLS FIRST, rn;

SELECT id, ntile(3) OVER (ORDER BY id) FROM emp ORDER BY id;

SELECT id, percent_rank() OVER (ORDER BY salary), cume_dist() OVER (ORDER BY salary) FROM emp ORDER BY id;

SELECT id, percent_rank() OVER (PARTITION BY dept_id ORDER BY grade), cume_dist() OVER (PARTITION BY dept_id ORDER BY grade DESC) FROM emp ORDER BY id;

-- feature: window: aggregates
SELECT name, dept_id, sum(salary) OVER (PARTITION BY dept_id) FROM emp ORDER BY id;

SELECT name, sum(salary) OVER (ORDER BY id) AS running FROM emp ORDER BY id;

SELECT name, count(*) OVER () FROM emp ORDER BY id;

SELECT id, sum(a) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM nums ORDER BY id;

SELECT id, min(a) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM nums ORDER BY id;

SELECT id, avg(salary) OVER (PARTITION BY dept_id)::numeric(10,2) FROM emp ORDER BY id;

SELECT id, sum(salary) OVER (ORDER BY salary) FROM emp ORDER BY id;

SELECT id, sum(grade) OVER (PARTITION BY dept_id ORDER BY grade) FROM emp ORDER BY id;

SELECT id, sum(bonus) OVER (ORDER BY hired, id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM emp ORDER BY id;

-- feature: window: lag / lead / first_value
SELECT id, salary, lag(salary) OVER (ORDER BY id), lead(salary, 2, 0) OVER (ORDER BY id) FROM emp ORDER BY id;

SELECT id, lag(grade, 1, -1) OVER (PARTITION BY dept_id ORDER BY id), lead(grade, 2, 0) OVER (ORDER BY id), lag(name, 0, 'none') OVER (ORDER BY id) FROM emp ORDER BY id;

SELECT id, first_value(name) OVER (PARTITION BY dept_id ORDER BY id),
    last_value(name) OVER (PARTITION BY dept_id ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
    FROM emp ORDER BY id;

SELECT id, placed - lag(placed) OVER (ORDER BY placed, id) FROM orders ORDER BY id;

-- feature: window: top-n per group
SELECT dept_id, name FROM (
    SELECT dept_id, name, row_number() OVER (PARTITION BY dept_id ORDER BY salary DESC, id) AS rn FROM emp
) AS t WHERE rn = 1 ORDER BY dept_id NULLS LAST;

-- feature: window: named window
SELECT id, sum(salary) OVER w, min(salary) OVER w FROM emp WINDOW w AS (PARTITION BY dept_id) ORDER BY id;

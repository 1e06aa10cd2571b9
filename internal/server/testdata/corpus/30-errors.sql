-- Cross-engine SQL corpus: statements that fail, and must fail the same
-- way (the same SQLSTATE) everywhere, leaving nothing behind.

-- feature: error: unique violation
-- error: 23505
INSERT INTO dept (id, name) VALUES (1, 'Duplicate');

-- error: 23505
INSERT INTO dept (id, name) VALUES (6, 'Sales');

-- error: 23505
UPDATE emp SET email = 'ada@example.com' WHERE id = 2;

-- error: 23505
INSERT INTO tagged VALUES (1, 'red');

-- error: 23505
INSERT INTO kv (k, v) VALUES ('ok1', 1), ('alpha', 2);

SELECT count(*) FROM kv WHERE k = 'ok1';

-- error: 23505
UPDATE nums SET id = id + 1;

-- feature: error: not null
-- error: 23502
INSERT INTO emp (id, salary, hired) VALUES (20, 1000, '2024-01-01');

-- error: 23502
UPDATE product SET title = NULL WHERE sku = 'A-100';

-- error: 23502
INSERT INTO ledger (id) VALUES (50);

-- feature: error: check
-- error: 23514
INSERT INTO dept (id, name, budget) VALUES (7, 'Negative', -1);

-- error: 23514
UPDATE emp SET salary = 0 WHERE id = 1;

-- error: 23514
INSERT INTO order_line (order_id, line_no, sku, qty, unit_price) VALUES (1, 9, 'A-100', 0, 1);

-- feature: error: foreign key
-- error: 23503
INSERT INTO emp (id, name, dept_id, salary, hired) VALUES (21, 'Zed', 99, 1000, '2024-01-01');

-- error: 23503
DELETE FROM dept WHERE id = 1;

-- error: 23503
UPDATE order_line SET sku = 'ZZZ' WHERE order_id = 1 AND line_no = 1;

-- feature: error: division by zero
-- error: 22012
SELECT 1 / 0;

-- error: 22012
SELECT a / b FROM nums WHERE id = 9;

-- error: 22012
SELECT 1.5 / 0;

-- error: 22012
SELECT mod(5, 0);

-- error: 22012
SELECT 5 % 0;

-- error: 22012
UPDATE nums SET a = a / b WHERE id = 9;

-- feature: error: out of range and bad input
-- error: 22003
SELECT 2147483647 + 1;

-- error: 22003
SELECT 9223372036854775807 + 1;

-- error: 22003
SELECT - (-2147483647 - 1);

-- error: 22003
SELECT abs(CAST(-32768 AS smallint));

-- error: 22003
SELECT - (-9223372036854775807 - 1);

-- error: 22003
SELECT CAST(-2147483648 AS integer) / (id - id - 1) FROM nums WHERE id = 1;

-- error: 22003
SELECT CAST(-9223372036854775808 AS bigint) / (id - id - 1) FROM nums WHERE id = 1;

-- error: 22003
INSERT INTO nums (id, a) VALUES (30, 3000000000);

-- error: 22003
INSERT INTO ledger (id, amount) VALUES (30, 1e20);

-- error: 22P02
SELECT CAST('abc' AS integer);

-- error: 22008
SELECT CAST('2024-02-30' AS date);

-- error: 22001
INSERT INTO kv (k, v) VALUES ('this key is far too long for the column', 1);

-- error: 21000
SELECT (SELECT id FROM emp) AS too_many;

-- error: 22003
UPDATE emp SET grade = 40000 WHERE id = 1;

-- error: 22003
UPDATE emp SET grade = salary * 1000 WHERE id = 1;

-- error: 22001
UPDATE emp SET email = repeat('x', 81) WHERE id = 1;

-- error: 21000
SELECT name, (SELECT e2.id FROM emp e2 WHERE e2.dept_id = emp.dept_id) FROM emp WHERE id = 1;

SELECT name, (SELECT count(*) FROM emp e2 WHERE e2.dept_id = emp.dept_id GROUP BY e2.dept_id) AS peers FROM emp ORDER BY id;

-- feature: values rounded into integer columns
UPDATE emp SET grade = salary * 0.001 WHERE id = 1;

SELECT grade FROM emp WHERE id = 1;

UPDATE emp SET grade = 4.5 WHERE id = 1;

SELECT grade FROM emp WHERE id = 1;

UPDATE emp SET grade = 4.5::float8 WHERE id = 1;

SELECT grade FROM emp WHERE id = 1;

UPDATE emp SET grade = 5 WHERE id = 1;

-- feature: error: undefined objects
-- error: 42P01
SELECT * FROM no_such_table;

-- error: 42703
SELECT no_such_column FROM emp;

-- error: 42883
SELECT no_such_function(1);

-- feature: error: syntax
-- error: 42601
SELEC 1;

-- error: 42601
SELECT FROM WHERE;

-- feature: error: nothing left behind
SELECT count(*) FROM emp;

SELECT count(*) FROM dept;

SELECT count(*) FROM nums WHERE id > 9;

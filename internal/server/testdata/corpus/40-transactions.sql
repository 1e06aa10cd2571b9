-- Cross-engine SQL corpus: transaction blocks.

-- feature: transaction: commit
BEGIN;

INSERT INTO kv (k, v) VALUES ('tx1', 1);

UPDATE kv SET v = v + 1 WHERE k = 'tx1';

SELECT v FROM kv WHERE k = 'tx1';

COMMIT;

SELECT v FROM kv WHERE k = 'tx1';

-- feature: transaction: rollback
BEGIN;

DELETE FROM kv;

SELECT count(*) FROM kv;

ROLLBACK;

SELECT count(*) FROM kv;

-- feature: transaction: start transaction and end
START TRANSACTION ISOLATION LEVEL SERIALIZABLE;

INSERT INTO kv (k, v) VALUES ('tx-serializable', 3);

END;

BEGIN ISOLATION LEVEL READ COMMITTED;

UPDATE kv SET note = 'read committed' WHERE k = 'tx-serializable';

COMMIT;

-- feature: transaction: read only
BEGIN READ ONLY;

SELECT count(*) FROM emp;

-- error: 25006
INSERT INTO kv (k, v) VALUES ('read-only', 1);

ROLLBACK;

BEGIN READ ONLY;

-- error: 25006
UPDATE kv SET v = v + 1;

ROLLBACK;

BEGIN READ ONLY;

-- error: 25006
CREATE TABLE read_only_table (id int);

ROLLBACK;

-- feature: transaction: failed block
BEGIN;

INSERT INTO kv (k, v) VALUES ('tx2', 2);

-- error: 23505
INSERT INTO kv (k, v) VALUES ('tx2', 3);

-- error: 25P02
SELECT 1;

COMMIT;

SELECT count(*) FROM kv WHERE k = 'tx2';

BEGIN;

-- error: 22012
SELECT 1 / 0;

ROLLBACK;

-- feature: transaction: savepoints
BEGIN;

INSERT INTO kv (k, v) VALUES ('sp1', 1);

SAVEPOINT before_dup;

-- error: 23505
INSERT INTO kv (k, v) VALUES ('sp1', 2);

-- error: 25P02
SELECT 1;

ROLLBACK TO SAVEPOINT before_dup;

UPDATE kv SET v = v + 10 WHERE k = 'sp1';

SAVEPOINT inner_sp;

DELETE FROM kv WHERE k = 'sp1';

SELECT count(*) FROM kv WHERE k = 'sp1';

ROLLBACK TO inner_sp;

RELEASE SAVEPOINT before_dup;

SELECT v FROM kv WHERE k = 'sp1';

COMMIT;

SELECT v FROM kv WHERE k = 'sp1';

BEGIN;

SAVEPOINT outer_sp;

INSERT INTO kv (k, v) VALUES ('sp2', 2);

SAVEPOINT outer_sp;

UPDATE kv SET v = 20 WHERE k = 'sp2';

ROLLBACK TO SAVEPOINT outer_sp;

SELECT v FROM kv WHERE k = 'sp2';

-- error: 3B001
RELEASE SAVEPOINT no_such_savepoint;

ROLLBACK TO outer_sp;

COMMIT;

SELECT v FROM kv WHERE k = 'sp2';

-- feature: transaction: several statements
BEGIN;

INSERT INTO ledger (id, amount, currency) VALUES (10, 500, 'EUR');

UPDATE ledger SET amount = amount - 100 WHERE id = 10;

INSERT INTO ledger (id, amount, currency) VALUES (11, 100, 'EUR');

SELECT sum(amount) FROM ledger WHERE id IN (10, 11);

COMMIT;

SELECT id, amount FROM ledger WHERE id >= 10 ORDER BY id;

-- feature: transaction: for update / for share
BEGIN;

SELECT n FROM counter WHERE name = 'hits' FOR UPDATE;

UPDATE counter SET n = n + 1 WHERE name = 'hits';

COMMIT;

BEGIN;

SELECT id, name FROM emp WHERE dept_id = 2 ORDER BY id FOR SHARE;

COMMIT;

BEGIN;

SELECT e.id, d.name FROM emp e JOIN dept d ON d.id = e.dept_id WHERE e.id = 1 FOR UPDATE OF e;

ROLLBACK;

SELECT sku, stock FROM product WHERE sku = 'A-100' FOR UPDATE;

BEGIN;

SELECT k FROM kv WHERE k = 'alpha' FOR NO KEY UPDATE;

ROLLBACK;

-- feature: transaction: ddl rolled back
BEGIN;

CREATE TABLE scratch (id integer PRIMARY KEY);

INSERT INTO scratch VALUES (1);

ROLLBACK;

CREATE TABLE scratch (id integer PRIMARY KEY, note text);

INSERT INTO scratch VALUES (1, 'kept'), (2, 'also kept');

BEGIN;

TRUNCATE scratch;

ROLLBACK;

SELECT count(*) FROM scratch;

BEGIN;

ALTER TABLE scratch ADD COLUMN extra integer;

ROLLBACK;

-- error: 42703
SELECT extra FROM scratch;

-- feature: transaction: control outside a block
ROLLBACK;

COMMIT;

-- feature: transaction: now() is fixed in a transaction
BEGIN;

INSERT INTO audit (who) VALUES ('tx-a');

INSERT INTO audit (who, created) VALUES ('tx-b', now());

SELECT count(DISTINCT created) FROM audit WHERE who IN ('tx-a', 'tx-b');

COMMIT;

SELECT count(DISTINCT created) FROM audit WHERE who IN ('tx-a', 'tx-b');

-- feature: transaction: parameters inside a block
BEGIN;

-- params: 'tx-param', 77
INSERT INTO kv (k, v) VALUES ($1, $2);

-- params: 'tx-param'
SELECT v FROM kv WHERE k = $1;

COMMIT;

-- feature: transaction: lock table
BEGIN;

LOCK TABLE kv IN ACCESS SHARE MODE;

LOCK TABLE kv IN ACCESS EXCLUSIVE MODE;

SELECT count(*) FROM kv;

COMMIT;

-- feature: prepared statements in SQL
PREPARE kv_get (text) AS SELECT v FROM kv WHERE k = $1;

EXECUTE kv_get('tx-param');

DEALLOCATE kv_get;

-- error: 26000
EXECUTE kv_get('tx-param');

-- feature: varchar(n): spaces beyond n cut on assignment, casts cut
BEGIN;

INSERT INTO kv (k, v) VALUES ('cut' || repeat(' ', 30), 1);

UPDATE kv SET k = k || '  ' WHERE v = 1 AND k LIKE 'cut%';

SELECT k || '|', length(k) FROM kv WHERE k LIKE 'cut%';

SELECT 'abcdef'::varchar(3), 'ab    '::varchar(3) || '|', 'É' ILIKE 'é', 'ABC' ILIKE 'a%', 'x' NOT ILIKE 'X';

ROLLBACK;

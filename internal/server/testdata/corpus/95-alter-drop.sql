-- Cross-engine SQL corpus: changing and dropping the schema.

-- feature: views
SELECT name FROM active_emp WHERE salary > 6000 ORDER BY name;

CREATE VIEW dept_summary AS
    SELECT d.name, count(e.id) AS n FROM dept d LEFT JOIN emp e ON e.dept_id = d.id GROUP BY d.name;

SELECT * FROM dept_summary ORDER BY name;

-- feature: alter table: add column
ALTER TABLE kv ADD COLUMN flag boolean DEFAULT false;

SELECT k, flag FROM kv ORDER BY k;

ALTER TABLE kv ADD COLUMN score integer NOT NULL DEFAULT 7;

ALTER TABLE kv ADD COLUMN tag varchar(10);

UPDATE kv SET tag = 'big' WHERE v > 10;

SELECT k, score, tag FROM kv ORDER BY k;

-- feature: alter table: rename
ALTER TABLE kv RENAME COLUMN note TO remark;

SELECT k, remark FROM kv ORDER BY k;

ALTER TABLE scratch RENAME TO scratch2;

SELECT * FROM scratch2 ORDER BY id;

-- error: 42P01
SELECT * FROM scratch;

-- feature: alter table: columns and constraints
ALTER TABLE kv DROP COLUMN tag;

ALTER TABLE kv ADD CONSTRAINT kv_v_nonneg CHECK (v >= 0);

-- error: 23514
INSERT INTO kv (k, v) VALUES ('negative', -1);

ALTER TABLE kv ALTER COLUMN v SET DEFAULT 42;

INSERT INTO kv (k) VALUES ('dflt') RETURNING v, flag, score;

ALTER TABLE kv ALTER COLUMN remark TYPE varchar(200);

-- error: 23502
ALTER TABLE emp ALTER COLUMN grade SET NOT NULL;

ALTER TABLE words ALTER COLUMN lang DROP DEFAULT;

ALTER TABLE ledger ADD COLUMN booked date NOT NULL DEFAULT DATE '2024-01-01';

SELECT id, booked FROM ledger ORDER BY id;

SELECT * FROM kv ORDER BY k;

-- feature: truncate
TRUNCATE tagged;

SELECT count(*) FROM tagged;

-- feature: drop
DROP VIEW active_emp;

-- error: 42P01
SELECT * FROM active_emp;

DROP INDEX emp_dept_idx;

DROP TABLE scratch2;

DROP TABLE IF EXISTS no_such_table;

-- error: 2BP01
DROP TABLE dept;

-- error: 42P01
DROP TABLE no_such_table;

DROP VIEW dept_summary;

-- feature: drop several tables
CREATE TABLE scratch3 (id integer PRIMARY KEY);

CREATE TABLE scratch4 (id integer PRIMARY KEY, s integer REFERENCES scratch3);

-- error: 42P01
DROP TABLE scratch3, no_such_table, scratch4;

-- error: 2BP01
DROP TABLE scratch3;

DROP TABLE IF EXISTS scratch3, no_such_table, scratch4;

-- error: 42P01
SELECT * FROM scratch4;

-- feature: truncate several tables
CREATE TABLE tr_parent (id integer PRIMARY KEY);

CREATE TABLE tr_child (id integer PRIMARY KEY, parent_id integer REFERENCES tr_parent (id));

CREATE TABLE tr_other (id integer PRIMARY KEY, note text);

INSERT INTO tr_parent VALUES (1), (2);

INSERT INTO tr_child VALUES (10, 1), (20, 2);

INSERT INTO tr_other VALUES (100, 'x');

-- error: 0A000
TRUNCATE tr_parent;

-- error: 0A000
TRUNCATE tr_parent, tr_other;

-- error: 42P01
TRUNCATE tr_other, no_such_table;

TRUNCATE tr_parent, tr_other, tr_child;

SELECT (SELECT count(*) FROM tr_parent), (SELECT count(*) FROM tr_child), (SELECT count(*) FROM tr_other);

INSERT INTO tr_parent VALUES (3);

TRUNCATE TABLE tr_child, tr_parent RESTART IDENTITY;

SELECT count(*) FROM tr_parent;

-- feature: vacuum and analyze
VACUUM;

VACUUM ANALYZE tr_parent;

ANALYZE tr_child;

ANALYZE;

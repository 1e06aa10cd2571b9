# pg_dump 15 --schema-only of a small schema (sequence, FK, unique,
# check, index, view), then a data dump restored by psql into the same
# database after dropping the tables.
. "$(dirname "$0")/lib.sh"
step schema
q <<'SQL'
CREATE TABLE dept (id serial PRIMARY KEY, name text NOT NULL UNIQUE);
CREATE TABLE emp (
  id serial PRIMARY KEY,
  dept_id integer NOT NULL REFERENCES dept(id),
  name text NOT NULL,
  salary numeric(10,2) CHECK (salary > 0));
CREATE INDEX emp_dept_idx ON emp (dept_id);
CREATE VIEW big_dept AS SELECT dept_id, count(*) AS n FROM emp GROUP BY dept_id;
INSERT INTO dept (name) VALUES ('r&d'), ('sales');
INSERT INTO emp (dept_id, name, salary) VALUES (1, 'ann', 5000.50), (2, 'bob', 4000);
SQL
step schema_only
out=$(pg_dump --schema-only 2>&1) || fail "$(printf '%s\n' "$out" | grep -m1 -E 'error|ERROR' || printf '%s\n' "$out" | tail -1)"
has "$out" 'CREATE TABLE public\.emp' 'the dump creates emp'
has "$out" 'salary numeric\(10,2\)' 'the dump keeps numeric(10,2)'
has "$out" 'FOREIGN KEY \(dept_id\) REFERENCES public\.dept\(id\)' 'the dump has the foreign key'
has "$out" 'CREATE INDEX emp_dept_idx' 'the dump has the index'
has "$out" 'CREATE VIEW public\.big_dept' 'the dump has the view'
step data_dump
out=$(pg_dump --data-only --table=dept --table=emp 2>&1 >data.sql) || fail "$(printf '%s\n' "$out" | grep -m1 -E 'error|ERROR' || printf '%s\n' "$out" | tail -1)"
step restore
q -c 'DELETE FROM emp' -c 'DELETE FROM dept' >/dev/null
q -f data.sql >/dev/null
n=$(q -At -c 'SELECT sum(salary) FROM emp')
[ "$n" = 9000.50 ] || fail "restored salaries sum to $n"
finish

package server

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// diverseAsPostgres runs steps, in order and in one session each, on
// PostgreSQL 15 and on the diverse embedded cluster (SQLite, SQLite (cgo)
// and DuckDB): every answer (rows as text, or the SQLSTATE) must be
// PostgreSQL's; then, once the cluster is idle, every replica must be up
// with no mismatch (a DuckDB replica that answered otherwise than the
// others lost a vote) and hold the same rows.
func diverseAsPostgres(t *testing.T, steps []string) {
	t.Helper()
	clusterAsPostgres(t, config.EmbeddedDiverse(), steps)
}

// clusterAsPostgres is diverseAsPostgres on an embedded cluster of the
// given replicas (the first is the primary).
func clusterAsPostgres(t *testing.T, replicas []config.Replica, steps []string) {
	t.Helper()
	ctx := context.Background()
	cfg := config.EmbeddedWith(replicas)
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	addr, srv := start(t, cfg)
	pg, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	sh := connect(t, addr, "app")
	for _, sql := range steps {
		want, got := ask(ctx, pg, sql, false), ask(ctx, sh, sql, false)
		if !sameAnswer(want, got) {
			t.Errorf("%s:\n got %s\nwant %s", sql, got, want)
		}
	}
	idle, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := srv.Cluster().Idle(idle); err != nil {
		t.Fatal(err)
	}
	assertReplicas(t, addr, 3)
	assertSameTables(t, cfg)
}

// sameAnswer compares two answers by rows, or by SQLSTATE.
func sameAnswer(a, b answerOf) bool {
	if (a.err == nil) != (b.err == nil) || a.other != nil || b.other != nil {
		return false
	}
	if a.err != nil {
		return a.err.Code == b.err.Code
	}
	if len(a.rows) != len(b.rows) {
		return false
	}
	for i := range a.rows {
		if len(a.rows[i]) != len(b.rows[i]) {
			return false
		}
		for j := range a.rows[i] {
			if a.rows[i][j] != b.rows[i][j] {
				return false
			}
		}
	}
	return true
}

// TestEmbeddedDiverseAgrees: statements the corpus found the DuckDB
// replica answering otherwise than the SQLite ones (each took it out with
// a failed COMMIT, 40001): an operator over NULL PostgreSQL folds without
// evaluating a division by zero in it; a numeric product beyond 64 bits
// of DECIMAL digits; a GROUP BY of a primary key with its table's other
// columns used ungrouped; names DuckDB reserves (before, refused).
func TestEmbeddedDiverseAgrees(t *testing.T) {
	diverseAsPostgres(t, []string{
		"CREATE TABLE emp (id int PRIMARY KEY, grade smallint, salary numeric(10,2) NOT NULL)",
		"INSERT INTO emp VALUES (1, 3, 6000), (2, NULL, 4000), (3, 2, 7000.50)",
		"CREATE TABLE nums (id int PRIMARY KEY, x numeric(10,3))",
		"INSERT INTO nums VALUES (1, 2.5), (2, -1.25), (3, NULL)",
		"SELECT id, grade / 0 = NULL, NULL IN (grade / (grade - grade)), grade % 0 + NULL::integer FROM emp WHERE grade / 0 > NULL OR id < 3 ORDER BY id",
		"SELECT id, x * (30000 / 1.5), x * 20000.000000000000 + 99999999999999.5, -x - 999999999.25 FROM nums ORDER BY id",
		"SELECT sum(x * 4000000000000.000) FROM nums",
		"SELECT id, count(*) FROM emp GROUP BY id HAVING salary > 5000 AND grade IS NOT NULL ORDER BY id",
		"SELECT e.id, e.salary, count(*) FROM emp e JOIN nums n ON n.id = e.id GROUP BY e.id ORDER BY e.salary",
		"SELECT id, grade / 0 FROM emp",
		// Rewritten for DuckDB (before, refused): ANY/ALL of an array
		// constructor, a row IN a subquery where only its truth counts,
		// aggregates of NULL, a NULL cast to numeric.
		"SELECT count(*) FROM emp WHERE grade = ANY (ARRAY[1, 2, 3])",
		"SELECT id, grade = ANY (ARRAY[1, NULL]), grade <> ALL (ARRAY[2, 3]), grade = ANY (ARRAY[3]) FROM emp ORDER BY id",
		"SELECT id FROM emp WHERE (id, grade) IN (SELECT id, grade FROM emp WHERE salary > 5000) OR id = 2 ORDER BY id",
		"SELECT e.id FROM emp e JOIN nums n ON (n.id, n.x) IN (SELECT id, x FROM nums WHERE x > 0) AND n.id = e.id",
		"SELECT count(x / NULLIF(id, 0)), -sum(CAST(NULL AS DECIMAL)), avg(CAST(NULL AS INTEGER)) / 7 FROM nums",
		"SELECT avg(NULL::int) FROM nums WHERE id > 10",
		// Comparisons with averages of integers (before, refused).
		"SELECT id FROM emp WHERE grade > (SELECT avg(grade) FROM emp) ORDER BY id",
		"SELECT id, CASE WHEN grade >= (SELECT avg(e.grade) FROM emp e) THEN 'hi' ELSE 'lo' END FROM emp ORDER BY id",
		"SELECT grade FROM emp GROUP BY grade HAVING avg(id) < 3 AND -avg(id) <= -1 ORDER BY grade",
		// Names DuckDB's parser reserves and PostgreSQL's does not,
		// which PostgreSQL's text leaves unquoted.
		"CREATE TABLE event (id int PRIMARY KEY, at timestamp, by text, show int)",
		"INSERT INTO event (id, at, by, show) VALUES (1, '2024-01-02 03:04:05', 'at', 2), (2, NULL, 'show', 3)",
		"SELECT at, by AS qualify, show FROM event WHERE by <> 'by' ORDER BY at",
		"SELECT e.at FROM event e JOIN event AS pivot ON pivot.id = e.id WHERE pivot.show > 2",
		"UPDATE event SET at = at + interval '1 day' WHERE show = 2 RETURNING at",
	})
}

// TestEmbeddedDiverseSavepoints: savepoints on the diverse embedded
// cluster, which DuckDB lacks and its driver makes (it runs the
// transaction again up to the savepoint): answers as PostgreSQL's, an
// error inside a savepoint recovered by ROLLBACK TO, the block failed
// (25P02) until then, RELEASE, a savepoint that does not exist (3B001),
// DDL inside a savepoint; with the DuckDB replica secondary and primary.
func TestEmbeddedDiverseSavepoints(t *testing.T) {
	steps := []string{
		"CREATE TABLE acct (id int PRIMARY KEY, bal numeric(10,2) NOT NULL CHECK (bal >= 0))",
		"INSERT INTO acct VALUES (1, 100), (2, 50)",
		"SAVEPOINT outside",
		"BEGIN",
		"UPDATE acct SET bal = bal - 30 WHERE id = 1",
		"SAVEPOINT s1",
		"UPDATE acct SET bal = bal - 80 WHERE id = 2",
		"SELECT id, bal FROM acct ORDER BY id",
		"RELEASE SAVEPOINT s1",
		"ROLLBACK TO SAVEPOINT s1",
		"SELECT id, bal FROM acct ORDER BY id",
		"SAVEPOINT s2",
		"INSERT INTO acct VALUES (3, 10) RETURNING id, bal",
		"SAVEPOINT s3",
		"INSERT INTO acct VALUES (3, 20)",
		"ROLLBACK TO s3",
		"RELEASE s2",
		"SELECT id, bal FROM acct ORDER BY id",
		"ROLLBACK TO s2",
		"SELECT 1",
		"ROLLBACK TO s1",
		"SELECT id, bal FROM acct ORDER BY id",
		"COMMIT",
		"SELECT id, bal FROM acct ORDER BY id",
		// A savepoint rolled back to twice, the same name twice.
		"BEGIN",
		"SAVEPOINT a",
		"INSERT INTO acct VALUES (4, 4)",
		"ROLLBACK TO a",
		"INSERT INTO acct VALUES (5, 5)",
		"SAVEPOINT a",
		"DELETE FROM acct WHERE id = 1",
		"ROLLBACK TO a",
		"ROLLBACK TO a",
		"UPDATE acct SET bal = bal + 1 WHERE id = 5 RETURNING id, bal",
		"UPDATE acct SET bal = bal + 1 WHERE id <> 2",
		"SELECT id, bal FROM acct ORDER BY id",
		"COMMIT",
		"SELECT id, bal FROM acct ORDER BY id",
		// DDL inside a savepoint, undone; a failed block's COMMIT.
		"BEGIN",
		"CREATE TABLE kept (id int PRIMARY KEY)",
		"SAVEPOINT d",
		"CREATE TABLE undone (id int PRIMARY KEY)",
		"INSERT INTO kept VALUES (1)",
		"ROLLBACK TO SAVEPOINT d",
		"SELECT count(*) FROM kept",
		"SELECT count(*) FROM undone",
		"ROLLBACK TO SAVEPOINT d",
		"INSERT INTO kept VALUES (2)",
		"COMMIT",
		"SELECT id FROM kept",
		"BEGIN",
		"SAVEPOINT e",
		"INSERT INTO kept VALUES (2)",
		"COMMIT",
		"SELECT id FROM kept",
		"ROLLBACK TO SAVEPOINT e",
	}
	t.Run("duckdb-secondary", func(t *testing.T) {
		clusterAsPostgres(t, config.EmbeddedDiverse(), steps)
	})
	t.Run("duckdb-primary", func(t *testing.T) {
		r := config.EmbeddedDiverse()
		clusterAsPostgres(t, []config.Replica{r[2], r[0], r[1]}, steps)
	})
}

// TestEmbeddedDiverseAddConstraint: ALTER TABLE ... ADD FOREIGN KEY and
// PRIMARY KEY, as migrations write them (Django, pgbench), on the diverse
// embedded cluster: DuckDB has ADD PRIMARY KEY only; a foreign key (which
// the DuckDB replica does not hold) is a check of the existing rows
// there. Errors and answers are PostgreSQL's, before and after.
func TestEmbeddedDiverseAddConstraint(t *testing.T) {
	diverseAsPostgres(t, []string{
		"CREATE TABLE par (id int PRIMARY KEY, code text)",
		"CREATE TABLE ch (id int, par_id int, code text)",
		"INSERT INTO par VALUES (1, 'a'), (2, 'b')",
		"INSERT INTO ch VALUES (1, 1, 'x'), (2, NULL, 'x'), (3, 3, 'y')",
		"ALTER TABLE ch ADD CONSTRAINT ch_par_fk FOREIGN KEY (par_id) REFERENCES par (id)",
		"DELETE FROM ch WHERE id = 3",
		"ALTER TABLE ch ADD CONSTRAINT ch_par_fk FOREIGN KEY (par_id) REFERENCES par (id) DEFERRABLE INITIALLY DEFERRED",
		"UPDATE ch SET code = 'z' WHERE id = 2",
		"INSERT INTO ch VALUES (4, 1, NULL), (5, 2, NULL)",
		"INSERT INTO ch VALUES (4, 1, NULL)",
		"ALTER TABLE ch ADD PRIMARY KEY (id)",
		"INSERT INTO ch VALUES (1, 2, 'w')",
		"UPDATE ch SET code = code || '!' WHERE code IS NOT NULL",
		"SELECT id, par_id, code FROM ch ORDER BY id",
		"CREATE TABLE nopk (id int, v int)",
		"INSERT INTO nopk VALUES (1, 1), (2, 5), (2, 1)",
		"ALTER TABLE nopk ADD PRIMARY KEY (id)",
		"ALTER TABLE nopk ADD FOREIGN KEY (v) REFERENCES par",
		"UPDATE nopk SET v = 1, id = 3 WHERE v = 5",
		"ALTER TABLE nopk ADD FOREIGN KEY (v) REFERENCES par",
		"ALTER TABLE nopk ADD PRIMARY KEY (id)",
		"INSERT INTO nopk VALUES (3, 7)",
		"DELETE FROM par WHERE id = 2",
		"SELECT id, v FROM nopk ORDER BY id",
	})
}

// TestEmbeddedDiverseAddUnique: ALTER TABLE ... ADD [CONSTRAINT] UNIQUE,
// which DuckDB has no ALTER TABLE for (it was refused, 0A000: Django's,
// Knex's migrations), is the DuckDB replica's table rebuilt with the
// constraint: duplicates fail with 23505 as on PostgreSQL, later
// duplicates too, NULLs do not clash, and the table can still be altered.
func TestEmbeddedDiverseAddUnique(t *testing.T) {
	diverseAsPostgres(t, []string{
		"CREATE TABLE vendor (id serial PRIMARY KEY, name varchar(20) NOT NULL, code text DEFAULT 'x', n numeric(6,2) CHECK (n > 0))",
		"INSERT INTO vendor (name, n) VALUES ('a', 1.5), ('b', 2), ('b', 3)",
		"ALTER TABLE vendor ADD CONSTRAINT vendor_name_unique UNIQUE (name)",
		"DELETE FROM vendor WHERE id = 3",
		"ALTER TABLE vendor ADD CONSTRAINT vendor_name_unique UNIQUE (name)",
		"INSERT INTO vendor (name, n) VALUES ('b', 4)",
		"INSERT INTO vendor (name, code, n) VALUES ('c', NULL, 5), ('d', NULL, 6)",
		"ALTER TABLE vendor ADD UNIQUE (code)",
		"INSERT INTO vendor (name, code, n) VALUES ('e', NULL, 7)",
		"INSERT INTO vendor (name, code, n) VALUES ('f', 'x', 7)",
		"INSERT INTO vendor (name, n) VALUES ('g', -1)",
		"ALTER TABLE vendor ADD COLUMN extra int",
		"ALTER TABLE vendor ALTER COLUMN extra SET DEFAULT 9",
		"INSERT INTO vendor (name, code, n) VALUES ('h', 'h', 8)",
		"BEGIN",
		"CREATE TABLE tag (id int PRIMARY KEY, label text)",
		"INSERT INTO tag VALUES (1, 'p'), (2, 'q')",
		"ALTER TABLE tag ADD CONSTRAINT tag_label_key UNIQUE (label)",
		"INSERT INTO tag VALUES (3, 'q')",
		"ROLLBACK",
		"SELECT id, name, code, n, extra FROM vendor ORDER BY id",
	})
}

// TestEmbeddedDiverseOnUpdateCascade: a foreign key ON UPDATE CASCADE
// (every key Sequelize makes) is taken on the diverse embedded cluster,
// where its CREATE TABLE was refused; rows are written, checked and
// deleted as on PostgreSQL, and only an UPDATE of the referenced key,
// whose action the DuckDB replica (which holds no foreign keys) would not
// do, is refused (0A000).
func TestEmbeddedDiverseOnUpdateCascade(t *testing.T) {
	diverseAsPostgres(t, []string{
		"CREATE TABLE owner (id serial PRIMARY KEY, name text)",
		"CREATE TABLE pet (id serial PRIMARY KEY, owner_id int REFERENCES owner (id) ON DELETE CASCADE ON UPDATE CASCADE, name text)",
		"INSERT INTO owner (name) VALUES ('a'), ('b')",
		"INSERT INTO pet (owner_id, name) VALUES (1, 'x'), (2, 'y'), (2, 'z')",
		"INSERT INTO pet (owner_id, name) VALUES (3, 'w')",
		"UPDATE owner SET name = 'c' WHERE id = 2",
		"UPDATE pet SET owner_id = 1 WHERE name = 'z'",
		"INSERT INTO owner (id, name) VALUES (1, 'd') ON CONFLICT (id) DO UPDATE SET name = excluded.name",
		"DELETE FROM owner WHERE id = 2",
		"SELECT p.id, p.name, o.name FROM pet p JOIN owner o ON o.id = p.owner_id ORDER BY p.id",
	})
	cfg := config.EmbeddedWith(config.EmbeddedDiverse())
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	addr, _ := start(t, cfg)
	ctx := context.Background()
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE owner (id int PRIMARY KEY)")
	mustExec(t, c, "CREATE TABLE pet (id int PRIMARY KEY, owner_id int REFERENCES owner ON UPDATE CASCADE)")
	for _, sql := range []string{
		"UPDATE owner SET id = 2 WHERE id = 1",
		"INSERT INTO owner VALUES (1) ON CONFLICT (id) DO UPDATE SET id = 5",
	} {
		if _, err := c.Exec(ctx, sql); sqlstate(err) != "0A000" {
			t.Errorf("%s: %v, want 0A000", sql, err)
		}
	}
}

// TestEmbeddedDiverseDropColumnCascade: ALTER TABLE ... DROP COLUMN ...
// CASCADE (Django's RemoveField) of a column nothing depends on is a
// plain DROP COLUMN on the diverse embedded cluster too, where DuckDB's
// translation refused it (0A000); with a foreign key referencing the
// column it stays refused.
func TestEmbeddedDiverseDropColumnCascade(t *testing.T) {
	diverseAsPostgres(t, []string{
		"CREATE TABLE item (id int PRIMARY KEY, note text, qty int)",
		"INSERT INTO item VALUES (1, 'a', 2), (2, 'b', 3)",
		"ALTER TABLE item DROP COLUMN note CASCADE",
		"SELECT * FROM item ORDER BY id",
	})
	cfg := config.EmbeddedWith(config.EmbeddedDiverse())
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	addr, _ := start(t, cfg)
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE p (id int PRIMARY KEY, code int UNIQUE)")
	mustExec(t, c, "CREATE TABLE ch (id int PRIMARY KEY, code int REFERENCES p (code))")
	if _, err := c.Exec(context.Background(), "ALTER TABLE p DROP COLUMN code CASCADE"); sqlstate(err) != "0A000" {
		t.Errorf("DROP COLUMN ... CASCADE of a referenced column: %v, want 0A000", err)
	}
}

// TestEmbeddedDiverseLikeEscape: LIKE and ILIKE with ESCAPE, of one
// character or none (Hibernate writes an empty ESCAPE), answer on the diverse
// embedded cluster as on PostgreSQL, where DuckDB's translation refused
// them (0A000).
func TestEmbeddedDiverseLikeEscape(t *testing.T) {
	diverseAsPostgres(t, []string{
		"CREATE TABLE w (id int PRIMARY KEY, s text)",
		`INSERT INTO w VALUES (1, 'a_b'), (2, 'axb'), (3, 'a\b'), (4, 'a%b'), (5, 'A_B'), (6, 'a!b')`,
		"SELECT id FROM w WHERE s LIKE 'a!_b' ESCAPE '!' ORDER BY id",
		"SELECT id FROM w WHERE s LIKE 'a\\_b' ESCAPE '' ORDER BY id",
		"SELECT id FROM w WHERE s LIKE 'a_b' ESCAPE '' ORDER BY id",
		"SELECT id FROM w WHERE s NOT LIKE 'a#%b' ESCAPE '#' ORDER BY id",
		"SELECT id FROM w WHERE s ILIKE 'a#_b' ESCAPE '#' ORDER BY id",
		"SELECT id FROM w WHERE s LIKE 'a\\_b' ORDER BY id",
	})
}

// TestEmbeddedDiversePatternOpsIndex: an index with a pattern operator
// class (Django's index of every text field it indexes) is taken on the
// diverse embedded cluster, where DuckDB's translation refused it.
func TestEmbeddedDiversePatternOpsIndex(t *testing.T) {
	diverseAsPostgres(t, []string{
		"CREATE TABLE slug (id int PRIMARY KEY, s varchar(20), t text)",
		"INSERT INTO slug VALUES (1, 'ab', 'x'), (2, 'ac', 'y')",
		"CREATE INDEX slug_s_like ON slug (s varchar_pattern_ops)",
		"CREATE INDEX slug_t_like ON slug (t text_pattern_ops)",
		"INSERT INTO slug VALUES (3, 'ad', 'x')",
		"SELECT id FROM slug WHERE s LIKE 'a%' ORDER BY id",
	})
}

// TestEmbeddedDiverseIndexedAlter: DuckDB cannot alter a table that has an
// index made by CREATE INDEX but to add a column or change a default;
// such an ALTER TABLE or rename is refused (0A000) on the diverse
// embedded cluster, where before the DuckDB replica failed it alone
// (2BP01) and was taken out.
func TestEmbeddedDiverseIndexedAlter(t *testing.T) {
	cfg := config.EmbeddedWith(config.EmbeddedDiverse())
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	addr, srv := start(t, cfg)
	ctx := context.Background()
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE ix (id int PRIMARY KEY, a int, b int)")
	mustExec(t, c, "CREATE INDEX ix_a ON ix (a)")
	mustExec(t, c, "ALTER TABLE ix ADD COLUMN c int")
	mustExec(t, c, "ALTER TABLE ix ALTER COLUMN c SET DEFAULT 3")
	for _, sql := range []string{
		"ALTER TABLE ix ALTER COLUMN b SET NOT NULL",
		"ALTER TABLE ix DROP COLUMN b",
		"ALTER TABLE ix RENAME COLUMN b TO bb",
		"ALTER TABLE ix RENAME TO ix2",
		"ALTER TABLE ix ADD COLUMN d int NOT NULL DEFAULT 0",
	} {
		if _, err := c.Exec(ctx, sql); sqlstate(err) != "0A000" {
			t.Errorf("%s: %v, want 0A000", sql, err)
		}
	}
	mustExec(t, c, "DROP INDEX ix_a")
	mustExec(t, c, "ALTER TABLE ix DROP COLUMN b")
	mustExec(t, c, "INSERT INTO ix (id, a) VALUES (1, 2)")
	idle, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := srv.Cluster().Idle(idle); err != nil {
		t.Fatal(err)
	}
	assertReplicas(t, addr, 3)
	assertSameTables(t, cfg)
}

package sqlan

import (
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		sql     string
		kind    Kind
		verb    string
		rows    bool
		ordered bool
	}{
		{"SELECT 1", Read, "SELECT", true, false},
		{"select a from t order by a", Read, "SELECT", true, true},
		{"SELECT * FROM t WHERE id = 1 FOR UPDATE", Write, "SELECT", true, false},
		{"VALUES (1), (2)", Read, "SELECT", true, false},
		{"INSERT INTO t VALUES (1)", Write, "INSERT", false, false},
		{"INSERT INTO t VALUES (1) RETURNING id", Write, "INSERT", true, false},
		{"UPDATE t SET a = 1", Write, "UPDATE", false, false},
		{"DELETE FROM t", Write, "DELETE", false, false},
		{"CREATE TABLE t (a int)", DDL, "CREATE TABLE", false, false},
		{"DROP TABLE t", DDL, "DROP TABLE", false, false},
		{"CREATE INDEX i ON t (a)", DDL, "CREATE INDEX", false, false},
		{"BEGIN", Begin, "BEGIN", false, false},
		{"START TRANSACTION", Begin, "START TRANSACTION", false, false},
		{"begin isolation level serializable read only", Begin, "BEGIN", false, false},
		{"COMMIT", Commit, "COMMIT", false, false},
		{"END", Commit, "COMMIT", false, false},
		{"ROLLBACK", Rollback, "ROLLBACK", false, false},
		{"ABORT", Rollback, "ROLLBACK", false, false},
		{"SET extra_float_digits = 3", Set, "SET", false, false},
		{"SET TRANSACTION ISOLATION LEVEL READ COMMITTED", Set, "SET", false, false},
		{"RESET ALL", Set, "RESET", false, false},
		{"SHOW TimeZone", Show, "SHOW", true, false},
	}
	for _, c := range cases {
		st, err := ParseOne(c.sql)
		if err != nil {
			t.Errorf("%q: %v", c.sql, err)
			continue
		}
		if st.Kind != c.kind || st.Verb != c.verb || st.ReturnsRows != c.rows || st.Ordered != c.ordered {
			t.Errorf("%q: got kind=%v verb=%q rows=%v ordered=%v", c.sql, st.Kind, st.Verb, st.ReturnsRows, st.Ordered)
		}
	}
}

func TestBeginOptions(t *testing.T) {
	st, err := ParseOne("BEGIN ISOLATION LEVEL SERIALIZABLE, READ ONLY")
	if err != nil {
		t.Fatal(err)
	}
	if st.TxOptions != (driver.TxOptions{Isolation: "serializable", ReadOnly: true}) {
		t.Errorf("options = %+v", st.TxOptions)
	}
	st, _ = ParseOne("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
	if !st.SetTransaction || st.TxOptions.Isolation != "read committed" {
		t.Errorf("SET TRANSACTION: %+v", st)
	}
}

func TestRefused(t *testing.T) {
	for _, sql := range []string{
		"SAVEPOINT a", "RELEASE SAVEPOINT a", "ROLLBACK TO SAVEPOINT a",
		"COPY t FROM STDIN", "COPY t TO STDOUT", "PREPARE TRANSACTION 'x'",
		"SELECT 1 INTO t2", "CREATE FUNCTION f() RETURNS int AS 'select 1' LANGUAGE sql",
		"LISTEN x",
	} {
		_, err := Parse(sql)
		if pgerr.Code(err) != pgerr.FeatureNotSupported {
			t.Errorf("%q: got %v, want 0A000", sql, err)
		}
	}
	if _, err := Parse("SELEC 1"); pgerr.Code(err) != pgerr.SyntaxError {
		t.Errorf("syntax error: got %v", err)
	}
	if _, err := ParseOne("SELECT 1; SELECT 2"); pgerr.Code(err) != pgerr.SyntaxError {
		t.Errorf("two statements in ParseOne: got %v", err)
	}
}

func TestSplitAndEmpty(t *testing.T) {
	sts, err := Parse("select 1; insert into t values ('a;b');; -- c\n update t set a = 2")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"select 1", "insert into t values ('a;b')", "-- c\n update t set a = 2"}
	if len(sts) != len(want) {
		t.Fatalf("got %d statements", len(sts))
	}
	if my, _ := sts[2].For(driver.MySQL); my != "UPDATE `t` SET `a` = 2" {
		t.Errorf("comment not stripped for MySQL: %q", my)
	}
	for i, st := range sts {
		if st.SQL != want[i] {
			t.Errorf("statement %d = %q, want %q", i, st.SQL, want[i])
		}
	}
	for _, empty := range []string{"", "  ", ";", " ; ; ", "-- only a comment"} {
		sts, err := Parse(empty)
		if err != nil || len(sts) != 0 {
			t.Errorf("%q: got %d statements, %v", empty, len(sts), err)
		}
	}
}

func TestPlaceholders(t *testing.T) {
	st, err := ParseOne("UPDATE t SET a = $2, b = '$1' WHERE id = $1 AND c = $2 -- $3")
	if err != nil {
		t.Fatal(err)
	}
	if st.NumParams != 2 {
		t.Errorf("NumParams = %d", st.NumParams)
	}
	my, order := st.For(driver.MySQL)
	if my != "UPDATE `t` SET `a` = ?, `b` = '$1' WHERE ((`id` = ?) AND (`c` = ?))" {
		t.Errorf("mysql: %q", my)
	}
	if len(order) != 3 || order[0] != 1 || order[1] != 0 || order[2] != 1 {
		t.Errorf("mysql order: %v", order)
	}
	lite, lorder := st.For(driver.SQLite)
	if lite != `UPDATE "t" SET "a" = ?2, "b" = '$1' WHERE (("id" = ?1) AND ("c" = ?2))` || lorder != nil {
		t.Errorf("sqlite: %q %v", lite, lorder)
	}
	pg, porder := st.For(driver.Postgres)
	if pg != st.SQL || porder != nil {
		t.Errorf("postgres: %q", pg)
	}
}

func TestCache(t *testing.T) {
	c := NewCache(2, DefaultEnv.Replicas, nil)
	a1, _ := c.Parse("select 1")
	a2, _ := c.Parse("select 1")
	if a1[0] != a2[0] {
		t.Error("second parse of the same text was not served from the cache")
	}
	c.Parse("select 2")
	c.Parse("select 3") // evicts "select 1"
	a3, _ := c.Parse("select 1")
	if a3[0] == a1[0] {
		t.Error("cache kept more than its capacity")
	}
	if _, err := c.Parse("selec"); err == nil {
		t.Error("syntax error not reported")
	}
}

func TestDescribe(t *testing.T) {
	for sql, want := range map[string]string{
		"SELECT a, b FROM t WHERE id = $1 FOR UPDATE":                "SELECT * FROM (SELECT a, b FROM t WHERE id = $1) shepherd_describe LIMIT 0",
		"INSERT INTO t (a) VALUES ($1) RETURNING id, a * 2 AS twice": "SELECT id, a * 2 AS twice FROM t LIMIT 0",
		"UPDATE acc SET b = b + 1 WHERE id = 3 RETURNING b":          "SELECT b FROM acc LIMIT 0",
	} {
		// MariaDB has no UPDATE ... RETURNING: describe for the others.
		st, err := ParseOneIn(sql, &Env{Replicas: map[driver.Dialect][]string{driver.Postgres: {"p"}, driver.SQLite: {"s"}}})
		if err != nil {
			t.Fatal(err)
		}
		d := st.Describe()
		if d == nil || d.SQL != want {
			t.Errorf("%q: describe = %+v, want %q", sql, d, want)
		}
	}
	for _, sql := range []string{"INSERT INTO t VALUES (1)", "SHOW TimeZone", "BEGIN"} {
		st, _ := ParseOne(sql)
		if st.Describe() != nil {
			t.Errorf("%q: describe form for a statement without rows", sql)
		}
	}
}

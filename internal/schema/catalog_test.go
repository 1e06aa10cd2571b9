package schema

import (
	"os"
	"path/filepath"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

func apply(t *testing.T, c *Catalog, q string) {
	t.Helper()
	tree, err := pg_query.Parse(q)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Apply(tree.Stmts[0].Stmt); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestCatalogFills: the columns shepherd fills are recognised, and
// defaults that would differ between replicas are refused.
func TestCatalogFills(t *testing.T) {
	c, _ := Open("")
	apply(t, c, "CREATE TABLE t (id bigserial PRIMARY KEY, k int GENERATED ALWAYS AS IDENTITY, at timestamptz DEFAULT now(), d date DEFAULT current_date, u uuid DEFAULT gen_random_uuid(), n numeric(10,2) DEFAULT 0)")
	tb := c.Snapshot().Table("t")
	want := map[string]Fill{"id": FillSerial, "k": FillSerial, "at": FillNow, "d": FillDate, "u": FillUUID, "n": FillNone}
	for col, f := range want {
		if got := tb.Column(col).Fill; got != f {
			t.Errorf("%s: fill %v, want %v", col, got, f)
		}
	}
	if !tb.Column("k").Always || tb.Column("id").Always {
		t.Error("GENERATED ALWAYS not told apart")
	}
	if len(tb.Key) != 1 || tb.Key[0] != "id" {
		t.Errorf("key %v", tb.Key)
	}
	for _, bad := range []string{
		"CREATE TABLE b (a int DEFAULT nextval('s') + 1)",
		"CREATE TABLE b (a text DEFAULT nextval('s'))",
		"CREATE TABLE b (a int DEFAULT nextval(s))",
		"CREATE TABLE b (a timestamptz DEFAULT now() + interval '1 day')",
		"CREATE TABLE b (a numeric[])",
	} {
		tree, _ := pg_query.Parse(bad)
		if _, err := TableOf(tree.Stmts[0].Stmt.GetCreateStmt()); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestSequencesSurviveRestart: values are never handed out twice, also
// when shepherd stops without a word; they follow renames.
func TestSequencesSurviveRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.json")
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, c, "CREATE TABLE t (id serial PRIMARY KEY, v text)")
	var last int64
	for i := int64(1); i <= 5; i++ {
		v, err := c.Next("t", "id", 1)
		if err != nil || v != i {
			t.Fatalf("value %d: %d, %v", i, v, err)
		}
		last = v
	}
	apply(t, c, "ALTER TABLE t RENAME TO u")
	// A new Catalog on the same file is a restart after a crash.
	c2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if c2.Snapshot().Table("u") == nil || c2.Snapshot().Table("t") != nil {
		t.Fatal("rename not kept")
	}
	v, err := c2.Next("u", "id", 1)
	if err != nil || v <= last {
		t.Errorf("after restart: %d, %v; want above %d", v, err, last)
	}
	if err := c2.Restart("u"); err != nil {
		t.Fatal(err)
	}
	if v, _ := c2.Next("u", "id", 1); v != 1 {
		t.Errorf("after RESTART IDENTITY: %d", v)
	}
	apply(t, c2, "DROP TABLE u")
	if c2.Snapshot().Table("u") != nil {
		t.Error("dropped table still known")
	}
}

// TestQuotedNames: a table created with a quoted, mixed-case name is
// found under that name (the parser folds only unquoted names).
func TestQuotedNames(t *testing.T) {
	c, _ := Open("")
	apply(t, c, `CREATE TABLE "Quoted" (id serial PRIMARY KEY)`)
	if c.Snapshot().Table("Quoted") == nil || c.Snapshot().Table("quoted") != nil {
		t.Error(`"Quoted" not found under its own name`)
	}
}

// TestCatalogLogMark: the barriers of logged transactions whose changes
// the catalog holds are kept in the file with the changes, in one write;
// Settle folds them into the floor; a file of an older shepherd (no
// mark) is taken to hold the whole log.
func TestCatalogLogMark(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.json")
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := c.Mark(); m.Holds(1) {
		t.Fatalf("a new catalog holds barrier 1: %+v", m)
	}
	parse := func(q string) *pg_query.Node {
		tree, err := pg_query.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		return tree.Stmts[0].Stmt
	}
	if err := c.Commit(7, []*pg_query.Node{parse("CREATE TABLE a (id serial PRIMARY KEY)"), parse("CREATE TABLE b (x int)")}); err != nil {
		t.Fatal(err)
	}
	c, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := c.Mark(); !m.Holds(7) || m.Holds(5) || c.Snapshot().Table("b") == nil {
		t.Fatalf("after reopening: mark %+v, table b %v", m, c.Snapshot().Table("b"))
	}
	if err := c.Settle(9); err != nil {
		t.Fatal(err)
	}
	if m := c.Mark(); !m.Holds(5) || m.Holds(10) || len(m.Applied) != 0 {
		t.Fatalf("after Settle(9): %+v", m)
	}
	// An older shepherd's file.
	if err := os.WriteFile(path, []byte(`{"schema": null, "sequences": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err = Open(path); err != nil {
		t.Fatal(err)
	}
	if m := c.Mark(); !m.Holds(1 << 60) {
		t.Fatalf("older file: %+v", m)
	}
}

// TestCommitBlock: a block's own sequence states replace the committed
// ones at COMMIT, after its DDL; a restarted counter others drew from
// meanwhile continues past their values.
func TestCommitBlock(t *testing.T) {
	c, err := Open(filepath.Join(t.TempDir(), "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	apply(t, c, "CREATE TABLE keep (id serial PRIMARY KEY)")
	apply(t, c, "CREATE TABLE r (id serial PRIMARY KEY)")
	for range 3 {
		if _, err := c.Next("keep", "id", 1); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Next("r", "id", 1); err != nil {
			t.Fatal(err)
		}
	}
	base := c.SerialNext("r", "id")
	if _, err := c.Next("r", "id", 1); err != nil { // another session, meanwhile
		t.Fatal(err)
	}
	trees := func(sqls ...string) []*pg_query.Node {
		var out []*pg_query.Node
		for _, q := range sqls {
			r, err := pg_query.Parse(q)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r.Stmts[0].Stmt)
		}
		return out
	}
	err = c.CommitBlock(0, trees("DROP TABLE keep", "CREATE TABLE keep (id serial PRIMARY KEY)", "CREATE SEQUENCE n"),
		&BlockSeqs{Named: map[string]SeqState{"n": {Last: 7, Called: true}},
			Serial: map[string]SerialStart{"keep.id": {Next: 3}, "r.id": {Next: 2, From: "r.id", Base: base}}})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Next("keep", "id", 1); v != 3 {
		t.Errorf("keep made again in the block: next %d, want 3", v)
	}
	if v, _ := c.Next("r", "id", 1); v != 5 {
		t.Errorf("r restarted while another session drew 4: next %d, want 5", v)
	}
	if v, _ := c.SeqNext("n"); v != 8 {
		t.Errorf("n: next %d, want 8", v)
	}
}

// TestPendingBlock: what Pending records is in the file until
// CommitBlock of its transaction or DropPending, and only then.
func TestPendingBlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.json")
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	p := PendingBlock{Txn: 7, Statements: []string{"CREATE SEQUENCE n"}, Named: map[string]SeqState{"n": {Last: 4, Called: true}}}
	if err := c.Pending(p); err != nil {
		t.Fatal(err)
	}
	if err := c.Pending(PendingBlock{Txn: 8}); err != nil {
		t.Fatal(err)
	}
	if c, err = Open(path); err != nil { // a crash
		t.Fatal(err)
	}
	if got := c.PendingBlocks(); len(got) != 2 || got[7].Named["n"].Last != 4 || got[7].Statements[0] != "CREATE SEQUENCE n" {
		t.Fatalf("pending after a restart: %+v", got)
	}
	if err := c.DropPending(8); err != nil {
		t.Fatal(err)
	}
	r, err := pg_query.Parse("CREATE SEQUENCE n")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CommitBlock(3, []*pg_query.Node{r.Stmts[0].Stmt}, &BlockSeqs{Txn: 7, Named: p.Named}); err != nil {
		t.Fatal(err)
	}
	if c, err = Open(path); err != nil {
		t.Fatal(err)
	}
	if got := c.PendingBlocks(); len(got) != 0 {
		t.Errorf("pending after CommitBlock and DropPending: %+v", got)
	}
	if v, _ := c.SeqNext("n"); v < 5 {
		t.Errorf("n after CommitBlock: %d, want at least 5", v)
	}
}

// TestIndexColumnChanges: an index whose WHERE or expression names a
// dropped column goes with it, as on PostgreSQL; a renamed column is
// renamed in the recorded definitions' WHERE and expressions too.
func TestIndexColumnChanges(t *testing.T) {
	c, _ := Open("")
	apply(t, c, "CREATE TABLE u (id int PRIMARY KEY, a int, b text, c int)")
	apply(t, c, "CREATE UNIQUE INDEX u_a ON u (a) WHERE c > 0")
	apply(t, c, "CREATE INDEX u_e ON u ((a + c))")
	apply(t, c, "CREATE INDEX u_b ON u (a) WHERE b <> 'z' AND u.b IS NOT NULL")
	apply(t, c, "CREATE INDEX u_id ON u (id)")
	apply(t, c, "ALTER TABLE u DROP COLUMN c")
	s := c.Snapshot()
	for _, ix := range []string{"u_a", "u_e"} {
		if _, ok := s.Indexes[ix]; ok || s.IndexDefs[ix] != "" {
			t.Errorf("index %s kept after its column was dropped", ix)
		}
	}
	apply(t, c, "ALTER TABLE u RENAME COLUMN b TO bb")
	s = c.Snapshot()
	if want := "CREATE INDEX u_b ON u USING btree (a) WHERE bb <> 'z' AND u.bb IS NOT NULL"; s.IndexDefs["u_b"] != want {
		t.Errorf("u_b after the rename: %q; want %q", s.IndexDefs["u_b"], want)
	}
	if !s.IndexNames("u_b", "bb") || s.IndexNames("u_b", "b") || !s.IndexNames("u_id", "id") {
		t.Error("IndexNames does not follow the definition")
	}
}

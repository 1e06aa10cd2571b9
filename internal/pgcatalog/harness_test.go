package pgcatalog

import (
	"context"
	"os"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/schema"
)

func snapshotOf(t *testing.T, ddl string) *schema.Snapshot {
	t.Helper()
	tree, err := pg_query.Parse(ddl)
	if err != nil {
		t.Fatal(err)
	}
	var snap *schema.Snapshot
	for _, raw := range tree.Stmts {
		next, err := snap.Apply(raw.Stmt)
		if err != nil {
			t.Fatal(err)
		}
		snap = next
	}
	return snap
}

func TestHarness(t *testing.T) {
	path := os.Getenv("PGCAT_QUERIES")
	if path == "" {
		t.Skip("PGCAT_QUERIES not set")
	}
	ddl, _ := os.ReadFile("testdata/schema.sql")
	snap := snapshotOf(t, string(ddl))
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	var child string
	e.mu.Lock()
	e.load(context.Background(), snap)
	e.conn.QueryRowContext(context.Background(), "SELECT oid FROM pg_class WHERE relname = 'parent'").Scan(&child)
	e.mu.Unlock()
	b = []byte(strings.ReplaceAll(string(b), "OIDPARENT", child))
	for _, q := range strings.Split(string(b), "\n;;\n") {
		q = strings.TrimSpace(q)
		if q == "" {
			continue
		}
		tree, err := pg_query.Parse(q)
		if err != nil {
			t.Errorf("parse %s: %v", q, err)
			continue
		}
		a, err := e.Query(context.Background(), tree.Stmts[0].Stmt, nil, snap, Session{User: "postgres"})
		if err != nil {
			e.mu.Lock()
			p, _ := e.prepare(context.Background(), tree.Stmts[0].Stmt, 0, Session{})
			e.mu.Unlock()
			if p != nil {
				t.Logf("SQLite: %s", p.sql)
			}
			t.Errorf("%.80s: %v", q, err)
			continue
		}
		var cols []string
		for _, c := range a.Columns {
			cols = append(cols, c.Name+":"+typeByOID[c.OID].name)
		}
		t.Logf("%.60q\n  %s", q, strings.Join(cols, " | "))
		for _, r := range a.Rows {
			var vs []string
			for _, v := range r {
				if v.Null {
					vs = append(vs, "NULL")
				} else {
					vs = append(vs, v.Text)
				}
			}
			t.Logf("  %s", strings.Join(vs, " | "))
		}
	}
}

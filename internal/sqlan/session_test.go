package sqlan

import (
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestSessionStatements: the session statements and a SELECT of session
// functions are answered by shepherd alone (Kind Local), with the
// command tags and result columns PostgreSQL gives them.
func TestSessionStatements(t *testing.T) {
	for _, c := range []struct{ sql, verb, op, name string }{
		{"DEALLOCATE ALL", "DEALLOCATE ALL", "deallocate", ""},
		{"DEALLOCATE PREPARE ALL", "DEALLOCATE ALL", "deallocate", ""},
		{"DEALLOCATE s1", "DEALLOCATE", "deallocate", "s1"},
		{"DISCARD ALL", "DISCARD ALL", "discard", "all"},
		{"DISCARD TEMP", "DISCARD TEMP", "discard", "temp"},
		{"CLOSE ALL", "CLOSE CURSOR ALL", "close", ""},
		{"CLOSE c", "CLOSE CURSOR", "close", "c"},
		{"UNLISTEN *", "UNLISTEN", "unlisten", ""},
		{"SELECT version()", "SELECT", "select", ""},
		{"SELECT * FROM current_schema()", "SELECT", "select", ""},
		{"SET CONSTRAINTS ALL DEFERRED", "SET CONSTRAINTS", "constraints", ""},
		{"DECLARE c SCROLL CURSOR WITH HOLD FOR SELECT 1", "DECLARE CURSOR", "declare", "c"},
		{"FETCH BACKWARD 2 FROM c", "FETCH", "fetch", "c"},
		{"MOVE LAST IN c", "MOVE", "fetch", "c"},
	} {
		st, err := ParseOne(c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if st.Kind != Local || st.Verb != c.verb || st.Session.Op != c.op || st.Session.Name != c.name {
			t.Errorf("%s: kind %v verb %q op %+v", c.sql, st.Kind, st.Verb, st.Session)
		}
	}
	st, err := ParseOne("SELECT current_user, user AS u, pg_catalog.version(), current_setting($1), pg_try_advisory_lock(1, 2)")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var oids []uint32
	for _, c := range st.Session.Calls {
		names = append(names, c.Column.Name)
		oids = append(oids, c.Column.OID)
	}
	if strings.Join(names, " ") != "current_user u version current_setting pg_try_advisory_lock" ||
		oids[0] != answer.OIDName || oids[2] != answer.OIDText || oids[4] != answer.OIDBool {
		t.Errorf("columns %v %v", names, oids)
	}
	if got := st.ParamOIDs(); len(got) != 1 || got[0] != answer.OIDText {
		t.Errorf("parameter types %v, want text", got)
	}
	if st.Forms() != nil {
		t.Errorf("a Local statement is sent to replicas: %+v", st.Forms())
	}
	d, err := ParseOne("DECLARE c NO SCROLL CURSOR FOR SELECT $1::int")
	if err != nil || d.Session.Cursor != (CursorOptions{NoScroll: true}) || d.Inner == nil || d.Inner.Kind != Read || d.NumParams != 1 {
		t.Errorf("DECLARE: %+v %v", d, err)
	}
	if f, _ := ParseOne("FETCH LAST c"); f.Session.Fetch != (Fetch{Direction: FetchAbsolute, Count: -1}) {
		t.Errorf("FETCH LAST: %+v", f.Session.Fetch)
	}
	if b, err := ParseOne("DECLARE c BINARY CURSOR FOR SELECT 1"); err != nil || !b.Session.Cursor.Binary {
		t.Errorf("BINARY cursor: %+v %v", b, err)
	}
	// With PostgreSQL replicas only, DEFERRABLE constraints can exist:
	// SET CONSTRAINTS would have to reach them.
	pgOnly := &Env{Replicas: map[driver.Dialect][]string{driver.Postgres: {"pg"}}}
	if _, err := ParseIn("SET CONSTRAINTS ALL DEFERRED", pgOnly); pgerr.Code(err) != pgerr.FeatureNotSupported {
		t.Errorf("SET CONSTRAINTS with PostgreSQL replicas only: %v, want 0A000", err)
	}
	// SET LOCAL is a SET that lasts for the block.
	if st, err := ParseOne("SET LOCAL search_path = a"); err != nil || st.Kind != Set || !st.SetLocal {
		t.Errorf("SET LOCAL: %+v %v", st, err)
	}
	if st, _ := ParseOne(`SET search_path = "$user", public, "My", 'a b'`); st.SetValue != `"$user", public, "My", "a b"` {
		t.Errorf("search_path %q", st.SetValue)
	}
}

// TestSessionFunctionsPinned: inside a statement replicas run, a session
// function becomes a pinned parameter on every replica (one replica
// too: its engine's value is not shepherd's); one that changes state is
// refused there; a call PostgreSQL would not find is its 42883.
func TestSessionFunctionsPinned(t *testing.T) {
	one := &Env{Replicas: map[driver.Dialect][]string{driver.SQLite: {"lite"}}}
	for _, env := range []*Env{DefaultEnv, one} {
		st, err := ParseOneIn("INSERT INTO t VALUES (current_user, current_setting('DateStyle'), pg_backend_pid(), $1)", env)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Pins) != 3 || st.Pins[0].Kind != PinSession || st.Pins[0].Call.Func != "current_user" ||
			st.Pins[1].Call.Args[0].Value != "DateStyle" || st.Pins[2].Call.Func != "pg_backend_pid" {
			t.Errorf("pins %+v", st.Pins)
		}
		for _, f := range st.Forms() {
			if strings.Contains(strings.ToLower(f.SQL), "current_user") || strings.Contains(f.SQL, "pg_backend_pid") {
				t.Errorf("%s receives the call itself: %s", f.Dialect, f.SQL)
			}
		}
	}
	for sql, code := range map[string]string{
		"SELECT pg_advisory_lock(id) FROM t":          pgerr.FeatureNotSupported,
		"SELECT pg_sleep(1), 1":                       pgerr.FeatureNotSupported,
		"SELECT set_config('a.b', x, false) FROM t":   pgerr.FeatureNotSupported,
		"UPDATE t SET a = pg_try_advisory_lock(1)":    pgerr.FeatureNotSupported,
		"SELECT current_setting(x) FROM t":            pgerr.FeatureNotSupported,
		"SELECT pg_advisory_lock(1.5)":                pgerr.UndefinedFunction,
		"SELECT * FROM t, current_schema() s":         pgerr.FeatureNotSupported,
		"SELECT s FROM current_schema() s WHERE true": pgerr.FeatureNotSupported,
		"SELECT version(1)":                           pgerr.UndefinedFunction,
		"SELECT current_setting(true)":                pgerr.UndefinedFunction,
	} {
		if _, err := Parse(sql); pgerr.Code(err) != code {
			t.Errorf("%s: %v, want %s", sql, err, code)
		}
	}
}

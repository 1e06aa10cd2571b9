package server

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/dialect"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// randomJSON writes a random JSON document in one of the many texts of
// it: white space anywhere, escapes, duplicate keys, numbers with
// exponents and trailing zeros; one in eight is cut or spliced so that
// PostgreSQL refuses most of those.
func randomJSON(rng *rand.Rand, depth int) string {
	ws := func() string { return []string{"", "", " ", "\n", "\t ", "\r"}[rng.IntN(6)] }
	strs := []string{`"a"`, `"b"`, `"ab"`, `"aa"`, `"B"`, `""`, `"\u0041"`, `"\u00e9"`, `"é"`, `"\ud83d\ude00"`, `"\/"`, `"x\"y"`, `"\\"`,
		`"\u001f"`, `"\b\f\n\r\t"`, `"\u007f"`, `"\ud83d"`, `"\u0000"`, `"\x"`, `"\u12"`, "\"tab\there\"", `"a b"`, `"é1"`, `"\uDE00"`}
	nums := []string{"0", "1", "-0", "1.0", "1.50", "1e2", "1E+2", "1.5e1", "1.50e1", "-12.5e-3", "0.000", "0e5", "123456789012345678901234567890",
		"1e-20", "-0.0", "01", "1.", ".5", "+1", "1e", "2e-0", "9.99E3", "1e1001"}
	if depth > 3 {
		depth = 3
	}
	var v string
	switch k := rng.IntN(8); {
	case k < 2 && depth < 3:
		var parts []string
		for range rng.IntN(5) {
			parts = append(parts, ws()+strs[rng.IntN(len(strs))]+ws()+":"+ws()+randomJSON(rng, depth+1)+ws())
		}
		v = "{" + strings.Join(parts, ",") + ws() + "}"
	case k < 4 && depth < 3:
		var parts []string
		for range rng.IntN(4) {
			parts = append(parts, ws()+randomJSON(rng, depth+1)+ws())
		}
		v = "[" + strings.Join(parts, ",") + ws() + "]"
	case k < 5:
		v = strs[rng.IntN(len(strs))]
	case k < 7:
		v = nums[rng.IntN(len(nums))]
	default:
		v = []string{"true", "false", "null", "nul", "True"}[rng.IntN(5)]
	}
	if depth == 0 && rng.IntN(8) == 0 && len(v) > 1 {
		i := rng.IntN(len(v))
		for v[i] >= 0x80 {
			i-- // keep the text UTF-8
		}
		v = v[:i] + []string{"", ",", "}", "]", ":", `"`}[rng.IntN(6)] + v[i+1:]
	}
	return v
}

// TestJSONBInputAsPostgreSQL: dialect.CanonicalJSONB, which writes every
// jsonb value MariaDB and SQLite store, reads random JSON texts as
// PostgreSQL 15's jsonb input reads them: jsonb's output text for what
// PostgreSQL accepts, its SQLSTATE for what it refuses; only numbers
// with exponents beyond 1000 are refused (0A000).
func TestJSONBInputAsPostgreSQL(t *testing.T) {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	rng := rand.New(rand.NewPCG(17, 18))
	accepted := 0
	for range 3000 {
		in := randomJSON(rng, 0)
		var want string
		pgErr := c.QueryRow(ctx, "SELECT $1::jsonb::text", in).Scan(&want)
		got, err := dialect.CanonicalJSONB(in)
		var pe *pgerr.Error
		switch {
		case err != nil && errors.As(err, &pe) && pe.Code == pgerr.FeatureNotSupported:
			if !strings.Contains(in, "e1001") {
				t.Errorf("%q: refused (%v), PostgreSQL: %q %v", in, err, want, pgErr)
			}
		case pgErr != nil:
			var ppe *pgconn.PgError
			if !errors.As(pgErr, &ppe) || err == nil || !errors.As(err, &pe) || pe.Code != ppe.Code {
				t.Errorf("%q: PostgreSQL fails (%v), shepherd: %q %v", in, pgErr, got, err)
			}
		case err != nil || got != want:
			t.Errorf("%q: shepherd %q %v, PostgreSQL %q", in, got, err, want)
		default:
			accepted++
		}
	}
	if accepted < 1000 {
		t.Errorf("only %d of the inputs were documents PostgreSQL reads: the generator tests little", accepted)
	}
}

// TestJSONBStoredAsPostgreSQL: through cbs over MariaDB (the primary),
// PostgreSQL and SQLite, jsonb documents written with duplicate keys,
// \u escapes, white space and number forms PostgreSQL normalises, as
// constants, casts, parameters (text and pgx's binary jsonb) and COPY
// rows, are stored as PostgreSQL stores them: = against a constant
// matches the rows PostgreSQL matches, UPDATE ... WHERE doc = ... counts
// the rows PostgreSQL counts, the documents read back as PostgreSQL
// prints them, no replica is taken out and the replicas end identical.
// json columns keep the text as written. (MariaDB misread the stored
// text: outvoted on the SELECT, a different row count on the UPDATE.)
func TestJSONBStoredAsPostgreSQL(t *testing.T) {
	ctx := context.Background()
	docs := []string{`{"a":1,"a":2}`, `{"a":2}`, `{"a":1}`, `{"k":"\u0041"}`, `{"k":"A"}`, `{ "b" : [1, 1.0, 1e2, -0] , "a":{"y":1,"x":2,"x":3}}`,
		`{"n": 1.50}`, `{"n": 1.5}`, `["\u00e9", "\/", "\ud83d\ude00"]`, `"\u0041"`, `100`, `1e2`, `{"aa":1,"b":2}`}
	run := func(dsn string) []string {
		c, err := pgconn.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		var out []string
		simple := func(sql string) {
			rs, err := c.Exec(ctx, sql).ReadAll()
			if err != nil {
				out = append(out, fmt.Sprintf("%s: %s", sql, renderErr(err)))
				return
			}
			for _, r := range rs {
				var rows []string
				for _, row := range r.Rows {
					var vs []string
					for _, v := range row {
						if v == nil {
							vs = append(vs, "<null>")
						} else {
							vs = append(vs, string(v))
						}
					}
					rows = append(rows, strings.Join(vs, "|"))
				}
				out = append(out, fmt.Sprintf("%s: %s %s", sql, r.CommandTag, strings.Join(rows, "; ")))
			}
		}
		quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
		simple("CREATE TABLE jd (id int PRIMARY KEY, doc jsonb, raw json)")
		simple("CREATE TABLE je (id int PRIMARY KEY, doc jsonb, v text)")
		for i, d := range docs {
			switch i % 3 {
			case 0:
				simple(fmt.Sprintf("INSERT INTO jd VALUES (%d, %s, %s)", i, quote(d), quote(d)))
			case 1:
				simple(fmt.Sprintf("INSERT INTO jd VALUES (%d, %s::jsonb, %s::json)", i, quote(d), quote(d)))
			default:
				out = append(out, "param "+d+": "+paramOutcome(ctx, c, "INSERT INTO jd VALUES ($1, $2, $3)", fmt.Sprint(i), d, d))
			}
			simple(fmt.Sprintf("INSERT INTO je VALUES (%d, %s, 'o')", i, quote(d)))
		}
		simple(`SELECT id FROM jd WHERE doc = '{"a":1}'::jsonb ORDER BY id`)
		simple(`SELECT id FROM jd WHERE doc = '{"a":2}'::jsonb ORDER BY id`)
		simple(`UPDATE je SET v = 'x' WHERE doc = '{"k":"A"}'::jsonb`)
		simple(`UPDATE je SET v = 'y' WHERE doc = '{"a": {"x": 3, "y": 1}, "b": [1, 1.0, 100, 0]}'`)
		simple(`UPDATE je SET v = 'z' WHERE doc = '"A"'`)
		out = append(out, "param eq: "+paramOutcome(ctx, c, "SELECT id FROM jd WHERE doc = $1::jsonb ORDER BY id", `{"a":2, "a":1}`))
		simple(`UPDATE jd SET doc = '{"z":0,"z":{"q":"\u0041"}}' WHERE id = 0`)
		simple(`INSERT INTO jd (id, doc) VALUES (0, '{"c":1}') ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`)
		simple(`INSERT INTO jd (id, doc) SELECT id + 100, doc FROM je WHERE id < 3`)
		simple(`UPDATE jd SET doc = COALESCE(doc, '{"n": 1}') WHERE id = 1`)
		simple(`UPDATE jd SET doc = '{"j":1, "j":[2]}'::json WHERE id = 2`)
		for _, bad := range []string{`{"a":1`, `{"a":"\u0000"}`, `{"a":"\ud83d"}`, `[1,]`, `01`} {
			simple(fmt.Sprintf("INSERT INTO jd (id, doc) VALUES (200, %s)", quote(bad)))
			out = append(out, "bad param "+bad+": "+paramOutcome(ctx, c, "INSERT INTO jd (id, doc) VALUES (200, $1)", bad))
		}
		// COPY rows are stored as constants.
		if _, err := c.CopyFrom(ctx, strings.NewReader("300\t{\"a\":1,\"a\":3}\t{\"a\":1,\"a\":3}\n301\t{\"k\":\"\\\\u0041\"}\t\\N\n"), "COPY jd FROM STDIN"); err != nil {
			out = append(out, "copy: "+renderErr(err))
		}
		simple("SELECT id, doc, raw, doc::text FROM jd ORDER BY id")
		simple("SELECT id, doc, v FROM je ORDER BY id")
		simple(`SELECT id FROM jd WHERE doc = '{"a":3}' ORDER BY id`)

		// pgx sends jsonb parameters in binary once told the type.
		pc, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close(ctx)
		_, err = pc.Exec(ctx, "INSERT INTO jd (id, doc) VALUES ($1, $2)", 400, map[string]any{"b": 1.5, "a": []any{"\u00e9", nil}})
		out = append(out, fmt.Sprintf("pgx insert: %v", err))
		var doc string
		err = pc.QueryRow(ctx, "SELECT doc::text FROM jd WHERE id = $1", 400).Scan(&doc)
		out = append(out, fmt.Sprintf("pgx select: %s %v", doc, err))
		var n int
		err = pc.QueryRow(ctx, "SELECT count(*) FROM jd WHERE doc = $1::jsonb", []byte(`{"a": ["é", null], "b": 1.5}`)).Scan(&n)
		out = append(out, fmt.Sprintf("pgx eq: %d %v", n, err))
		return out
	}
	cfg := realCluster(t, "cbs")
	want := run(testenv.Postgres(t))
	addr, srv := start(t, cfg)
	got := run(fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr))
	for i := range want {
		if i >= len(got) {
			t.Fatalf("shepherd stopped after %d outcomes", len(got))
		}
		if got[i] != want[i] {
			t.Errorf("shepherd:      %s\nPostgreSQL 15: %s", got[i], want[i])
		}
	}
	assertReplicas(t, addr, 3)
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	assertSameText(t, cfg, "SELECT id, doc FROM jd ORDER BY id")
	assertSameText(t, cfg, "SELECT id, doc, v FROM je ORDER BY id")
}

// assertSameText reads every replica directly, through its driver, and
// checks that they hold the same rows in the same text, byte for byte.
func assertSameText(t *testing.T, cfg *config.Config, query string) {
	t.Helper()
	ctx := context.Background()
	var first string
	for i, r := range cfg.Replicas {
		open, _ := driver.Lookup(r.Driver)
		e, err := open(ctx, driver.Spec{Name: r.Name, DSN: r.DSN, DataDir: cfg.DataDir})
		if err != nil {
			t.Fatal(err)
		}
		c, err := e.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a, err := c.Exec(ctx, driver.Query{SQL: query, ReturnsRows: true, Verb: "SELECT"})
		c.Close()
		e.Close()
		if err != nil {
			t.Fatalf("%s: %v", r.Name, err)
		}
		var rows []string
		for _, row := range a.Rows {
			var vs []string
			for _, v := range row {
				vs = append(vs, fmt.Sprintf("%v:%q", v.Null, v.Text))
			}
			rows = append(rows, strings.Join(vs, "|"))
		}
		text := strings.Join(rows, "\n")
		if i == 0 {
			first = text
			if len(a.Rows) == 0 {
				t.Errorf("%s: no rows", r.Name)
			}
		} else if text != first {
			t.Errorf("replica %s holds\n%s\n%s holds\n%s", r.Name, text, cfg.Replicas[0].Name, first)
		}
	}
}

// TestJSONBComputedRefused: a computed value stored into a jsonb column,
// whose text MariaDB and SQLite would keep as they compute it, is
// refused (0A000) on a cluster with them rather than stored otherwise
// than PostgreSQL stores it.
func TestJSONBComputedRefused(t *testing.T) {
	cfg := embedded(t)
	addr, _ := start(t, cfg)
	c := connect(t, addr, "app")
	ctx := context.Background()
	mustExec(t, c, "CREATE TABLE jc (id int PRIMARY KEY, doc jsonb, t text)")
	for _, sql := range []string{
		`INSERT INTO jc (id, doc) VALUES (1, t::jsonb)`,
		`INSERT INTO jc (id, doc) VALUES (1, CASE WHEN true THEN '{"a":1,"a":2}' END)`,
		`INSERT INTO jc (id, doc) SELECT 1, '{"b":1, "a":2}'`,
		`INSERT INTO jc (id, doc) SELECT id, t::jsonb FROM jc`,
		`UPDATE jc SET doc = jsonb_build_object('a', 1)`,
		`UPDATE jc SET doc = doc || '{"a":1}'`,
	} {
		_, err := c.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != pgerr.FeatureNotSupported {
			t.Errorf("%s: %v, want 0A000", sql, err)
		}
	}
}

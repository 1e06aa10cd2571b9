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
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// arrayTexts are elements that PostgreSQL's array output must quote or
// escape, or that look like NULL, and some it leaves alone.
var arrayTexts = []string{"go", "", "NULL", "null", "a b", " lead", "trail ", "c,d", `e"f`, `g\h`, "{x}", "tab\there", "line\nbreak", "é ü", "plain"}

// arrayInput writes elements (nil: NULL) as one of the forms PostgreSQL's
// array input reads: every element quoted (lib/pq's form), quoted only
// where needed with white space around, or unquoted with backslash
// escapes.
func arrayInput(items []*string, form int) string {
	var parts []string
	for _, it := range items {
		switch {
		case it == nil:
			parts = append(parts, []string{"NULL", " null ", "NuLl"}[form%3])
		case form%3 == 0:
			parts = append(parts, `"`+strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(*it)+`"`)
		case form%3 == 1 && *it != "" && !strings.EqualFold(*it, "null") && !strings.ContainsAny(*it, "{}\",\\ \t\n"):
			parts = append(parts, "  "+*it+" ")
		default:
			var b strings.Builder
			for _, r := range *it {
				if strings.ContainsRune("{}\",\\ \t\n", r) {
					b.WriteByte('\\')
				}
				b.WriteRune(r)
			}
			if b.Len() == 0 || strings.EqualFold(*it, "null") {
				parts = append(parts, `"`+*it+`"`) // quoted: "" or "NULL"
				continue
			}
			parts = append(parts, b.String())
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// TestArraysAsPostgreSQL: text[], integer[], bigint[] and boolean[]
// columns hold, print, describe and compare what PostgreSQL does on every
// engine. Random arrays of elements that need quoting, escaping or look
// like NULL go in as constants, ARRAY[...] and text parameters in several
// input forms (each form of one value stores the same bytes on MariaDB and
// SQLite, as PostgreSQL stores one value); integers and booleans in the
// spellings PostgreSQL reads; = ANY and <> ALL with every element (NULL
// elements give NULL where PostgreSQL does), array_length, cardinality,
// equality; pgx's binary array parameters; input PostgreSQL refuses fails
// with its SQLSTATE and message. The same script runs on PostgreSQL 15;
// the outcomes (with the result columns' type OIDs) must be equal, and the
// replicas (MariaDB the primary) stay up and identical.
func TestArraysAsPostgreSQL(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	type row struct {
		tags   []*string
		scores string
	}
	var rows []row
	for range 24 {
		var tags []*string
		for range rng.IntN(5) {
			if rng.IntN(8) == 0 {
				tags = append(tags, nil)
				continue
			}
			s := arrayTexts[rng.IntN(len(arrayTexts))]
			tags = append(tags, &s)
		}
		var scores []string
		for range rng.IntN(4) {
			n := rng.IntN(2000) - 1000
			scores = append(scores, []string{fmt.Sprint(n), fmt.Sprintf(" %d ", n), fmt.Sprintf("%+04d", n), "NULL"}[rng.IntN(4)])
		}
		rows = append(rows, row{tags, "{" + strings.Join(scores, ",") + "}"})
	}
	ctx := context.Background()
	run := func(dsn string, embedded bool) []string {
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
				var oids []string
				for _, f := range r.FieldDescriptions {
					oids = append(oids, fmt.Sprint(f.DataTypeOID))
				}
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
				out = append(out, fmt.Sprintf("%s: %s [%s] %s", sql, r.CommandTag, strings.Join(oids, ","), strings.Join(rows, "; ")))
			}
		}
		quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
		simple("CREATE TABLE a (id int PRIMARY KEY, tags text[] NOT NULL DEFAULT '{}', scores integer[], big bigint[], flags boolean[], names varchar[])")
		for i, r := range rows {
			tags := arrayInput(r.tags, i)
			switch i % 3 {
			case 0:
				simple(fmt.Sprintf("INSERT INTO a (id, tags, scores) VALUES (%d, %s, %s)", i, quote(tags), quote(r.scores)))
			case 1:
				out = append(out, "param "+tags+": "+paramOutcome(ctx, c, "INSERT INTO a (id, tags, scores) VALUES ($1, $2, $3)", fmt.Sprint(i), tags, r.scores))
			default:
				var elems []string
				for _, it := range r.tags {
					if it == nil {
						elems = append(elems, "NULL")
					} else {
						elems = append(elems, quote(*it))
					}
				}
				simple(fmt.Sprintf("INSERT INTO a (id, tags, names) VALUES (%d, ARRAY[%s]::text[], %s::varchar[])", i, strings.Join(elems, ", "), quote(tags)))
			}
		}
		simple("INSERT INTO a (id, big, flags) VALUES (100, '{9000000000,-1}', '{t,FALSE,yes,off,1,0,NULL, on }')")
		simple("INSERT INTO a (id, big, flags) VALUES (101, ARRAY[1, 9000000000], ARRAY[true, NULL, false])")
		simple("SELECT id, tags, scores, big, flags, names FROM a ORDER BY id")
		for _, s := range append(arrayTexts, "absent") {
			simple(fmt.Sprintf("SELECT id, %s = ANY(tags), %s <> ALL(tags) FROM a ORDER BY id", quote(s), quote(s)))
			out = append(out, "any param "+s+": "+paramOutcome(ctx, c, "SELECT count(*) FROM a WHERE $1 = ANY(tags)", s))
		}
		simple("SELECT id, 5 = ANY(scores), -1 = ANY(big), true = ANY(flags), false <> ALL(flags) FROM a ORDER BY id")
		// A NULL element or operand: NULL, but false (= ANY) and true
		// (<> ALL) over an empty array whatever the operand.
		simple("SELECT id, NULL::text = ANY(tags), NULL::text <> ALL(tags), NULL::int = ANY(scores), NULL::boolean = ANY(flags), NULL::boolean <> ALL(flags) FROM a ORDER BY id")
		simple("SELECT id, array_length(tags, 1), cardinality(tags), array_length(scores, 1), cardinality(scores), array_length(tags, 2) FROM a ORDER BY id")
		simple("SELECT array_length('{}'::int[], 1), cardinality('{}'::int[]), array_to_string('{}'::text[], ','), 1 = ANY('{}'::int[]), 1 <> ALL('{}'::int[]), NULL::int = ANY('{}'::int[])")
		simple("SELECT id FROM a WHERE tags IN ('{go}', '{ plain }') ORDER BY id")
		simple("SELECT count(DISTINCT tags), count(DISTINCT scores) FROM a")
		simple("SELECT id, COALESCE(scores, '{}'), CASE WHEN id % 2 = 0 THEN tags END FROM a ORDER BY id")
		out = append(out, "cast params: "+paramOutcome(ctx, c, "SELECT $1::text[], $2::integer[] IS NULL, cardinality($2::int[])", `{ a ,"b c"}`, "{ 1 , 2 }"))
		simple("SELECT id FROM a WHERE tags = '{}' ORDER BY id")
		simple(`SELECT id FROM a WHERE tags = '{"go"}' OR tags = ARRAY['plain'] ORDER BY id`)
		simple("SELECT count(*) FROM a WHERE id = ANY('{1,2,3}')")
		out = append(out, "id any param: "+paramOutcome(ctx, c, "SELECT id FROM a WHERE id = ANY($1) ORDER BY id", "{ 1 , 4,NULL}"))
		simple("SELECT id % 3, array_agg(id::text || CASE WHEN id % 2 = 0 THEN ' x' ELSE '' END ORDER BY id) FROM a GROUP BY 1 ORDER BY 1")
		simple("SELECT array_agg(id ORDER BY id DESC) FILTER (WHERE id % 2 = 0), array_agg(id < 5 ORDER BY id) FROM a")
		simple("SELECT array_agg(x::text ORDER BY id) FROM (SELECT id, CASE id % 4 WHEN 0 THEN NULL WHEN 1 THEN 'a b' WHEN 2 THEN '' ELSE 'Null' END AS x FROM a) s")
		// Over MariaDB's default GROUP_CONCAT limit (1 MB), which cuts
		// the text with a mere warning.
		simple("CREATE TABLE big (id int PRIMARY KEY, s text)")
		var vals []string
		for i := range 1100 {
			vals = append(vals, fmt.Sprintf("(%d, '%s')", i, strings.Repeat(string(rune('a'+i%26)), 1000)))
		}
		if _, err := c.Exec(ctx, "INSERT INTO big VALUES "+strings.Join(vals, ", ")).ReadAll(); err != nil {
			t.Fatal(err)
		}
		simple("SELECT length(string_agg(s, ',' ORDER BY id)), array_agg(s ORDER BY id) = array_agg(s ORDER BY id) FROM big")
		rs, err := c.Exec(ctx, "SELECT array_agg(s ORDER BY id) FROM big").ReadAll()
		if err != nil {
			out = append(out, "big array_agg: "+renderErr(err))
		} else {
			out = append(out, fmt.Sprintf("big array_agg: %d bytes", len(rs[0].Rows[0][0])))
		}
		simple(`SELECT id, tags @> '{go}', tags <@ '{go,plain,"a b"}', tags && ARRAY['NULL', 'c,d'], '{go,"a b"}' && tags, scores @> '{}', '{1,2}' @> scores, tags @> '{go,NULL}' FROM a ORDER BY id`)
		simple("SELECT id, array_to_string(tags, '/'), array_to_string(scores, ', '), array_to_string(flags, '') FROM a ORDER BY id")
		simple("SELECT string_to_array('a,b,,c', ','), string_to_array('x y', NULL), string_to_array('', ','), string_to_array('a\"b', ''), string_to_array(NULL, ',')")
		if embedded {
			// SQLite only: MariaDB refuses them (0A000).
			simple("SELECT id, tags @> tags, tags && tags, scores <@ scores FROM a ORDER BY id")
			simple("SELECT id, string_to_array(id::text || ',x y,' || id::text, ',') FROM a ORDER BY id")
			// The order of arrays: element by element, a NULL element
			// after every value, a prefix first (MariaDB refuses it).
			simple("SELECT id, tags FROM a ORDER BY tags, id")
			simple("SELECT id, scores, flags FROM a ORDER BY scores DESC NULLS FIRST, flags, id")
			simple("SELECT max(tags), min(tags), max(scores), min(scores), max(big), min(flags), max(names) FROM a")
			simple("SELECT id % 3, max(scores), min(tags) FROM a GROUP BY 1 ORDER BY 1")
			simple("SELECT id, tags < '{go}', tags >= ARRAY['a b', NULL], scores > '{0}', scores <= '{}', flags < '{t,NULL}' FROM a ORDER BY id")
		}
		simple("SELECT '{ 1 , 02 }'::integer[], '{\"a\", b }'::text[], ARRAY['x y', NULL], ARRAY[1, 2]")
		simple("UPDATE a SET tags = '{ u , \"v\" }', scores = ARRAY[7] WHERE id = 0")
		for _, bad := range []string{"{a,b", "a,b", `{"a}`, "{a}x", "{a,,b}", "{a\"b}"} {
			simple(fmt.Sprintf("INSERT INTO a (id, tags) VALUES (200, %s)", quote(bad)))
			out = append(out, "bad param "+bad+": "+paramOutcome(ctx, c, "INSERT INTO a (id, tags) VALUES (200, $1)", bad))
		}
		for _, bad := range []string{"{1,x}", "{99999999999}", "{1.5}", "{}}"} {
			simple(fmt.Sprintf("INSERT INTO a (id, scores) VALUES (201, %s)", quote(bad)))
			out = append(out, "bad int param "+bad+": "+paramOutcome(ctx, c, "INSERT INTO a (id, scores) VALUES (201, $1)", bad))
		}
		simple("INSERT INTO a (id, flags) VALUES (202, '{maybe}')")

		// pgx sends arrays in binary once told the parameter's type.
		pc, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close(ctx)
		_, err = pc.Exec(ctx, "INSERT INTO a (id, tags, scores, big, flags) VALUES ($1, $2, $3, $4, $5)",
			300, []string{"x y", "", "NULL", `q"`}, []int32{3, 1, 2}, []int64{1 << 40}, []bool{true, false})
		out = append(out, fmt.Sprintf("pgx insert: %v", err))
		var tags []string
		var scores []int32
		err = pc.QueryRow(ctx, "SELECT tags, scores FROM a WHERE id = $1", 300).Scan(&tags, &scores)
		out = append(out, fmt.Sprintf("pgx select: %q %v %v", tags, scores, err))
		var ids []int32
		r, err := pc.Query(ctx, "SELECT id FROM a WHERE id = ANY($1) ORDER BY id", []int32{300, 101, 5})
		if err == nil {
			ids, err = pgx.CollectRows(r, pgx.RowTo[int32])
		}
		out = append(out, fmt.Sprintf("pgx any: %v %v", ids, err))
		// SQLite rebuilds the table for these, from shepherd's catalog.
		simple("ALTER TABLE a ALTER COLUMN scores SET DEFAULT '{ 9 , 08 }'")
		simple("ALTER TABLE a ADD COLUMN extra bigint[] DEFAULT '{1}'")
		simple("INSERT INTO a (id) VALUES (400)")
		simple("SELECT id, tags, scores, big, flags, extra FROM a WHERE id >= 100 ORDER BY id")
		simple("SELECT x, n FROM unnest('{c,\"a b\",NULL}'::text[]) WITH ORDINALITY AS t(x, n) ORDER BY n")
		simple("SELECT a.id, u FROM a JOIN unnest(ARRAY[300, 400, 5]) AS u ON a.id = u ORDER BY u")
		return out
	}
	for _, setup := range []string{"cbs", "embedded", "diverse"} {
		t.Run(setup, func(t *testing.T) {
			cfg := embedded(t)
			switch setup {
			case "cbs":
				cfg = realCluster(t, "cbs")
			case "diverse":
				// SQLite, SQLite (cgo) and DuckDB, which keeps arrays
				// as SQLite does (dialect/duckdb_arrays.go).
				cfg = diverse(t)
			}
			want := run(testenv.Postgres(t), setup != "cbs")
			addr, srv := start(t, cfg)
			got := run(fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr), setup != "cbs")
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
			assertIdentical(t, cfg, "SELECT id, tags, scores, big, flags, names FROM a ORDER BY id")
		})
	}
}

// TestArrayInputAsPostgreSQL: dialect.CanonicalArray, which writes every
// array MariaDB and SQLite store, reads random array texts as PostgreSQL
// 15 reads them: the same output text for what PostgreSQL accepts, its
// SQLSTATE for what it refuses; only input of more than one dimension or
// with bounds is refused (0A000), whether PostgreSQL takes it or not.
func TestArrayInputAsPostgreSQL(t *testing.T) {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	rng := rand.New(rand.NewPCG(15, 9))
	pieces := []string{"{", "}", ",", `"`, `\`, " ", "\t", "a", "b c", "NULL", "null", "nuLL", "1", "02", "+3", "-4", "t", "f", "yes", "off", "of", "x", "é", "[1:2]=", "99999999999", ""}
	sql := map[string]string{"_text": "text[]", "_int4": "integer[]", "_bool": "boolean[]", "_int8": "bigint[]"}
	accepted := 0
	for i := range 2000 {
		var b strings.Builder
		if rng.IntN(4) > 0 {
			b.WriteString("{")
		}
		for range rng.IntN(8) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		if rng.IntN(4) > 0 {
			b.WriteString("}")
		}
		in := b.String()
		typ := []string{"_text", "_int4", "_bool", "_int8"}[i%4]
		var want string
		pgErr := c.QueryRow(ctx, "SELECT $1::"+sql[typ]+"::text", in).Scan(&want)
		got, err := dialect.CanonicalArray(in, typ)
		var pe *pgerr.Error
		switch {
		case err != nil && errors.As(err, &pe) && pe.Code == pgerr.FeatureNotSupported:
			// Refused before any replica runs it: so is input PostgreSQL
			// itself fails.
			if pgErr == nil && !strings.Contains(want, "{{") && !strings.Contains(want, "]=") {
				t.Errorf("%s %q: refused (%v), PostgreSQL: %q %v", typ, in, err, want, pgErr)
			}
		case pgErr != nil:
			var ppe *pgconn.PgError
			if !errors.As(pgErr, &ppe) || err == nil || !errors.As(err, &pe) || pe.Code != ppe.Code {
				t.Errorf("%s %q: PostgreSQL fails (%v), shepherd: %q %v", typ, in, pgErr, got, err)
			}
		case err != nil || got != want:
			t.Errorf("%s %q: shepherd %q %v, PostgreSQL %q", typ, in, got, err, want)
		default:
			accepted++
		}
	}
	if accepted < 200 {
		t.Errorf("only %d of the inputs were arrays PostgreSQL reads: the generator tests little", accepted)
	}
}

// diverse is the diverse embedded cluster: SQLite, SQLite (cgo) and
// DuckDB.
func diverse(t *testing.T) *config.Config {
	cfg := config.EmbeddedWith(config.EmbeddedDiverse())
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	return cfg
}

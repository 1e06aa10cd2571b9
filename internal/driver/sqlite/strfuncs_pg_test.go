package sqlite_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/dialect"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// stringCases are expressions whose value (or error) both SQLite builds,
// through the SQL writer and shepherd's string functions, must give as
// PostgreSQL 15 does: NULLs, negative and oversized lengths, multibyte
// characters, empty strings and delimiters, and the functions' errors.
var stringCases = []string{
	"lpad('abc', 5, '')", "lpad('abcdef', 3, '')", "lpad('abc', -1)", "rpad('abc', 2)",
	"lpad('ab', 7, 'xyz')", "rpad('ab', 7, 'xyz')", "lpad('héé', 5, 'é')", "lpad(NULL, 3)",
	"lpad('a', NULL)", "rpad('a', 3, NULL)", "lpad('x', 268435455)",
	"left('abc', -5)", "right('abc', -1)", "left('héllo', 2)", "right('héllo', 3)", "left('abc', 0)",
	"left(NULL, 1)", "right('abc', NULL)", "left('abc', 10)",
	"reverse('héllo')", "reverse('')", "reverse(NULL)",
	"repeat('ab', 3)", "repeat('ab', -1)", "repeat('', 5)", "repeat(NULL, 2)", "repeat('abcd', 300000000)",
	"initcap('hello wORLD éa 3abc a_b x-y ÉCOLE')", "initcap('élan')", "initcap('')", "initcap(NULL)",
	"split_part('a,b,c', ',', 2)", "split_part('a,b,c', ',', 5)", "split_part('a,b,c', ',', -1)",
	"split_part('a,b,c', '', 1)", "split_part('a,b,c', '', 2)", "split_part('', ',', 1)", "split_part('abc', ',', -2)",
	"split_part('a,b', ',', 0)", "split_part('aXXbXXc', 'XX', 3)", "split_part('aaa', 'aa', 2)", "split_part(NULL, ',', 1)",
	"split_part('é|ü', '|', 2)",
	"md5('shepherd')", "md5('')", "md5(NULL)",
	"ascii('A')", "ascii('')", "ascii('é')", "ascii('😀x')", "ascii(NULL)",
	"chr(66)", "chr(233)", "chr(128512)", "chr(0)", "chr(-1)", "chr(1114112)", "chr(55296)", "chr(NULL)",
	"translate('hello', 'el', 'ip')", "translate('hello', 'ell', 'ipq')", "translate('hello', 'lo', 'x')",
	"translate('aéb', 'é', 'ü')", "translate(NULL, 'a', 'b')", "translate('abc', '', 'x')",
	"starts_with('abc', 'ab')", "starts_with('abc', '')", "starts_with('abc', 'b')", "starts_with(NULL, 'a')",
	"format('%s has grade %s', 'Ann', 3)", "format('%s|%L|%L', NULL, NULL, 'a\\b''c')",
	"format('%-5s|%5s|%2$s', 'ab', 'cd')", "format('%x', 1)", "format('%s %s', 1)", "format('100%%')",
	"format('%*s|%-*s', 4, 'a', 3, 'b')", "format('%0$s', 'a')", "format('abc')", "format(NULL, 1)",
	"format('%3$s %s', 'a', 'b', 'c')", "format('%', 1)", "format('%L', 'it''s')",
	"regexp_replace('a1b22c333', '[0-9]+', '#', 'g')", "regexp_replace('a1b22c333', '[0-9]+', '#')",
	"regexp_replace('ab', 'a|ab', 'X')", "regexp_replace('abc', 'B', 'X', 'i')", "regexp_replace('aXbX', 'x', '-', 'gi')",
	"regexp_replace('abc', 'b', '\\\\ \\& \\0 \\1 \\q', 'g')", "regexp_replace('abc', 'x*', '-', 'g')",
	"regexp_replace('abc', 'b*', '-', 'g')", "regexp_replace('abc', '^', '>', 'g')", "regexp_replace('abc', '$', '<', 'g')",
	"regexp_replace('a', 'a', 'b', 'z')", "regexp_replace(NULL, 'a', 'b')", "regexp_replace('héllo wörld', '[^a-z ]', '_', 'g')",
	"regexp_replace('Hello World', '[a-z]+', '*', 'gi')", "regexp_replace('x.y.z', '\\.', '/', 'g')",
	"regexp_replace(E'a\\nb', '.', '_', 'g')", "regexp_replace('tab\there', '\\s', '_', 'g')",
	"regexp_replace('aaa', 'a{2}', 'b', 'g')", "regexp_replace('abcabc', '(?:ab)+', 'X', 'g')",
	"regexp_replace('ÉCOLE école', 'é', 'e', 'gi')",
	"substring('foobar' from 'o+b')", "substring('foo' from 'x')", "substring('foobar' from '^f.')", "substring(NULL from 'a')",
	"'ab' ~ 'a|ab'", "'É' ~* 'é'", "'K' ~* 'k'", "E'a\\nb' ~ 'a.b'", "E'a\\n' ~ 'a$'", "'ab' ~ '\\w\\d'",
	"E'\\x0b' ~ '\\s'", "'a]' ~ '[]a]+'", "'x' ~ '[^]a]'", "'abc' !~ 'B'", "'abc' !~* 'B'", "'abc' ~* '[B-C]$'",
	"NULL ~ 'a'", "'a' ~ ''", "'' ~ '^$'", "'é' ~ '^.$'", "'x-y' ~ '[a-]'", "'Straße' ~* 'STRASSE'",
}

// TestStringFunctionsAsPostgres runs stringCases on PostgreSQL and on both
// SQLite builds (written by the SQL writer) and compares text and errors.
func TestStringFunctionsAsPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pg, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	want := make([]string, len(stringCases))
	for i, expr := range stringCases {
		want[i] = pgValue(ctx, pg, "SELECT "+expr)
	}
	for _, name := range []string{"sqlite", "sqlite-cgo"} {
		t.Run(name, func(t *testing.T) {
			e := open(t, name, driver.Spec{Name: name, DSN: "s.db", DataDir: t.TempDir()})
			defer e.Close()
			c, err := e.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for i, expr := range stringCases {
				tree, err := pg_query.Parse("SELECT " + expr)
				if err != nil {
					t.Fatal(err)
				}
				form, err := dialect.Write(tree.Stmts[0].Stmt, driver.SQLite, nil)
				var got string
				if err != nil {
					got = errText(err)
				} else {
					a, err := exec(t, c, "SELECT", form.SQL)
					switch {
					case err != nil:
						got = errText(err)
					case len(a.Rows) != 1 || len(a.Rows[0]) != 1:
						got = fmt.Sprintf("rows %v", a.Rows)
					case a.Rows[0][0].Null:
						got = "NULL"
					default:
						got = a.Rows[0][0].Text
					}
				}
				if got != want[i] && !(strings.HasPrefix(got, "ERROR 0A000") && strings.HasPrefix(want[i], "ERROR")) {
					t.Errorf("%s: got %q, PostgreSQL %q (SQLite: %s)", expr, got, want[i], form.SQL)
				}
			}
		})
	}
}

// pgValue is PostgreSQL's answer to a one-value query: its text, NULL or
// the error's SQLSTATE and message; booleans as SQLite's 1 and 0.
func pgValue(ctx context.Context, c *pgx.Conn, q string) string {
	rows, err := c.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return errText(err)
	}
	defer rows.Close()
	got := "no rows"
	for rows.Next() {
		raw := rows.RawValues()
		switch {
		case raw[0] == nil:
			got = "NULL"
		case rows.FieldDescriptions()[0].DataTypeOID == 16:
			got = map[string]string{"t": "1", "f": "0"}[string(raw[0])]
		default:
			got = string(raw[0])
		}
	}
	if err := rows.Err(); err != nil {
		return errText(err)
	}
	return got
}

func errText(err error) string {
	var pe *pgconn.PgError
	if e, ok := err.(*pgconn.PgError); ok {
		pe = e
		return "ERROR " + pe.Code + " " + pe.Message
	}
	return "ERROR " + pgerr.Code(err) + " " + pgerr.From(err).Message
}

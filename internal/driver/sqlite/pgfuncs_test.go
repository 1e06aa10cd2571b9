package sqlite

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// pgAnswer runs a one-value query on PostgreSQL and returns its text, or
// nil for NULL.
func pgAnswer(t *testing.T, conn *pgx.Conn, query string) any {
	t.Helper()
	var v *string
	if err := conn.QueryRow(context.Background(), query, pgx.QueryExecModeSimpleProtocol).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	if v == nil {
		return nil
	}
	return *v
}

func sqlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// TestPGFunctionsAgainstPostgres checks shepherd's SQLite functions for
// json operators, extract, timestamp - timestamp and age against
// PostgreSQL 15 itself, on the same inputs.
func TestPGFunctionsAgainstPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PostgreSQL")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	docs := []string{
		`{"user": "ada", "ok": true}`,
		`{"size": 1024, "parts": [1, 2,   3], "x": 1.50, "e": 1E+2, "z": -0.0}`,
		`{"a":1,"a":2, "n": null, "s": "tab\tq\"\u00e9\u0001", "o": {"zz": 1, "b": [{"c": "d"}]}}`,
		`[1, "a", [2, 3], {"k": "v"}, null]`,
		`"just a string"`,
		`42`,
		`{"bb": 1, "a": 2, "ccc": {"d": [1, 1.0, "x"]}}`,
	}
	keys := []string{"user", "a", "parts", "x", "e", "z", "n", "s", "o", "k", "missing", "ccc", "bb"}
	for _, d := range docs {
		for _, typ := range []string{"json", "jsonb"} {
			mode := int64(0)
			if typ == "jsonb" {
				mode = JSONB
			}
			for _, k := range keys {
				for _, op := range []string{"->", "->>"} {
					m := mode
					if op == "->>" {
						m |= JSONAsText
					}
					got, err := jsonGet(d, k, m)
					if err != nil {
						t.Fatal(err)
					}
					want := pgAnswer(t, conn, fmt.Sprintf("SELECT (%s::%s %s %s)::text", sqlQuote(d), typ, op, sqlQuote(k)))
					if got != want {
						t.Errorf("%s::%s %s '%s' = %#v, PostgreSQL %#v", d, typ, op, k, got, want)
					}
				}
			}
			for _, i := range []int64{0, 1, 2, -1, 7} {
				got, _ := jsonGet(d, i, mode|JSONIndex|JSONAsText)
				want := pgAnswer(t, conn, fmt.Sprintf("SELECT (%s::%s ->> %d)::text", sqlQuote(d), typ, i))
				if got != want {
					t.Errorf("%s::%s ->> %d = %#v, PostgreSQL %#v", d, typ, i, got, want)
				}
			}
			for _, p := range []string{"{o,b,0,c}", "{parts,1}", "{2,1}", "{3,k}", "{}", "{ccc,d}", "{o}"} {
				for _, op := range []string{"#>", "#>>"} {
					m := mode
					if op == "#>>" {
						m |= JSONAsText
					}
					got, err := jsonPath(d, p, m)
					if err != nil {
						t.Fatal(err)
					}
					want := pgAnswer(t, conn, fmt.Sprintf("SELECT (%s::%s %s %s)::text", sqlQuote(d), typ, op, sqlQuote(p)))
					if got != want {
						t.Errorf("%s::%s %s '%s' = %#v, PostgreSQL %#v", d, typ, op, p, got, want)
					}
				}
			}
		}
		for _, c := range []string{`{"user": "ada"}`, `{"a": 2}`, `{"a": 1}`, `{}`, `[]`, `1`, `"a"`, `[1]`, `[[2]]`, `[2]`,
			`{"x": 1.5}`, `{"o": {"b": [{}]}}`, `{"o": {"b": {}}}`, `{"ccc": {"d": [1]}}`, `{"ccc": {"d": 1}}`, `[{"k": "v"}]`, `42`, `42.0`} {
			got, err := jsonbContains(d, c)
			if err != nil {
				t.Fatal(err)
			}
			want := pgAnswer(t, conn, fmt.Sprintf("SELECT (%s::jsonb @> %s::jsonb)::int::text", sqlQuote(d), sqlQuote(c)))
			if fmt.Sprint(got) != want {
				t.Errorf("%s @> %s = %v, PostgreSQL %v", d, c, got, want)
			}
		}
		for _, k := range []string{"a", "user", "just a string", "k", "v"} {
			got, _ := jsonbExists(d, k)
			want := pgAnswer(t, conn, fmt.Sprintf("SELECT (%s::jsonb ? %s)::int::text", sqlQuote(d), sqlQuote(k)))
			if fmt.Sprint(got) != want {
				t.Errorf("%s ? %s = %v, PostgreSQL %v", d, k, got, want)
			}
		}
	}

	// SQLite's json_object() output, reprinted as PostgreSQL prints the
	// same object built by json_build_object and jsonb_build_object.
	for doc, args := range map[string]string{
		`{"a":1,"b":"x\"y\n","a":true,"c":null}`: `'a', 1, 'b', E'x"y\n', 'a', true, 'c', NULL`,
		`{}`:                                     ``,
		`{"long key":-5,"k":"\u0001é"}`:          `'long key', -5, 'k', E'\x01é'`,
	} {
		got, err := jsonObjectText(doc)
		if err != nil {
			t.Fatal(err)
		}
		want := pgAnswer(t, conn, fmt.Sprintf("SELECT json_build_object(%s)::text", args))
		if got != want {
			t.Errorf("json_build_object(%s): %q, PostgreSQL %q", args, got, want)
		}
		got, _ = jsonbText(doc)
		want = pgAnswer(t, conn, fmt.Sprintf("SELECT jsonb_build_object(%s)::text", args))
		if got != want {
			t.Errorf("jsonb_build_object(%s): %q, PostgreSQL %q", args, got, want)
		}
	}

	times := []string{"2024-03-01 12:00:00", "2024-02-28 06:30:00", "2024-01-31 00:00:00", "2023-12-31 23:59:59.123456",
		"2024-03-31 10:00:00", "2024-02-29 12:30:00", "1999-01-03 00:00:00.5", "2024-01-01 00:00:00"}
	for _, a := range times {
		for _, f := range []string{"epoch", "year", "month", "day", "hour", "minute", "second", "dow", "isodow", "doy", "quarter", "week", "isoyear", "milliseconds", "microseconds"} {
			got, err := datePart(f, a)
			if err != nil {
				t.Fatal(err)
			}
			want := pgAnswer(t, conn, fmt.Sprintf("SELECT date_part('%s', TIMESTAMP %s)::text", f, sqlQuote(a)))
			if f, ok := got.(float64); ok {
				got = strconv.FormatFloat(f, 'f', -1, 64)
			}
			if fmt.Sprint(got) != want {
				t.Errorf("date_part('%s', '%s') = %v, PostgreSQL %v", f, a, got, want)
			}
		}
		for _, f := range []string{"YYYY-MM-DD HH24:MI:SS", "DD Mon YYYY", "yyyy/mm/dd hh12:mi:ss AM", "DDD Q Dy DY dy MON mon US MS", `"Year" YYYY, HH:MI pm`, "YY-MM-DD\\"} {
			parts, ok := answer.ParseToCharFormat(f)
			if !ok {
				t.Fatalf("format %q not read", f)
			}
			got := answer.FormatToChar(mustStored(t, a), parts)
			want := pgAnswer(t, conn, fmt.Sprintf("SELECT to_char(TIMESTAMP %s, %s)", sqlQuote(a), sqlQuote(f)))
			if got != want {
				t.Errorf("to_char('%s', '%s') = %q, PostgreSQL %q", a, f, got, want)
			}
		}
		for _, iv := range []string{"1 month", "-1 month", "1 year 2 mons 3 days 04:05:06.5", "-3 days -00:00:00.000001", "25 hours", "13 months", "-14 mons 40 days"} {
			v, ok := answer.ParseInterval(iv)
			if !ok {
				t.Fatalf("interval %q not read", iv)
			}
			want := pgAnswer(t, conn, fmt.Sprintf("SELECT (%s::interval)::text", sqlQuote(iv)))
			if v.String() != want {
				t.Errorf("interval %q prints %q, PostgreSQL %q", iv, v.String(), want)
			}
			got, err := timeAdd(a, int64(v.Months), int64(v.Days), v.Micros)
			if err != nil {
				t.Fatal(err)
			}
			want = pgAnswer(t, conn, fmt.Sprintf("SELECT (TIMESTAMP %s + %s::interval)::text", sqlQuote(a), sqlQuote(iv)))
			if got != want {
				t.Errorf("'%s' + '%s' = %v, PostgreSQL %v", a, iv, got, want)
			}
		}
		for _, b := range times {
			got, _ := timestampDiff(a, b)
			want := pgAnswer(t, conn, fmt.Sprintf("SELECT (TIMESTAMP %s - TIMESTAMP %s)::text", sqlQuote(a), sqlQuote(b)))
			if got != want {
				t.Errorf("'%s' - '%s' = %v, PostgreSQL %v", a, b, got, want)
			}
			got, _ = epochDiff(a, b)
			if f, ok := got.(float64); ok {
				got = strconv.FormatFloat(f, 'f', -1, 64)
			}
			want = pgAnswer(t, conn, fmt.Sprintf("SELECT extract(epoch FROM TIMESTAMP %s - TIMESTAMP %s)::float8::text", sqlQuote(a), sqlQuote(b)))
			if fmt.Sprint(got) != want {
				t.Errorf("extract(epoch FROM '%s' - '%s') = %v, PostgreSQL %v", a, b, got, want)
			}
			got, _ = age(a, b)
			want = pgAnswer(t, conn, fmt.Sprintf("SELECT age(TIMESTAMP %s, TIMESTAMP %s)::text", sqlQuote(a), sqlQuote(b)))
			if got != want {
				t.Errorf("age('%s', '%s') = %v, PostgreSQL %v", a, b, got, want)
			}
		}
	}
}

func mustStored(t *testing.T, s string) time.Time {
	v, ok, err := parseStored(s)
	if !ok || err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

func TestMain(m *testing.M) { testenv.Main(m) }

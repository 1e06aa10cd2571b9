package pgfunc

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/testenv"
)

// sample is a concrete type for each pseudo-type of the catalogue, to
// call an overload with.
var sample = map[string]string{
	"any": "int4", "anyelement": "int4", "anynonarray": "int4", "anycompatible": "int4",
	"anycompatiblenonarray": "int4", "anyarray": "_int4", "anycompatiblearray": "_int4",
}

// sqlType writes a catalogue type name as SQL.
func sqlType(t string) string {
	if e, ok := strings.CutPrefix(t, "_"); ok {
		return sqlType(e) + "[]"
	}
	if t == "timetz" {
		return "time with time zone"
	}
	return t
}

// argText writes an argument of type t: a typed NULL, NULL for a
// literal.
func argText(t string) string {
	switch t {
	case Literal:
		return "NULL"
	case "record":
		return "ROW(1, 2)"
	case "regclass":
		return "'shepherd_seq'::regclass"
	}
	return "NULL::" + sqlType(t)
}

// callText writes a call of name with arguments of the given types, as
// its kind wants it.
func callText(name string, kind Kind, args []string) string {
	texts := make([]string, len(args))
	for i, a := range args {
		texts[i] = argText(a)
	}
	if name == "count" && len(args) == 0 {
		texts = []string{"*"}
	}
	if name != "uuid_generate_v4" {
		name = "pg_catalog." + name // extract, position, left: keywords
	}
	call := name + "(" + strings.Join(texts, ", ") + ")"
	if kind == Window {
		call += " OVER ()"
	}
	return call
}

// pgResult asks PostgreSQL for the type of a call, by preparing a
// SELECT of it (so that only typing, not running, can fail): ok is
// false when PostgreSQL refuses it.
func pgResult(t *testing.T, conn *pgx.Conn, call string) (string, bool) {
	t.Helper()
	ctx := context.Background()
	d, err := conn.Prepare(ctx, "", "SELECT "+call)
	if err != nil {
		return "", false
	}
	var typ string
	if err := conn.QueryRow(ctx, "SELECT typname::text FROM pg_type WHERE oid = $1", d.Fields[0].DataTypeOID).Scan(&typ); err != nil {
		t.Fatal(err)
	}
	return typ, true
}

func connect(t *testing.T) *pgx.Conn {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	for _, s := range []string{`CREATE EXTENSION IF NOT EXISTS "uuid-ossp"`, `CREATE SEQUENCE IF NOT EXISTS shepherd_seq`} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	return conn
}

// TestCatalogueMatchesPostgres calls every overload of the catalogue on
// PostgreSQL 15 with arguments of its types (a sample type for a
// pseudo-type) and checks that PostgreSQL takes the call and gives it
// the type Result gives it.
func TestCatalogueMatchesPostgres(t *testing.T) {
	conn := connect(t)
	for _, name := range sorted(Names()) {
		for _, o := range catalogue[name].Overloads {
			args := make([]string, len(o.Args))
			for i, a := range o.Args {
				if o.Variadic && i == len(o.Args)-1 && element(a) != "" {
					a = element(a)
				}
				if s, ok := sample[a]; ok {
					a = s
				}
				args[i] = a
			}
			for k := len(args) - o.Defaults; k <= len(args); k++ {
				call := callText(name, o.Kind, args[:k])
				got, ok := pgResult(t, conn, call)
				if !ok {
					t.Errorf("PostgreSQL refuses %s", call)
					continue
				}
				if r := Result(name, args[:k]); r != got {
					t.Errorf("%s: catalogue says %q, PostgreSQL %q", call, r, got)
				}
			}
		}
	}
}

// TestResultMatchesPostgres calls every function of the catalogue with
// random argument types (untyped NULLs among them) and checks that,
// wherever Result names a type, PostgreSQL takes the call and gives it
// that type: the overload resolution is PostgreSQL's, not just the
// table.
func TestResultMatchesPostgres(t *testing.T) {
	conn := connect(t)
	pool := []string{"int2", "int4", "int8", "numeric", "float4", "float8", "text", "varchar", "bpchar",
		"name", "bool", "date", "time", "timestamp", "timestamptz", "interval", "uuid", "bytea", "json",
		"jsonb", "_int4", "_text", Literal}
	rng := rand.New(rand.NewSource(1))
	tried, typed := 0, 0
	for _, name := range sorted(Names()) {
		var arities []int
		for _, o := range catalogue[name].Overloads {
			for n := len(o.Args) - o.Defaults; n <= len(o.Args); n++ {
				if !slices.Contains(arities, n) {
					arities = append(arities, n)
				}
			}
		}
		for _, n := range arities {
			for range 12 {
				args := make([]string, n)
				for i := range args {
					args[i] = pool[rng.Intn(len(pool))]
					if rng.Intn(3) == 0 {
						// Often a type of an overload, for calls that
						// resolve.
						o := catalogue[name].Overloads[rng.Intn(len(catalogue[name].Overloads))]
						if i < len(o.Args) && o.takes(n) {
							if _, pseudo := sample[o.arg(i)]; !pseudo && o.arg(i) != "record" && o.arg(i) != "regclass" {
								args[i] = o.arg(i)
							}
						}
					}
				}
				want := Result(name, args)
				if want == "" {
					continue
				}
				kind := Plain
				for _, o := range catalogue[name].Overloads {
					if o.takes(n) {
						kind = o.Kind
						break
					}
				}
				call := callText(name, kind, args)
				tried++
				got, ok := pgResult(t, conn, call)
				switch {
				case !ok:
					t.Errorf("%s: catalogue says %q, PostgreSQL refuses it", call, want)
				case got != want:
					t.Errorf("%s: catalogue says %q, PostgreSQL %q", call, want, got)
				default:
					typed++
				}
			}
		}
	}
	t.Logf("%d typed calls checked, %d agree", tried, typed)
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

// TestCatalogueLines checks the catalogue has no overload twice.
func TestCatalogueLines(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range Names() {
		for _, o := range catalogue[name].Overloads {
			key := fmt.Sprint(name, o.Args, o.Variadic)
			if seen[key] {
				t.Errorf("%s listed twice", key)
			}
			seen[key] = true
		}
	}
}

// TestMathAlikeByOverload: the engines' math functions compute in double
// precision, so only the overload PostgreSQL chooses decides: sqrt of an
// integer is sqrt(float8), written by the engines; sqrt of numeric (or of
// a type shepherd cannot tell) is PostgreSQL's numeric sqrt, refused.
func TestMathAlikeByOverload(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		my   string
		ok   bool
	}{
		{"sqrt", []string{"float8"}, "", true},
		{"sqrt", []string{"int4"}, "", true},
		{"sqrt", []string{"numeric"}, "", false},
		{"sqrt", []string{""}, "", false},
		{"exp", []string{"numeric"}, "", false},
		{"ln", []string{"int8"}, "", true},
		{"power", []string{"int4", "int4"}, "POW", true},
		{"power", []string{"int4", "numeric"}, "", false},
		{"ceil", []string{"numeric"}, "", true},
		{"sign", []string{"numeric"}, "", true},
		{"pi", nil, "", true},
		{"acos", []string{"float8"}, "", false},
	} {
		if my, ok := MathAlike(c.name, c.args); my != c.my || ok != c.ok {
			t.Errorf("MathAlike(%s, %v) = %q, %v; want %q, %v", c.name, c.args, my, ok, c.my, c.ok)
		}
	}
}

package answer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func pgConn(t *testing.T) *pgx.Conn {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return conn
}

// randomArray writes an array literal: a well-formed one of up to three
// dimensions with white space, quotes, escapes and NULLs, often with a
// character inserted, dropped or changed (a malformed one, or one read
// otherwise).
func randomArray(rng *rand.Rand) string {
	words := []string{"a", "b c", "1", "-2", "NULL", "null", `"NULL"`, `""`, `"x,y"`, `"q\"r"`, `s\,t`, `\\`, " 7 ", "{", "}", `"`, "x\ty", "  "}
	var gen func(depth int) string
	gen = func(depth int) string {
		n := rng.Intn(4)
		if depth > 0 && n == 0 {
			n = 1 + rng.Intn(2)
		}
		var parts []string
		sub := depth < 3 && rng.Intn(3) == 0
		for range n {
			if sub {
				parts = append(parts, gen(depth+1))
			} else {
				parts = append(parts, words[rng.Intn(len(words))])
			}
		}
		sep := ","
		if rng.Intn(4) == 0 {
			sep = " , "
		}
		return "{" + strings.Join(parts, sep) + "}"
	}
	s := gen(0)
	if rng.Intn(5) == 0 {
		s = " " + s + "\n"
	}
	for range rng.Intn(3) {
		if len(s) == 0 {
			break
		}
		i := rng.Intn(len(s))
		const alphabet = "{},\"\\ aN["
		c := string(alphabet[rng.Intn(len(alphabet))])
		switch rng.Intn(3) {
		case 0:
			s = s[:i] + c + s[i:]
		case 1:
			s = s[:i] + s[i+1:]
		default:
			s = s[:i] + c + s[i+1:]
		}
	}
	return s
}

// TestArrayParserMatchesPostgres reads random array literals with
// ParseArrayDims and as PostgreSQL 15 reads them ('...'::text[] and,
// where every element is an integer, '...'::int[]): both must take or
// refuse each, and agree on its dimensions and its elements in storage
// order; for one dimension FormatArray must write PostgreSQL's text.
// Explicit bounds, which shepherd refuses, are left out.
func TestArrayParserMatchesPostgres(t *testing.T) {
	conn := pgConn(t)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(7))
	checked, uneven := 0, 0
	for range 3000 {
		s := randomArray(rng)
		items, dims, err := ParseArrayDims(s)
		var ae *ArrayError
		if errors.As(err, &ae) && (ae.Bounds || ae.Uneven) {
			uneven++
			continue // refused clearly (0A000)
		}
		var pgDims, pgText, pgJSON *string
		pgErr := conn.QueryRow(ctx, `SELECT array_dims(a), a::text,
			(SELECT json_agg(x ORDER BY o)::text FROM unnest(a) WITH ORDINALITY u(x, o))
			FROM (SELECT $1::text::text[] AS a) s`, s).Scan(&pgDims, &pgText, &pgJSON)
		if (err == nil) != (pgErr == nil) {
			t.Errorf("%q: shepherd %v, PostgreSQL %v", s, err, pgErr)
			continue
		}
		if err != nil {
			continue
		}
		checked++
		want := []*string{}
		if pgJSON != nil {
			if err := json.Unmarshal([]byte(*pgJSON), &want); err != nil {
				t.Fatal(err)
			}
		}
		if show(items) != show(want) {
			t.Errorf("%q: shepherd reads %s, PostgreSQL %s", s, show(items), show(want))
		}
		gotDims := ""
		for _, d := range dims {
			gotDims += fmt.Sprintf("[1:%d]", d)
		}
		if pgDims == nil && gotDims != "" || pgDims != nil && *pgDims != gotDims {
			t.Errorf("%q: shepherd's dimensions %s, PostgreSQL's %v", s, gotDims, deref(pgDims))
		}
		if len(dims) <= 1 && FormatArray(items) != *pgText {
			t.Errorf("%q: FormatArray writes %s, PostgreSQL %s", s, FormatArray(items), *pgText)
		}
		ints := true
		for _, it := range items {
			if it != nil {
				if _, err := strconv.Atoi(strings.TrimSpace(*it)); err != nil {
					ints = false
				}
			}
		}
		if ints {
			var pgInts *string
			if err := conn.QueryRow(ctx, `SELECT $1::text::int[]::text`, s).Scan(&pgInts); err != nil {
				t.Errorf("%q: PostgreSQL refuses it as int[]: %v", s, err)
			}
		}
	}
	if checked < 300 {
		t.Errorf("only %d literals PostgreSQL takes: the generator is off", checked)
	}
	t.Logf("%d literals taken by both, %d with bounds or uneven sub-arrays refused", checked, uneven)
}

func show(items []*string) string {
	var b strings.Builder
	for _, it := range items {
		if it == nil {
			b.WriteString("NULL;")
		} else {
			b.WriteString(strconv.Quote(*it) + ";")
		}
	}
	return b.String()
}

func deref(s *string) string {
	if s == nil {
		return "NULL"
	}
	return *s
}

// randomUUID writes a UUID in PostgreSQL's input forms, often spoilt: a
// hyphen moved, doubled, added or dropped, braces, upper case, a digit
// too many or too few, a stray character.
func randomUUID(rng *rand.Rand) string {
	const hex = "0123456789abcdefABCDEF"
	var b strings.Builder
	for range 32 {
		b.WriteByte(hex[rng.Intn(len(hex))])
	}
	d := b.String()
	var s string
	switch rng.Intn(3) {
	case 0:
		s = d[:8] + "-" + d[8:12] + "-" + d[12:16] + "-" + d[16:20] + "-" + d[20:]
	case 1:
		s = d
	default:
		for i := 0; i < 32; i += 4 {
			if i > 0 {
				s += "-"
			}
			s += d[i : i+4]
		}
	}
	if rng.Intn(4) == 0 {
		s = "{" + s + "}"
	}
	for range rng.Intn(3) {
		i := rng.Intn(len(s) + 1)
		c := string("-{} g0A"[rng.Intn(7)])
		switch rng.Intn(3) {
		case 0:
			s = s[:i] + c + s[i:]
		case 1:
			if i < len(s) {
				s = s[:i] + s[i+1:]
			}
		default:
			if i < len(s) {
				s = s[:i] + c + s[i+1:]
			}
		}
	}
	return s
}

// TestUUIDParserMatchesPostgres reads random UUID text as shepherd's one
// UUID reader (PGText, which dialect.NormalizeUUID and the canonical
// encoder use) and as PostgreSQL 15's '...'::uuid: both must take or
// refuse each, and write what they take alike.
func TestUUIDParserMatchesPostgres(t *testing.T) {
	conn := pgConn(t)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(3))
	taken := 0
	for range 3000 {
		s := randomUUID(rng)
		got, ok := PGText(UUID, s)
		var want string
		err := conn.QueryRow(ctx, `SELECT $1::text::uuid::text`, s).Scan(&want)
		switch {
		case ok != (err == nil):
			t.Errorf("%q: shepherd takes it: %v, PostgreSQL: %v", s, ok, err)
		case ok && got != want:
			t.Errorf("%q: shepherd writes %s, PostgreSQL %s", s, got, want)
		case ok:
			taken++
		}
	}
	if taken < 300 || taken > 2700 {
		t.Errorf("%d of 3000 taken: the generator is off", taken)
	}
	t.Logf("%d UUIDs taken by both", taken)
}

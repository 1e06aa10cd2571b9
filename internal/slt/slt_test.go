package slt

import (
	"slices"
	"strings"
	"testing"
)

const sample = `hash-threshold 8

statement ok
CREATE TABLE t1(a INTEGER, b INTEGER)

# a comment
statement error
CREATE TABLE t1(a INTEGER)

skipif mysql # not compatible
query II rowsort label-1
SELECT a,
       b FROM t1
----
1
2

onlyif mysql
query I nosort
SELECT a DIV 2 FROM t1

query T valuesort
SELECT 'x'
----
x

onlyif sqlite
halt

halt

query I nosort
SELECT 1
`

func TestParse(t *testing.T) {
	recs, err := Parse("sample.test", strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 7 {
		t.Fatalf("%d records, want 7 (up to the second halt): %+v", len(recs), recs)
	}
	want := []struct {
		kind Kind
		line int
		sql  string
		sort Sort
	}{
		{Statement, 3, "CREATE TABLE t1(a INTEGER, b INTEGER)", NoSort},
		{Statement, 7, "CREATE TABLE t1(a INTEGER)", NoSort},
		{Query, 10, "SELECT a,\n       b FROM t1", RowSort},
		{Query, 18, "SELECT a DIV 2 FROM t1", NoSort},
		{Query, 22, "SELECT 'x'", ValueSort},
		{Halt, 27, "", NoSort},
		{Halt, 30, "", NoSort},
	}
	for i, w := range want {
		r := recs[i]
		if r.Kind != w.kind || r.Line != w.line || r.SQL != w.sql || r.Sort != w.sort {
			t.Errorf("record %d: %+v, want %+v", i, r, w)
		}
	}
	if !recs[1].ExpectError || recs[0].ExpectError {
		t.Error("statement error/ok not read")
	}
	if recs[2].Label != "label-1" || recs[2].Types != "II" {
		t.Errorf("query header: %+v", recs[2])
	}
	if recs[2].Applies("mysql") || !recs[2].Applies("postgresql") || !recs[3].Applies("mysql") || recs[3].Applies("postgresql") {
		t.Error("conditions")
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{
		"statement maybe\nSELECT 1\n",
		"query II sideways\nSELECT 1\n",
		"statement ok\n\n",
		"skipif\nstatement ok\nSELECT 1\n",
		"frobnicate\n",
		"onlyif mysql\n\nstatement ok\nSELECT 1\n",
	} {
		if _, err := Parse("bad.test", strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestWriteParses(t *testing.T) {
	recs, err := Parse("sample.test", strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	recs = recs[:5] // before the halts
	var b strings.Builder
	if err := Write(&b, recs); err != nil {
		t.Fatal(err)
	}
	again, err := Parse("again.test", strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != len(recs) {
		t.Fatalf("%d records after Write, want %d", len(again), len(recs))
	}
	for i := range recs {
		a, r := again[i], recs[i]
		if a.Kind != r.Kind || a.SQL != r.SQL || a.Sort != r.Sort || a.Label != r.Label || a.ExpectError != r.ExpectError ||
			!slices.Equal(a.Conditions, r.Conditions) {
			t.Errorf("record %d: %+v, written from %+v", i, a, r)
		}
	}
}

func TestSample(t *testing.T) {
	var recs []Record
	recs = append(recs, Record{Kind: Statement, SQL: "s0"}, Record{Kind: Statement, SQL: "s1"})
	for i := range 10 {
		recs = append(recs, Record{Kind: Query, SQL: string(rune('a' + i))})
	}
	var got []string
	for _, r := range Sample(recs, 4) {
		got = append(got, r.SQL)
	}
	if want := []string{"s0", "s1", "a", "e", "i"}; !slices.Equal(got, want) {
		t.Errorf("Sample: %q, want %q", got, want)
	}
}

func TestSortedAndCompare(t *testing.T) {
	a := [][]string{{"2", "b"}, {"1", null}, {"10", "a"}}
	b := [][]string{{"10", "a"}, {"2", "b"}, {"1", null}}
	if !slices.EqualFunc(sorted(a, RowSort), sorted(b, RowSort), slices.Equal) {
		t.Error("rowsort: same rows in another order differ")
	}
	if slices.EqualFunc(sorted(a, NoSort), sorted(b, NoSort), slices.Equal) {
		t.Error("nosort: another order compares equal")
	}
	c := [][]string{{"2", "a"}, {"1", null}, {"10", "b"}}
	if !slices.EqualFunc(sorted(a, ValueSort), sorted(c, ValueSort), slices.Equal) {
		t.Error("valuesort: same values differ")
	}
	rec := &Record{Kind: Query, Sort: RowSort}
	sh := &answer{tag: "SELECT 3", cols: []string{"x 23", "y 25"}, rows: a}
	pg := &answer{tag: "SELECT 3", cols: []string{"x 23", "y 25"}, rows: b}
	if o, d := compare(rec, sh, pg); o != Same {
		t.Errorf("compare: %s %s", o, d)
	}
	for _, change := range []func(*answer){
		func(x *answer) { x.cols = []string{"x 20", "y 25"} },
		func(x *answer) { x.cols = []string{"z 23", "y 25"} },
		func(x *answer) { x.rows = [][]string{{"10", "a"}, {"2", "b"}, {"1", "NULL"}} },
		func(x *answer) { x.rows = x.rows[:2] },
		func(x *answer) { x.tag = "SELECT 2" },
	} {
		other := *pg
		change(&other)
		if o, _ := compare(rec, sh, &other); o != Differs {
			t.Errorf("compare with %+v: %s, want differs", other, o)
		}
	}
}

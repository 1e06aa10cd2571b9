package answer

import "testing"

func TestCanonicalDecimal(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0", "-0": "0", "-0.00": "0", "007.50": "7.5", "1.5": "1.5", "1.49": "1.49",
		"+3": "3", "10": "10", "100.000": "100", ".5": "0.5", "-12.340": "-12.34", "abc": "abc", "1e5": "1e5",
	} {
		if got := CanonicalDecimal(in); got != want {
			t.Errorf("CanonicalDecimal(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDigestMeaning(t *testing.T) {
	cols := []Column{{Name: "a", Type: Int}}
	mk := func(tag string, vals ...Value) *Answer {
		a := &Answer{Columns: cols, Tag: tag}
		for _, v := range vals {
			a.Rows = append(a.Rows, []Value{v})
		}
		a.RowsAffected = int64(len(vals))
		return a
	}
	same := [][2]*Answer{
		{mk("SELECT 2", V(Int, "1"), V(Int, "2")), mk("SELECT 2", V(Int, "2"), V(Int, "1"))},
		{mk("SELECT 1", V(Numeric, "1.50")), mk("SELECT 1", V(Numeric, "1.5"))},
		{mk("SELECT 1", V(Int, "5")), mk("SELECT 1", V(Numeric, "5.0"))},
	}
	for i, p := range same {
		if p[0].Digest(false) != p[1].Digest(false) {
			t.Errorf("pair %d: equal meanings got different digests", i)
		}
	}
	diff := [][2]*Answer{
		{mk("SELECT 1", V(Numeric, "1.5")), mk("SELECT 1", V(Numeric, "1.49"))},
		{mk("SELECT 1", V(Int, "1")), mk("SELECT 1", Null)},
		{mk("SELECT 1", V(Text, "1")), mk("SELECT 1", V(Int, "1"))},
		{mk("SELECT 2", V(Int, "1"), V(Int, "1")), mk("SELECT 1", V(Int, "1"))},
		{&Answer{Tag: "UPDATE 1", RowsAffected: 1}, &Answer{Tag: "UPDATE 2", RowsAffected: 2}},
	}
	for i, p := range diff {
		if p[0].Digest(false) == p[1].Digest(false) {
			t.Errorf("pair %d: different meanings got equal digests", i)
		}
	}
	o1, o2 := mk("SELECT 2", V(Int, "1"), V(Int, "2")), mk("SELECT 2", V(Int, "2"), V(Int, "1"))
	if o1.Digest(true) == o2.Digest(true) {
		t.Error("ordered digests ignore row order")
	}
}

// TestDigestWithHints: an expression SQLite can only type as text
// matches PostgreSQL's typed column once the caller says what the column
// is; without the hint, it does not.
func TestDigestWithHints(t *testing.T) {
	pgAnswer := &Answer{
		Columns: []Column{{Type: TimestampTZ, OID: OIDTimestampTZ}, {Type: JSON, OID: OIDJSONB}, {Type: Bool, OID: OIDBool}},
		Rows:    [][]Value{{{Text: "2026-01-01 10:00:00.5+00"}, {Text: `{"a": 1, "b": [true]}`}, {Text: "t"}}},
		Tag:     "SELECT 1", RowsAffected: 1,
	}
	lite := &Answer{
		Columns: []Column{{Type: Text}, {Type: Text}, {Type: Int}},
		Rows:    [][]Value{{V(Text, "2026-01-01T12:00:00.500+02:00"), V(Text, `{"b":[true],"a":1.0}`), V(Int, "1")}},
		Tag:     "SELECT 1", RowsAffected: 1,
	}
	hints := []Column{{Type: TimestampTZ}, {Type: JSON}}
	if pgAnswer.DigestWith(false, hints) != lite.DigestWith(false, hints) {
		t.Error("hinted digests differ")
	}
	if pgAnswer.Digest(false) != pgAnswer.DigestWith(false, hints) {
		t.Error("hints changed the digest of an answer whose columns are typed")
	}
	if pgAnswer.Digest(false) == lite.Digest(false) {
		t.Error("without hints, text matched a timestamptz and a jsonb")
	}
}

package answer

import (
	"strconv"
	"testing"
)

// benchAnswer is a typical answer: 100 rows of an integer, a decimal, a
// float, text, a timestamp and a boolean.
func benchAnswer() *Answer {
	a := &Answer{Tag: "SELECT 100", RowsAffected: 100, Columns: []Column{
		{Type: Int}, {Type: Numeric}, {Type: Float, OID: OIDFloat8}, {Type: Text}, {Type: TimestampTZ}, {Type: Bool},
	}}
	for i := range 100 {
		a.Rows = append(a.Rows, []Value{
			{Text: strconv.Itoa(i * 7919)},
			{Text: strconv.Itoa(i) + ".50"},
			{Text: "0." + strconv.Itoa(i+1)},
			{Text: "customer " + strconv.Itoa(i)},
			{Text: "2026-01-01 10:00:" + strconv.Itoa(10+i%50) + ".5+00"},
			{Text: "t"},
		})
	}
	return a
}

// TestDigestAllocations: the digest's allocations do not grow with the
// number of values (each row is hashed from the same scratch buffers).
func TestDigestAllocations(t *testing.T) {
	a := benchAnswer()
	allocs := testing.AllocsPerRun(20, func() { a.Digest(false) })
	if allocs > 10 {
		t.Errorf("Digest of 600 values: %v allocations, want at most 10", allocs)
	}
}

func BenchmarkDigest(b *testing.B) {
	a := benchAnswer()
	b.ReportAllocs()
	for b.Loop() {
		a.Digest(false)
	}
}

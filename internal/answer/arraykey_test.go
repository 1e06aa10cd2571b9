package answer

import (
	"bytes"
	"testing"
)

// TestArraySortKey: a key gives its array back, no key is empty (the
// empty array's included), and keys order as PostgreSQL orders arrays:
// element by element, a NULL element after every value, a prefix first
// (TestArraysAsPostgreSQL in package server compares with PostgreSQL).
func TestArraySortKey(t *testing.T) {
	ordered := map[string][]string{
		"int":  {"{}", "{-9000000000}", "{-1}", "{-1,NULL}", "{0}", "{2}", "{10}", "{10,-5}", "{10,NULL}", "{NULL}", "{NULL,1}"},
		"text": {"{}", `{""}`, `{"",a}`, "{A}", "{a}", `{a,""}`, "{a,b}", "{ab}", "{b}", "{é}", "{NULL}"},
		"bool": {"{}", "{f}", "{f,t}", "{t}", "{t,NULL}", "{NULL}"},
	}
	for kind, arrays := range ordered {
		var prev []byte
		for i, a := range arrays {
			items, err := ParseArray(a)
			if err != nil {
				t.Fatal(err)
			}
			key, err := ArraySortKey(items, kind)
			if err != nil || len(key) == 0 {
				t.Fatalf("%s %s: key %x, %v", kind, a, key, err)
			}
			if back, err := ArrayFromSortKey(key, kind); err != nil || back != a {
				t.Errorf("%s %s: back %s, %v", kind, a, back, err)
			}
			if i > 0 && bytes.Compare(prev, key) >= 0 {
				t.Errorf("%s: %s does not sort after %s", kind, a, arrays[i-1])
			}
			prev = key
		}
	}
	if _, err := ArrayFromSortKey([]byte{1, 1, 7}, "bool"); err == nil {
		t.Error("a malformed key read as an array")
	}
}

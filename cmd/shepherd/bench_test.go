package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestBenchMoved: 'shepherd bench' points at the benchmark's own command,
// with the arguments it was given.
func TestBenchMoved(t *testing.T) {
	var out, errs bytes.Buffer
	code := run([]string{"bench", "tpcc", "--target", "cbs"}, &out, &errs)
	if want := "go run ./cmd/shepherd-bench tpcc --target cbs"; code != 2 || !strings.Contains(errs.String(), want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, errs.String(), want)
	}
}

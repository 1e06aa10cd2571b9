package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchBankSQLite runs 'shepherd-bench bank' on SQLite alone (no
// server needed) and checks the table and the JSON it writes.
func TestBenchBankSQLite(t *testing.T) {
	dir := t.TempDir()
	var out, errs bytes.Buffer
	code := run([]string{"bank", "--target", "direct-sqlite", "--sqlite-dir", dir, "--clients", "2",
		"--warmup", "0s", "--duration", "300ms", "--accounts", "50", "--hot-share", "0.5", "--read-only", "0.3",
		"--quiet", "--json", filepath.Join(dir, "r.json")}, &out, &errs)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errs.String())
	}
	for _, want := range []string{"bank on direct-sqlite", "txn/s", "transfer", "inquiry", "check: ok"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	var rep struct {
		Command []string
		Machine struct {
			CPUs    int
			Engines map[string]string
		}
		Runs []struct{ Check string }
	}
	b, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Command) == 0 || rep.Machine.CPUs == 0 || !strings.HasPrefix(rep.Machine.Engines["sqlite"], "SQLite 3.") ||
		len(rep.Runs) != 1 || rep.Runs[0].Check != "ok" {
		t.Errorf("report: %+v", rep)
	}
}

// TestBenchSweepSQLite sweeps two SQLite modes at two client counts and
// checks every output file is written.
func TestBenchSweepSQLite(t *testing.T) {
	dir := t.TempDir()
	var out, errs bytes.Buffer
	code := run([]string{"sweep", "--workload", "bank", "--modes", "direct-sqlite", "--clients", "1,2",
		"--warmup", "0s", "--duration", "200ms", "--accounts", "50", "--quiet", "--sqlite-dir", dir,
		"--out", filepath.Join(dir, "out")}, &out, &errs)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errs.String())
	}
	if !strings.Contains(out.String(), "| 2 | direct-sqlite |") {
		t.Errorf("table:\n%s", out.String())
	}
	for _, f := range []string{"results.json", "results.csv", "runs.csv", "throughput.png", "throughput.svg"} {
		if st, err := os.Stat(filepath.Join(dir, "out", f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	png := filepath.Join(dir, "out", "throughput.png")
	if err := os.Remove(png); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run([]string{"plot", "--title", "again", filepath.Join(dir, "out", "results.json")}, &out, &errs); code != 0 {
		t.Fatalf("bench plot: exit %d\n%s", code, errs.String())
	}
	if _, err := os.Stat(png); err != nil {
		t.Errorf("bench plot did not draw: %v", err)
	}
}

func TestBenchUsage(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run([]string{}, &out, &errs); code != 2 || !strings.Contains(errs.String(), "shepherd-bench sweep") {
		t.Errorf("bench without a command: %d %q", code, errs.String())
	}
	errs.Reset()
	if code := run([]string{"tpcc", "--target", "nonsense", "--quiet"}, &out, &errs); code == 0 || !strings.Contains(errs.String(), "unknown mode") {
		t.Errorf("unknown target: %d %q", code, errs.String())
	}
	errs.Reset()
	if code := run([]string{"bank", "--target", "direct-sqlite", "--durable", "--quiet"}, &out, &errs); code == 0 || !strings.Contains(errs.String(), "--durable") {
		t.Errorf("--durable without --engines local: %d %q", code, errs.String())
	}
	errs.Reset()
	if code := run([]string{"bank", "--target", "postgres://x@127.0.0.1:1/db", "--link-delay", "1ms", "--quiet"}, &out, &errs); code != 2 || !strings.Contains(errs.String(), "--link-") {
		t.Errorf("--link-delay with a URL target: %d %q", code, errs.String())
	}
	errs.Reset()
	if code := run([]string{"bank", "--target", "direct-sqlite", "--link-delay", "-1ms", "--quiet"}, &out, &errs); code == 0 || !strings.Contains(errs.String(), "negative") {
		t.Errorf("a negative link delay: %d %q", code, errs.String())
	}
}

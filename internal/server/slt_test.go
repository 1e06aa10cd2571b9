package server

// The sqllogictest sample (issue 16): SQLite's SQL test corpus run through
// shepherd (cbs over MariaDB, PostgreSQL and SQLite, a fresh cluster per
// file) and on a PostgreSQL 15 database of its own, record by record,
// comparing shepherd's answers with PostgreSQL's (package slt).
//
// TestSQLLogicSample runs the deterministic part kept in testdata/slt (in
// make test). TestSQLLogic runs every .test file under SHEPHERD_SLT_DIR
// (make test-slt; the sample is in ../shared/sqllogictest) and prints the
// figures. Both fail on a different answer, a lost vote, a replica taken
// out or a refusal other than 0A000.

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/slt"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// sltDir holds the part of the sample TestSQLLogicSample runs.
const sltDir = "testdata/slt"

var updateSLTSample = flag.Bool("update-slt-sample", false,
	"rewrite testdata/slt from the sqllogictest files under SHEPHERD_SLT_DIR (sltSample)")

// sltSample says which files of the sample testdata/slt holds, and which
// part of each (slt.Sample: the setup, then every Every-th record). Any
// part is as good a test as the whole, since answers are compared with
// PostgreSQL's; these are chosen to touch every kind of file and to run
// in well under a minute.
var sltSample = []struct {
	File  string
	Every int
}{
	{"select1.test", 40},
	{"random/aggregates/slt_good_0.test", 200},
	{"random/expr/slt_good_0.test", 200},
	{"random/groupby/slt_good_0.test", 200},
	{"index/delete/10/slt_good_0.test", 200},
	{"index/view/10/slt_good_1.test", 200},
	{"index/random/10/slt_good_0.test", 400},
}

// writeSLTSample rewrites the files of sltSample in testdata/slt from dir
// (found.slt, kept by hand, stays).
func writeSLTSample(t *testing.T, dir string) {
	for _, s := range sltSample {
		fh, err := os.Open(filepath.Join(dir, s.File))
		if err != nil {
			t.Fatal(err)
		}
		records, err := slt.Parse(s.File, fh)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "# Part of the sqllogictest file %s (public domain): its setup, then every\n"+
			"# %d-th record. Written by go test ./internal/server -run TestSQLLogicSample -update-slt-sample.\n\n", s.File, s.Every)
		if err := slt.Write(&b, slt.Sample(records, s.Every)); err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(strings.ReplaceAll(s.File, "/", "-"), ".test") + ".slt"
		if err := os.WriteFile(filepath.Join(sltDir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runSLTFile runs the records of one file on a fresh cluster and a fresh
// PostgreSQL database.
func runSLTFile(t *testing.T, name string, records []slt.Record) []slt.Result {
	ctx := context.Background()
	cfg := realCluster(t, "cbs")
	addr, srv := start(t, cfg)
	shepherdDSN := fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr)
	aloneCfg, err := pgconn.ParseConfig(testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	aloneCfg.RuntimeParams["timezone"] = "UTC" // as shepherd's sessions
	r := &slt.Runner{
		Shepherd: &slt.Session{Connect: func(ctx context.Context) (*pgconn.PgConn, error) {
			return pgconn.Connect(ctx, shepherdDSN)
		}},
		Postgres: &slt.Session{Connect: func(ctx context.Context) (*pgconn.PgConn, error) {
			return pgconn.ConnectConfig(ctx, aloneCfg)
		}},
		Health: func(ctx context.Context) (slt.Health, error) {
			ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if err := srv.Cluster().Idle(ictx); err != nil {
				return slt.Health{}, fmt.Errorf("cluster not idle: %w", err)
			}
			var h slt.Health
			for _, st := range srv.Cluster().Replicas() {
				h.Mismatches += st.Mismatches
				if st.State != "up" && st.State != "suspect" {
					h.Out = append(h.Out, fmt.Sprintf("%s %s %s", st.Name, st.State, st.Reason))
				}
			}
			return h, nil
		},
	}
	defer r.Shepherd.Close(ctx)
	defer r.Postgres.Close(ctx)
	began := time.Now()
	results := r.Run(ctx, name, records)
	if out := os.Getenv("SHEPHERD_SLT_REFUSED"); out != "" {
		// Every refused record with its reason, to see which constructs
		// the refusals are made of.
		var b strings.Builder
		for _, res := range results {
			if res.Outcome == slt.Refused {
				fmt.Fprintf(&b, "%s\t%s\t%s\n", res.Pos(), res.Message, strings.Join(strings.Fields(res.Record.SQL), " "))
			}
		}
		if fh, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fh.WriteString(b.String())
			fh.Close()
		}
	}
	var s slt.Summary
	s.Add(results)
	t.Logf("%s: %d records in %v: %d compared, %d same, %d refused, %d findings",
		name, len(results), time.Since(began).Round(time.Millisecond), s.Compared(), s.Counts[slt.Same],
		s.Counts[slt.Refused], len(s.Findings))
	return results
}

// sltFiles lists the .test files (.slt in testdata/slt, as *.test is
// ignored by git) under dir whose path (relative to dir) matches filter,
// in name order.
func sltFiles(t *testing.T, dir string, filter *regexp.Regexp) []string {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if !d.IsDir() && (strings.HasSuffix(path, ".test") || strings.HasSuffix(path, ".slt")) && (filter == nil || filter.MatchString(rel)) {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	if len(files) == 0 {
		t.Fatalf("no .test files in %s", dir)
	}
	return files
}

// runSLT runs files of dir, each on its own cluster, and adds them up.
func runSLT(t *testing.T, dir string, files []string) *slt.Summary {
	var sum slt.Summary
	for _, f := range files {
		fh, err := os.Open(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		records, err := slt.Parse(f, fh)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Run(f, func(t *testing.T) { sum.Add(runSLTFile(t, f, records)) })
	}
	return &sum
}

// checkSLT fails the test on any finding.
func checkSLT(t *testing.T, s *slt.Summary) {
	var b strings.Builder
	s.Write(&b, 200)
	t.Log("\n" + b.String())
	if len(s.Findings) > 0 {
		t.Errorf("%d records answered otherwise than PostgreSQL, failed with an error other than 0A000, or lost a vote (above)", len(s.Findings))
	}
}

// TestSQLLogicSample runs testdata/slt (see the top of this file).
func TestSQLLogicSample(t *testing.T) {
	if testing.Short() {
		t.Skip("sqllogictest sample: real engines (not in -short)")
	}
	if *updateSLTSample {
		dir := os.Getenv("SHEPHERD_SLT_DIR")
		if dir == "" {
			t.Fatal("-update-slt-sample needs SHEPHERD_SLT_DIR")
		}
		writeSLTSample(t, dir)
	}
	s := runSLT(t, sltDir, sltFiles(t, sltDir, nil))
	checkSLT(t, s)
}

// TestSQLLogic runs the .test files under SHEPHERD_SLT_DIR (those whose
// path matches SHEPHERD_SLT_FILES, a regexp, if set) and prints the
// figures; SHEPHERD_SLT_OUT names a file to write them to as well, and
// SHEPHERD_SLT_REFUSED one to append every refused record to (position,
// reason, SQL), to see which constructs the refusals are made of.
func TestSQLLogic(t *testing.T) {
	dir := os.Getenv("SHEPHERD_SLT_DIR")
	if dir == "" {
		t.Skip("set SHEPHERD_SLT_DIR to a sqllogictest directory (make test-slt)")
	}
	var filter *regexp.Regexp
	if f := os.Getenv("SHEPHERD_SLT_FILES"); f != "" {
		filter = regexp.MustCompile(f)
	}
	began := time.Now()
	s := runSLT(t, dir, sltFiles(t, dir, filter))
	if out := os.Getenv("SHEPHERD_SLT_OUT"); out != "" {
		var b strings.Builder
		fmt.Fprintf(&b, "%s (%v)\n", dir, time.Since(began).Round(time.Second))
		s.Write(&b, 1000)
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
	checkSLT(t, s)
}

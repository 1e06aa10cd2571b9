package ecosystem

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadExpected: "*" stands for the default shepherd setups (embedded
// and cbs; diverse is listed by name), and a line naming
// an unknown app or setup is refused rather than silently matching
// nothing.
func TestReadExpected(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "expected.txt")
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	exp, err := readExpected(write("# comment\npsql * 15.1 the catalogs\npgx cbs 15.6 several DDL  # why\ndjango diverse 16 ADD UNIQUE\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(exp) != 4 || exp[key("django", "diverse")].note != "ADD UNIQUE" || exp[key("psql", "embedded")].item != "15.1" || exp[key("psql", "cbs")].note != "the catalogs" ||
		exp[key("pgx", "cbs")].note != "several DDL" {
		t.Errorf("got %v", exp)
	}
	if _, ok := exp[key("pgx", "embedded")]; ok {
		t.Errorf("pgx embedded listed: %v", exp)
	}
	for _, bad := range []string{"nosuchapp * 15.1 x\n", "psql postgres 15.1 x\n", "psql cbs\n"} {
		if _, err := readExpected(write(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// The file in the repository is well formed.
	if _, err := readExpected("expected.txt"); err != nil {
		t.Error(err)
	}
}

// TestChooseSetups: postgres always runs first, the shepherd setups
// follow in the table's order, diverse only when named, and an unknown
// name is refused.
func TestChooseSetups(t *testing.T) {
	for v, want := range map[string]string{
		"":                  "postgres embedded cbs",
		"diverse":           "postgres diverse",
		"diverse, embedded": "postgres embedded diverse",
		"postgres,cbs":      "postgres cbs",
	} {
		got, err := chooseSetups(v)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("chooseSetups(%q) = %v, %v; want %s", v, got, err, want)
		}
	}
	if _, err := chooseSetups("duck"); err == nil {
		t.Error("unknown setup accepted")
	}
}

// TestFirstError: an app's "FAIL step: error" line wins over the rest of
// its output; without one, the last line; without output, the exit error.
func TestFirstError(t *testing.T) {
	for _, c := range []struct{ out, want string }{
		{"ok a\nTraceback...\nFAIL connect: UndefinedTable: no pg_type\nmore\n", "connect: UndefinedTable: no pg_type"},
		{"step x\npsql: error: boom\n\n", "psql: error: boom"},
		{"", "exit status 3"},
	} {
		if got := firstError([]byte(c.out), errors.New("exit status 3")); got != c.want {
			t.Errorf("firstError(%q) = %q, want %q", c.out, got, c.want)
		}
	}
}

// TestClassify: what fails the suite is a failure on shepherd that
// expected.txt does not list, or a failure on PostgreSQL.
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		setup          string
		failed, listed bool
		want           string
	}{
		{"postgres", false, false, "pass"},
		{"postgres", true, false, "broken"},
		{"embedded", false, false, "pass"},
		{"embedded", true, false, "FAIL"},
		{"cbs", true, true, "xfail"},
		{"cbs", false, true, "XPASS"},
	} {
		if got := classify(c.setup, c.failed, c.listed); got != c.want {
			t.Errorf("classify(%s, failed %v, listed %v) = %s, want %s", c.setup, c.failed, c.listed, got, c.want)
		}
	}
}

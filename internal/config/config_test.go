package config

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var drivers = []string{"mysql", "postgres", "sqlite", "sqlite-cgo"}

const good = `
listen = "127.0.0.1:7000"
data_dir = "/tmp/x"
mode = "serial"
f = 1
[[users]]
name = "app"
password = "secret"
[[replicas]]
name = "maria"
driver = "mysql"
dsn = "app:pw@tcp(127.0.0.1:3306)/app"
[replicas.fault]
isolation = "read-uncommitted"
[[replicas]]
name = "pg"
driver = "postgres"
dsn = "postgres://app@127.0.0.1:5432/app?sslmode=disable"
[replicas.fault]
wrong_answer_rate = 0.5
wrong_count_rate = 1
stall_rate = 0.25
stall_ms = 200
seed = -3
[[replicas]]
name = "lite"
driver = "sqlite"
dsn = "lite.db"
schedule = "sequential"
`

func TestGood(t *testing.T) {
	c, err := Parse(good, drivers)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:7000" || c.F != 1 || len(c.Replicas) != 3 || c.Users[0].Password != "secret" {
		t.Errorf("parsed %+v", c)
	}
	want := Fault{WrongAnswerRate: 0.5, WrongCountRate: 1, StallRate: 0.25, StallMS: 200, Seed: -3}
	if c.Replicas[1].Fault != want || c.Replicas[0].Fault != (Fault{Isolation: "read-uncommitted"}) || c.Replicas[2].Fault != (Fault{}) {
		t.Errorf("fault tables: %+v", c.Replicas)
	}
	if err := Embedded().Check(drivers); err != nil {
		t.Errorf("embedded default: %v", err)
	}
}

func TestModes(t *testing.T) {
	for _, mode := range []string{"serial", "cbs", "ss"} {
		if _, err := Parse(strings.Replace(good, `mode = "serial"`, `mode = "`+mode+`"`, 1), drivers); err != nil {
			t.Errorf("mode %s: %v", mode, err)
		}
	}
	c, err := Parse(strings.Replace(good, `mode = "serial"`+"\n", "", 1), drivers)
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != "cbs" || DefaultMode != "cbs" || Embedded().Mode != "cbs" {
		t.Errorf("default mode %q, constant %q, embedded %q; want cbs", c.Mode, DefaultMode, Embedded().Mode)
	}
}

func TestBad(t *testing.T) {
	cases := map[string]string{
		"unknown key":        strings.Replace(good, "f = 1", "f = 1\nfoo = 2", 1),
		"f":                  strings.Replace(good, "f = 1", `f = "one"`, 1),
		"replicas":           strings.Replace(good, "f = 1", "f = 2", 1),
		"replicas[1].driver": strings.Replace(good, `driver = "postgres"`, `driver = "oracle"`, 1),
		"mode":               strings.Replace(good, `mode = "serial"`, `mode = "fast"`, 1),
		"replicas[2].dsn":    strings.Replace(good, `dsn = "lite.db"`, `dsn = ""`, 1),
		"replicas.nme":       strings.Replace(good, `name = "maria"`, `nme = "maria"`, 1),
		"listen":             strings.Replace(good, `"127.0.0.1:7000"`, `"nowhere"`, 1),
		"passthrough":        strings.Replace(good, `mode = "serial"`, `mode = "passthrough"`, 1),

		"replicas[1].fault.wrong_answer_rate": strings.Replace(good, "wrong_answer_rate = 0.5", "wrong_answer_rate = 1.5", 1),
		"replicas[1].fault.wrong_count_rate":  strings.Replace(good, "wrong_count_rate = 1", "wrong_count_rate = -0.1", 1),
		"replicas[1].fault.stall_rate":        strings.Replace(good, "stall_rate = 0.25", "stall_rate = nan", 1),
		"replicas[1].fault.stall_ms":          strings.Replace(good, "stall_ms = 200", "stall_ms = -1", 1),
		"replicas[1].fault.stall_ms ":         strings.Replace(good, "stall_ms = 200", "stall_ms = 0", 1),
		"replicas[1].fault.stall_ms  ":        strings.Replace(good, "stall_ms = 200", "stall_ms = 3600001", 1),
		"replicas[1].fault.isolation":         strings.Replace(good, "seed = -3", `seed = -3`+"\n"+`isolation = "read-uncommitted"`, 1),
		"replicas[0].fault.isolation":         strings.Replace(good, `isolation = "read-uncommitted"`, `isolation = "chaos"`, 1),
		"replicas[2].schedule":                strings.Replace(good, `schedule = "sequential"`, `schedule = "parallel"`, 1),
		"replicas.fault.stall_rates":          strings.Replace(good, "stall_rate = 0.25", "stall_rates = 0.25", 1),
		"replicas.fault.seed":                 strings.Replace(good, "seed = -3", `seed = "x"`, 1),
		"repair.mode":                         good + "\n[repair]\nmode = \"fix\"\n",
		"probe_interval":                      strings.Replace(good, "f = 1", "f = 1\nprobe_interval = \"often\"", 1),
		"probe_timeout":                       strings.Replace(good, "f = 1", "f = 1\nprobe_timeout = \"1ms\"", 1),
		"op_timeout":                          strings.Replace(good, "f = 1", "f = 1\nop_timeout = \"10ms\"", 1),
		"client_write_timeout":                strings.Replace(good, "f = 1", "f = 1\nclient_write_timeout = \"soon\"", 1),
		"repair.every":                        good + "\n[repair]\nevery = \"soon\"\n",
		"repair.rate":                         good + "\n[repair]\nrate = -1\n",
		"cursor_memory_mb":                    strings.Replace(good, "f = 1", "f = 1\ncursor_memory_mb = -5", 1),
		"memory_limit_mb":                     strings.Replace(good, "f = 1", "f = 1\nmemory_limit_mb = -1", 1),
	}
	for field, text := range cases {
		_, err := Parse(text, drivers)
		if err == nil {
			t.Errorf("%s: no error", field)
			continue
		}
		want := strings.TrimSpace(field)
		if field == "passthrough" {
			want = "exactly one replica"
		}
		if field == "f" {
			want = "f"
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q does not name it", field, err)
		}
	}
	if _, err := Parse("listen = [", drivers); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("syntax error: %v", err)
	}
}

// TestExampleFile keeps the documented example valid, with its
// commented-out fault table too.
func TestExampleFile(t *testing.T) {
	const path = "../../shepherd.example.toml"
	if _, err := Load(path, drivers); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	commented := regexp.MustCompile(`(?m)^# (\[replicas\.fault\]|(wrong_answer_rate|wrong_count_rate|stall_rate|stall_ms|seed|isolation) = )`)
	text := commented.ReplaceAllString(string(data), "$1")
	c, err := Parse(text, drivers)
	if err != nil {
		t.Fatalf("example with its fault table uncommented: %v", err)
	}
	if f := c.Replicas[0].Fault; f.StallMS == 0 || f.Isolation == "" {
		t.Errorf("uncommented fault table not read: %+v", f)
	}
}

// TestOpTimeout: op_timeout is off unless set, and then at least 1s.
func TestOpTimeout(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{{"", 0, true}, {"off", 0, true}, {"60s", time.Minute, true}, {"500ms", 0, false}, {"soon", 0, false}} {
		cfg := &Config{OpTimeout: c.in}
		d, err := cfg.OpTimeoutDuration()
		if (err == nil) != c.ok || d != c.want {
			t.Errorf("op_timeout %q: %v, %v; want %v, ok %v", c.in, d, err, c.want, c.ok)
		}
	}
}

// TestDatabaseName: database is read, and the admin console's name is
// refused for it.
func TestDatabaseName(t *testing.T) {
	base := "[[replicas]]\nname = \"a\"\ndriver = \"sqlite\"\ndsn = \"a.db\"\n"
	c, err := Parse("database = \"app\"\n"+base, drivers)
	if err != nil || c.Database != "app" {
		t.Fatalf("database = app: %+v, %v", c, err)
	}
	if _, err := Parse("database = \"shepherd\"\n"+base, drivers); err == nil || !strings.Contains(err.Error(), "database") {
		t.Errorf("database = shepherd: %v, want an error naming the field", err)
	}
}

// TestCursorMemory: cursor_memory_mb in bytes, 256 MiB unless set.
func TestCursorMemory(t *testing.T) {
	c, err := Parse(good, drivers)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.CursorMemory(); got != 256<<20 {
		t.Errorf("default: %d", got)
	}
	c, err = Parse(strings.Replace(good, "f = 1", "f = 1\ncursor_memory_mb = 3", 1), drivers)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.CursorMemory(); got != 3<<20 {
		t.Errorf("3 MiB: %d", got)
	}
}

// TestEmbeddedReplicaLists: the embedded default is the three SQLite
// replicas; the diverse list swaps the third for DuckDB and checks.
func TestEmbeddedReplicaLists(t *testing.T) {
	if got := Embedded().Replicas; !slices.Equal(got, EmbeddedSQLite()) {
		t.Errorf("embedded default replicas %v, want EmbeddedSQLite %v", got, EmbeddedSQLite())
	}
	diverse := EmbeddedWith(EmbeddedDiverse())
	if err := diverse.Check(append(drivers, "duckdb")); err != nil {
		t.Errorf("diverse embedded: %v", err)
	}
	if err := diverse.Check(drivers); err == nil {
		t.Error("diverse embedded checked without a duckdb driver registered")
	}
	if d := diverse.Replicas[2].Driver; d != "duckdb" {
		t.Errorf("third diverse replica's driver %q, want duckdb", d)
	}
}

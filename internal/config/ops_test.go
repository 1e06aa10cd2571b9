package config

import (
	"slices"
	"strings"
	"testing"
)

func TestDSNPassword(t *testing.T) {
	for _, tc := range []struct{ dsn, want string }{
		{"postgres://u:secret@h:5432/db?sslmode=disable", "secret"},
		{"postgres://u:p%40ss@h/db", "p@ss"},
		{"postgres://u@h/db", ""},
		{"postgres://u@h/db?password=s3cret", "s3cret"},
		{"postgresql://h/db?user=u&password=s3cret&sslmode=disable", "s3cret"},
		{"postgres://u@h/db?sslmode=disable&password=p%40ss", "p@ss"},
		{"postgres://u@h/db?password=a%zz&x=1", "a%zz"},
		{"postgres://h:5432/db?password=p@ss", "p@ss"},
		{"postgres://u:p/ss@h/db", "p/ss"},
		{"host=h user=u password = secret dbname=db", "secret"},
		{"u:p@ss@tcp(h:3306)/db?loc=a/b", "p@ss"},
		{"host=h user=u password=secret dbname=db", "secret"},
		{"host=h password='se cr\\'et' dbname=db", "se cr'et"},
		{"u:secret@tcp(127.0.0.1:3306)/db?parseTime=true", "secret"},
		{"u@tcp(127.0.0.1:3306)/db", ""},
		{"lite1.db", ""},
		{"file:x.db?cache=shared", ""},
	} {
		if got := DSNPassword(tc.dsn); got != tc.want {
			t.Errorf("DSNPassword(%q) = %q, want %q", tc.dsn, got, tc.want)
		}
	}
}

func TestSecrets(t *testing.T) {
	c := &Config{
		Users: []User{{Name: "a", Password: "pw-a"}, {Name: "b"}},
		Replicas: []Replica{
			{Name: "pg", DSN: "postgres://u:p%40ss@h/db"},
			{Name: "lite", DSN: "lite.db"},
			{Name: "pgq", DSN: "postgresql://h/db?user=u&password=s3cret"},
		},
	}
	got := c.Secrets()
	for _, want := range []string{"postgres://u:p%40ss@h/db", "p@ss", "p%40ss", "pw-a", "s3cret", "postgresql://h/db?user=u&password=s3cret"} {
		if !slices.Contains(got, want) {
			t.Errorf("Secrets() = %q, lacks %q", got, want)
		}
	}
	if got[0] != c.Replicas[2].DSN || slices.Contains(got, "lite.db") || slices.Contains(got, "") {
		t.Errorf("Secrets() = %q: want the DSN first, no DSN without a password, nothing empty", got)
	}
}

func TestOpsKeys(t *testing.T) {
	base := "[[replicas]]\nname = \"a\"\ndriver = \"sqlite\"\ndsn = \"a.db\"\n"
	for _, tc := range []struct{ text, field string }{
		{"[metrics]\nlisten = \"nohost\"\n", "metrics.listen"},
		{"[log]\nlevel = \"loud\"\n", "log.level"},
		{"[log]\nformat = \"xml\"\n", "log.format"},
	} {
		_, err := Parse("mode = \"passthrough\"\n"+tc.text+base, []string{"sqlite"})
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%q: got %v, want an error naming %s", tc.text, err, tc.field)
		}
	}
	c, err := Parse("mode = \"passthrough\"\n[metrics]\nlisten = \"127.0.0.1:9187\"\n[log]\nlevel = \"debug\"\nformat = \"json\"\nrefused = true\n"+base, []string{"sqlite"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Metrics.Listen != "127.0.0.1:9187" || c.Log.SlogLevel().String() != "DEBUG" || c.Log.Format != "json" || !c.Log.Refused {
		t.Errorf("parsed %+v %+v", c.Metrics, c.Log)
	}
}

func TestRestartNeeded(t *testing.T) {
	old := Embedded()
	old.Users = []User{{Name: "app", Password: "a"}}
	old.Replicas[1].Fault = Fault{StallRate: 0.1, StallMS: 5}
	same := func() *Config {
		c := *old
		c.Replicas = slices.Clone(old.Replicas)
		return &c
	}
	live := same()
	live.Users = []User{{Name: "app", Password: "b"}, {Name: "x"}}
	live.Repair = Repair{Mode: "check", Every: "1m", Rate: 10}
	live.Log.Level, live.Log.Refused = "debug", true
	live.CursorMemoryMB = 1
	live.Replicas[1].Fault = Fault{WrongAnswerRate: 0.5, Seed: 3}
	live.Replicas[2].Fault = Fault{MisorderRate: 1} // the server refuses this one (not wrapped)
	if k := RestartNeeded(old, live); k != "" {
		t.Errorf("live changes: RestartNeeded = %q, want none", k)
	}
	for _, tc := range []struct {
		key    string
		change func(*Config)
	}{
		{"mode", func(c *Config) { c.Mode = "ss" }},
		{"f", func(c *Config) { c.F = 2 }},
		{"data_dir", func(c *Config) { c.DataDir = "elsewhere" }},
		{"primary_timeout", func(c *Config) { c.PrimaryTimeout = "9s" }},
		{"replicas[2].name", func(c *Config) { c.Replicas[2].Name = "z" }},
		{"replicas[1].fault.isolation", func(c *Config) { c.Replicas[1].Fault.Isolation = "read-committed" }},
		{"digest_rows", func(c *Config) { n := 3; c.DigestRows = &n }},
		{"log.format", func(c *Config) { c.Log.Format = "json" }},
	} {
		c := same()
		tc.change(c)
		if k := RestartNeeded(old, c); k != tc.key {
			t.Errorf("%s changed: RestartNeeded = %q", tc.key, k)
		}
	}
}

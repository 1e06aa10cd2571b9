package config

import (
	"strings"
	"testing"
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
[[replicas]]
name = "pg"
driver = "postgres"
dsn = "postgres://app@127.0.0.1:5432/app?sslmode=disable"
[[replicas]]
name = "lite"
driver = "sqlite"
dsn = "lite.db"
`

func TestGood(t *testing.T) {
	c, err := Parse(good, drivers)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:7000" || c.F != 1 || len(c.Replicas) != 3 || c.Users[0].Password != "secret" {
		t.Errorf("parsed %+v", c)
	}
	if err := Embedded().Check(drivers); err != nil {
		t.Errorf("embedded default: %v", err)
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
	}
	for field, text := range cases {
		_, err := Parse(text, drivers)
		if err == nil {
			t.Errorf("%s: no error", field)
			continue
		}
		want := field
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

// TestExampleFile keeps the documented example valid.
func TestExampleFile(t *testing.T) {
	if _, err := Load("../../shepherd.example.toml", drivers); err != nil {
		t.Fatal(err)
	}
}

package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/testenv"
)

// TestTLSConfig: [tls] is read into a TLS configuration; every mistake is
// refused naming its field.
func TestTLSConfig(t *testing.T) {
	certs := testenv.NewCerts(t, t.TempDir())
	cert, key := certs.Cert, certs.Key
	tbl := func(lines ...string) string { return good + "\n[tls]\n" + strings.Join(lines, "\n") + "\n" }
	q := func(k, v string) string { return k + " = " + `"` + v + `"` }
	c, err := Parse(tbl(q("cert", cert), q("key", key), q("client_ca", cert), "require = true"), drivers)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := c.TLS.Config()
	if err != nil || tc == nil || len(tc.Certificates) != 1 || tc.ClientCAs == nil || !c.TLS.RequireTLS() {
		t.Fatalf("tls config %+v, %v", tc, err)
	}
	c, err = Parse(good, drivers)
	if tc, _ := c.TLS.Config(); err != nil || tc != nil || c.TLS.RequireTLS() {
		t.Fatalf("no [tls]: %+v, %v", tc, err)
	}
	missing := filepath.Join(t.TempDir(), "missing.pem")
	for field, text := range map[string]string{
		"tls.key":        tbl(q("cert", cert)),
		"tls.cert":       tbl(q("key", key)),
		"tls.require":    tbl("require = true"),
		"tls.client_ca":  tbl(q("client_ca", cert)),
		"tls.cert ":      tbl(q("cert", missing), q("key", key)),
		"tls.key ":       tbl(q("cert", cert), q("key", missing)),
		"tls.cert  ":     tbl(q("cert", key), q("key", key)),
		"tls.client_ca ": tbl(q("cert", cert), q("key", key), q("client_ca", key)),
		"tls.ca":         tbl(q("ca", cert)),
	} {
		_, err := Parse(text, drivers)
		if err == nil || !strings.Contains(err.Error(), strings.TrimSpace(field)) {
			t.Errorf("%s: error %v does not name it", field, err)
		}
	}
}

// TestMaxConnections: max_connections is 100 (PostgreSQL's default) unless
// set, and must be positive.
func TestMaxConnections(t *testing.T) {
	c, err := Parse(good, drivers)
	if err != nil || c.Connections() != 100 {
		t.Fatalf("default: %v, %v", c.Connections(), err)
	}
	c, err = Parse(strings.Replace(good, "f = 1", "f = 1\nmax_connections = 7", 1), drivers)
	if err != nil || c.Connections() != 7 {
		t.Fatalf("7: %v, %v", c, err)
	}
	for _, v := range []string{"-1", "2000000"} {
		if _, err := Parse(strings.Replace(good, "f = 1", "f = 1\nmax_connections = "+v, 1), drivers); err == nil || !strings.Contains(err.Error(), "max_connections") {
			t.Errorf("max_connections = %s: %v", v, err)
		}
	}
	// max_transactions: 64 unless set; 1 to MaxConnectionsLimit.
	if c, err = Parse(good, drivers); err != nil || c.Transactions() != DefaultMaxTransactions {
		t.Fatalf("default max_transactions: %v, %v", c, err)
	}
	if c, err = Parse(strings.Replace(good, "f = 1", "f = 1\nmax_transactions = 9", 1), drivers); err != nil || c.Transactions() != 9 {
		t.Fatalf("max_transactions = 9: %v, %v", c, err)
	}
	for _, v := range []string{"-1", "2000000"} {
		if _, err := Parse(strings.Replace(good, "f = 1", "f = 1\nmax_transactions = "+v, 1), drivers); err == nil || !strings.Contains(err.Error(), "max_transactions") {
			t.Errorf("max_transactions = %s: %v", v, err)
		}
	}
	// reserved_connections: 3 (PostgreSQL's superuser_reserved_connections)
	// unless set, but fewer than max_connections; set, it must be.
	for _, c := range []struct {
		set  string
		want int
		ok   bool
	}{
		{"", 3, true}, {"max_connections = 2", 1, true}, {"max_connections = 1", 0, true},
		{"reserved_connections = 0", 0, true}, {"reserved_connections = 10", 10, true},
		{"reserved_connections = -1", 0, false}, {"reserved_connections = 100", 0, false},
		{"max_connections = 5\nreserved_connections = 5", 0, false},
	} {
		cfg, err := Parse(strings.Replace(good, "f = 1", "f = 1\n"+c.set, 1), drivers)
		if !c.ok {
			if err == nil || !strings.Contains(err.Error(), "reserved_connections") {
				t.Errorf("%q: %v, want an error naming reserved_connections", c.set, err)
			}
			continue
		}
		if err != nil || cfg.Reserved() != c.want {
			t.Errorf("%q: %v, %v; want %d", c.set, err, cfg, c.want)
		}
	}
}

// TestTrustBeyondLoopback: a user without a password (trust) is refused
// when listen reaches beyond loopback, naming the user's password field;
// on loopback it is fine, and so is a listen anywhere with passwords only.
func TestTrustBeyondLoopback(t *testing.T) {
	trust := good + "\n[[users]]\nname = \"guest\"\n"
	for _, listen := range []string{"127.0.0.1:7000", "localhost:7000", "[::1]:7000"} {
		if _, err := Parse(strings.Replace(trust, `"127.0.0.1:7000"`, `"`+listen+`"`, 1), drivers); err != nil {
			t.Errorf("listen %s: %v", listen, err)
		}
	}
	for _, listen := range []string{"0.0.0.0:7000", ":7000", "[::]:7000", "10.1.2.3:7000", "db.example.com:7000"} {
		_, err := Parse(strings.Replace(trust, `"127.0.0.1:7000"`, `"`+listen+`"`, 1), drivers)
		if err == nil || !strings.Contains(err.Error(), "users[1].password") || !strings.Contains(err.Error(), "listen") {
			t.Errorf("listen %s with a trusted user: %v", listen, err)
		}
		if _, err := Parse(strings.Replace(good, `"127.0.0.1:7000"`, `"`+listen+`"`, 1), drivers); err != nil {
			t.Errorf("listen %s, passwords only: %v", listen, err)
		}
	}
}

// TestAdmins: with users, only those marked admin may use the admin
// console; with none (trust on loopback), everyone may.
func TestAdmins(t *testing.T) {
	c, err := Parse(good+"\n[[users]]\nname = \"ops\"\npassword = \"x\"\nadmin = true\n", drivers)
	if err != nil {
		t.Fatal(err)
	}
	names, everyone := c.Admins()
	if everyone || !names["ops"] || names["app"] {
		t.Errorf("admins %v, everyone %v", names, everyone)
	}
	if _, everyone := Embedded().Admins(); !everyone {
		t.Error("embedded default: not everyone is admin")
	}
}

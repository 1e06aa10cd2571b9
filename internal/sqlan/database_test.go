package sqlan

import (
	"errors"
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestDatabaseStatements checks the analysis of CREATE and DROP
// DATABASE: names as PostgreSQL folds them, IF EXISTS and FORCE, the
// options that leave a database as every replica holds it accepted, the
// others refused with 0A000 naming the option.
func TestDatabaseStatements(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want DatabaseStmt
		verb string
	}{
		{`CREATE DATABASE Test_App`, DatabaseStmt{Create: true, Name: "test_app"}, "CREATE DATABASE"},
		{`CREATE DATABASE "test_app" ENCODING 'UTF8' TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C'`, DatabaseStmt{Create: true, Name: "test_app"}, "CREATE DATABASE"},
		{`CREATE DATABASE x WITH ENCODING = 'utf8' LOCALE = 'C' TEMPLATE = template1`, DatabaseStmt{Create: true, Name: "x"}, "CREATE DATABASE"},
		{`DROP DATABASE "Mixed"`, DatabaseStmt{Name: "Mixed"}, "DROP DATABASE"},
		{`DROP DATABASE IF EXISTS x WITH (FORCE)`, DatabaseStmt{Name: "x", IfExists: true, Force: true}, "DROP DATABASE"},
	} {
		st, err := ParseOne(c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if st.Kind != Database || st.Verb != c.verb || *st.Database != c.want {
			t.Errorf("%s: kind %v verb %q %+v, want %+v", c.sql, st.Kind, st.Verb, st.Database, c.want)
		}
	}
	for _, c := range []struct{ sql, names string }{
		{`CREATE DATABASE x ENCODING 'LATIN1'`, "ENCODING LATIN1"},
		{`CREATE DATABASE x LOCALE 'en_US.UTF-8'`, "LOCALE en_US.UTF-8"},
		{`CREATE DATABASE x TEMPLATE mydb`, "TEMPLATE mydb"},
		{`CREATE DATABASE x OWNER bob`, "OWNER bob"},
		{`CREATE DATABASE x CONNECTION LIMIT 5`, "CONNECTION_LIMIT 5"},
	} {
		_, err := ParseOne(c.sql)
		var pe *pgerr.Error
		if !errors.As(err, &pe) || pe.Code != pgerr.FeatureNotSupported || !strings.Contains(pe.Message, c.names) {
			t.Errorf("%s: %v, want 0A000 naming %s", c.sql, err, c.names)
		}
	}
}

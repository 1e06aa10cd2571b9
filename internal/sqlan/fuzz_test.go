package sqlan

import (
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// FuzzParse feeds arbitrary text to the analyser: it must never panic,
// every error must carry a SQLSTATE, and every statement's dialect forms
// must exist with placeholders the client's parameters can fill.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"SELECT 1", "select a from t where id = $1 order by a", "BEGIN; UPDATE t SET a = $2 WHERE b = $1; COMMIT",
		"INSERT INTO t VALUES ($1, '$2') RETURNING *", "SET x = 1", "SHOW ALL", "-- c\n;", "COPY t FROM STDIN",
		"SELECT $0", "SELECT $99999999999", "/* */ SELECT 'a;b'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		sts, err := Parse(sql)
		if err != nil {
			if c := pgerr.Code(err); c == pgerr.InternalError || len(c) != 5 {
				t.Fatalf("error without a proper SQLSTATE: %v", err)
			}
			return
		}
		for _, st := range sts {
			for _, d := range []driver.Dialect{driver.Postgres, driver.MySQL, driver.SQLite} {
				text, order := st.For(d)
				if text == "" && st.SQL != "" {
					t.Fatalf("empty %v form of %q", d, st.SQL)
				}
				for _, i := range order {
					if i < 0 || i >= st.NumParams {
						t.Fatalf("%v form of %q uses parameter %d of %d", d, st.SQL, i, st.NumParams)
					}
				}
			}
			st.Describe()
		}
	})
}

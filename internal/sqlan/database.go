package sqlan

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// DatabaseStmt describes a CREATE DATABASE or DROP DATABASE (Kind
// Database). shepherd carries them out itself: a database is a set of
// replica databases, one per replica (see server's databases.go).
type DatabaseStmt struct {
	// Create is true for CREATE DATABASE, false for DROP DATABASE.
	Create bool
	// Name is the database's name as PostgreSQL folded it.
	Name string
	// IfExists is DROP DATABASE IF EXISTS.
	IfExists bool
	// Force is DROP DATABASE ... WITH (FORCE).
	Force bool
}

// analyseDatabase classifies CREATE DATABASE and DROP DATABASE. CREATE's
// options that would make the new database differ from what every
// replica can hold are refused: only UTF8, the C locale and the empty
// templates (template0, template1) are accepted, since shepherd creates
// each replica's database empty, in UTF-8 and with byte-order collation.
func analyseDatabase(st *Stmt, n *pg_query.Node) (bool, error) {
	switch {
	case n.GetCreatedbStmt() != nil:
		c := n.GetCreatedbStmt()
		for _, o := range c.Options {
			d := o.GetDefElem()
			if d == nil {
				return true, unsupported("this CREATE DATABASE option")
			}
			name := strings.ToLower(d.Defname)
			val := strings.ToLower(defElemString(d))
			ok := false
			switch name {
			case "encoding":
				ok = val == "utf8" || val == "utf-8" || val == "unicode"
			case "template":
				ok = val == "template0" || val == "template1"
			case "locale", "lc_collate", "lc_ctype":
				ok = val == "c" || val == "posix"
			}
			if !ok {
				return true, unsupported("CREATE DATABASE with %s %s: a database is created in UTF8 with the C locale", strings.ToUpper(name), defElemString(d))
			}
		}
		st.Kind, st.Verb = Database, "CREATE DATABASE"
		st.Database = &DatabaseStmt{Create: true, Name: c.Dbname}
		return true, nil
	case n.GetDropdbStmt() != nil:
		d := n.GetDropdbStmt()
		db := &DatabaseStmt{Name: d.Dbname, IfExists: d.MissingOk}
		for _, o := range d.Options {
			if e := o.GetDefElem(); e != nil && strings.EqualFold(e.Defname, "force") {
				db.Force = true
			}
		}
		st.Kind, st.Verb = Database, "DROP DATABASE"
		st.Database = db
		return true, nil
	}
	return false, nil
}

// defElemString is an option's value as written: a string, a name or a
// number ("" when it has none).
func defElemString(d *pg_query.DefElem) string {
	a := d.Arg
	switch {
	case a == nil:
		return ""
	case a.GetString_() != nil:
		return a.GetString_().Sval
	case a.GetTypeName() != nil:
		var parts []string
		for _, p := range a.GetTypeName().Names {
			parts = append(parts, p.GetString_().GetSval())
		}
		return strings.Join(parts, ".")
	case a.GetInteger() != nil:
		return strconv.Itoa(int(a.GetInteger().Ival))
	}
	return "?"
}

package sqlan

import "github.com/shepherd-db/shepherd/internal/pgfunc"

// nullifType is the type of NULLIF(a, b): a's, unless resolving the
// implied a = b converts a. PostgreSQL has = between any two integer
// types and between float4 and float8, which keep a's type; an integer
// compared with a numeric or a float, or a numeric with a float, is
// converted to the wider type (NULLIF(1, 2.5) is numeric, its values a's
// digits), float8 for any float. An untyped literal a takes b's type.
func nullifType(a, b pgType) pgType {
	switch {
	case a.lit():
		if b.name != "" {
			return pgType{name: b.name}
		}
		return a
	case category(a.name) != 'N' || category(b.name) != 'N' || a.name == b.name:
		return a
	case pgfunc.NumericRank(a.name) >= pgfunc.NumericRank(b.name):
		return a
	case isInteger(a.name) && isInteger(b.name), isFloat(a.name) && isFloat(b.name):
		return a
	case isFloat(b.name):
		return typ("float8") // no = of an exact type with float4 either
	}
	return keepValues(b.name, a)
}

func isFloat(name string) bool { return name == "float4" || name == "float8" }

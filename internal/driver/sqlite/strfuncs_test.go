package sqlite

import "testing"

// TestStringFunctionArguments checks what the string functions do with
// values SQLite may hand them that PostgreSQL's text and int4 arguments
// would not be: a float as text or a text as a count fails as a clear
// refusal (0A000), an integer beyond int4 as PostgreSQL's 22003, never
// an answer PostgreSQL would not give. (Their PostgreSQL semantics are
// checked against PostgreSQL itself by driver/mysql's
// TestStringFunctionsAsPostgres.)
func TestStringFunctionArguments(t *testing.T) {
	for _, c := range []struct {
		name string
		args []any
		code string
	}{
		{"reverse", []any{2.5}, "0A000"},
		{"repeat", []any{"a", "3"}, "0A000"},
		{"repeat", []any{"a", 2.0}, "0A000"},
		{"left", []any{"abc", int64(1) << 40}, "22003"},
		{"chr", []any{int64(-1) << 35}, "22003"},
	} {
		_, err := stringFuncs[c.name](c.args)
		if err == nil {
			t.Errorf("%s%v: no error, want %s", c.name, c.args, c.code)
			continue
		}
		if code, _, ok := pgFunctionErrorOf(err.Error()); !ok || code != c.code {
			t.Errorf("%s%v: %v, want SQLSTATE %s", c.name, c.args, err, c.code)
		}
	}
	if got, err := stringFuncs["reverse"]([]any{int64(123)}); err != nil || got != "321" {
		t.Errorf("reverse(123) = %v, %v; want 321 (an integer's text, as PostgreSQL's cast)", got, err)
	}
}

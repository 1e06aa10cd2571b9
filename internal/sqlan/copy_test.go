package sqlan

import (
	"testing"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestCopyOptions: COPY's options are read, defaulted and refused as
// PostgreSQL 15's ProcessCopyOptions does (the messages are checked
// against PostgreSQL itself by the server's TestCopyAsPostgres).
func TestCopyOptions(t *testing.T) {
	st, err := ParseOne(`COPY t (a, "B") FROM STDIN WITH (FORMAT csv, HEADER match, DELIMITER ';', NULL 'x', FORCE_NULL (a), FORCE_NOT_NULL ("B"))`)
	if err != nil {
		t.Fatal(err)
	}
	c := st.Copy
	if st.Kind != Copy || !c.From || c.Table != "t" || len(c.Columns) != 2 || c.Columns[1] != "B" || c.Format != CopyCSV ||
		!c.HeaderMatch || c.Delimiter != ";" || c.Null != "x" || c.Quote != `"` || c.Escape != `"` ||
		len(c.ForceNull) != 1 || len(c.ForceNotNull) != 1 {
		t.Errorf("csv options: %+v", c)
	}
	st, err = ParseOne("COPY (SELECT a FROM t ORDER BY a) TO STDOUT WITH CSV HEADER FORCE QUOTE *")
	if err != nil {
		t.Fatal(err)
	}
	if c := st.Copy; c.From || c.Query != "SELECT a FROM t ORDER BY a" || !c.Header || !c.ForceQuoteAll || c.Null != "" {
		t.Errorf("old syntax: %+v", c)
	}
	if st, err = ParseOne("copy t to stdout binary"); err != nil || st.Copy.Format != CopyBinary {
		t.Errorf("binary: %v %+v", err, st)
	}
	if st, err = ParseOne("COPY t FROM STDIN"); err != nil || st.Copy.Delimiter != "\t" || st.Copy.Null != `\N` {
		t.Errorf("text defaults: %v %+v", err, st)
	}
	for sql, want := range map[string]string{
		"COPY t FROM '/etc/passwd'":                           pgerr.InsufficientPrivilege,
		"COPY t TO PROGRAM 'ls'":                              pgerr.InsufficientPrivilege,
		"COPY t TO STDOUT (FORMAT xml)":                       pgerr.InvalidParameterValue,
		"COPY t TO STDOUT (FORMAT csv, FORMAT text)":          pgerr.SyntaxError,
		"COPY t TO STDOUT (DELIMITER 'ab')":                   pgerr.FeatureNotSupported,
		"COPY t TO STDOUT (DELIMITER 'a')":                    pgerr.FeatureNotSupported,
		"COPY t TO STDOUT (FORMAT binary, NULL 'x')":          pgerr.SyntaxError,
		"COPY t TO STDOUT (QUOTE '\"')":                       pgerr.FeatureNotSupported,
		"COPY t FROM STDIN (FORMAT csv, FORCE_QUOTE (a))":     pgerr.FeatureNotSupported,
		"COPY t TO STDOUT (FORMAT csv, FORCE_NULL (a))":       pgerr.FeatureNotSupported,
		"COPY t TO STDOUT (FORMAT csv, HEADER match)":         pgerr.SyntaxError,
		"COPY t TO STDOUT (FORMAT csv, DELIMITER '\"')":       pgerr.InvalidParameterValue,
		"COPY t TO STDOUT (NULL 'a\tb')":                      pgerr.FeatureNotSupported,
		"COPY t TO STDOUT (BOGUS)":                            pgerr.SyntaxError,
		"COPY other.t TO STDOUT":                              pgerr.UndefinedTable,
		"COPY t TO STDOUT (FORMAT csv, ESCAPE 'ab')":          pgerr.FeatureNotSupported,
		"COPY t TO STDOUT (ENCODING 'LATIN1')":                pgerr.FeatureNotSupported,
		"COPY t FROM STDIN (FORMAT text, FORCE_NOT_NULL (a))": pgerr.FeatureNotSupported,
	} {
		if _, err := ParseOne(sql); pgerr.Code(err) != want {
			t.Errorf("%s: %v, want %s", sql, err, want)
		}
	}
}

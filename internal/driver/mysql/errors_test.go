package mysql

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

func myErr(number uint16, state, msg string) *mysql.MySQLError {
	e := &mysql.MySQLError{Number: number, Message: msg}
	copy(e.SQLState[:], state)
	return e
}

// TestErrorMapping: MariaDB's error numbers, and the SQLSTATEs only MySQL
// uses, become the codes PostgreSQL gives the same mistake.
func TestErrorMapping(t *testing.T) {
	for _, c := range []struct {
		err  *mysql.MySQLError
		want string
	}{
		{myErr(1146, "42S02", "Table 't.nosuch' doesn't exist"), pgerr.UndefinedTable},
		{myErr(1109, "42S02", "Unknown table 'x' in field list"), pgerr.UndefinedTable},
		{myErr(1054, "42S22", "Unknown column 'nocol' in 'SELECT'"), pgerr.UndefinedColumn},
		{myErr(1247, "42S22", "Reference 'spent' not supported (reference to group function)"), pgerr.UndefinedColumn},
		{myErr(1136, "21S01", "Column count doesn't match value count at row 1"), pgerr.SyntaxError},
		{myErr(1582, "42000", "Incorrect parameter count in the call to native function 'abs'"), pgerr.UndefinedFunction},
		{myErr(4078, "HY000", "Illegal parameter data types row and int for operation '='"), pgerr.UndefinedFunction},
		{myErr(1241, "21000", "Operand should contain 1 column(s)"), pgerr.SyntaxError},
		{myErr(1222, "21000", "The used SELECT statements have a different number of columns"), pgerr.SyntaxError},
		{myErr(1242, "21000", "Subquery returns more than 1 row"), "21000"},
		{myErr(1091, "42000", "Can't DROP COLUMN `nocol`; check that it exists"), pgerr.UndefinedColumn},
		{myErr(1091, "42000", "Can't DROP INDEX `nosuch`; check that it exists"), pgerr.UndefinedObject},
		{myErr(1066, "42000", "Not unique table/alias: 'e'"), "42712"},
		{myErr(1005, "HY000", "Can't create table `t`.`bad_fk` (errno: 150 \"Foreign key constraint is incorrectly formed\")"), "42830"},
		{myErr(1005, "HY000", "Can't create table `t`.`x` (errno: 28 \"No space left on device\")"), pgerr.InternalError},
		{myErr(1451, "23000", "Cannot delete or update a parent row: a foreign key constraint fails"), pgerr.ForeignKeyViolation},
		{myErr(1829, "HY000", "Cannot drop column 'id': needed in a foreign key constraint"), "2BP01"},
		{myErr(1701, "42000", "Cannot truncate a table referenced in a foreign key constraint"), pgerr.FeatureNotSupported},
		{myErr(1292, "22007", "Incorrect datetime value: 'x' for column `t`.`d` at row 1"), "22007"},
		{myErr(1366, "22007", "Incorrect integer value: 'abc' for column `t`.`n` at row 1"), pgerr.InvalidTextRepresentation},
		{myErr(1690, "22003", "BIGINT UNSIGNED value is out of range in '18446744073709551615 + (1)'"), pgerr.DivisionByZero},
		// A BIGINT division's overflow quotes the whole division, the
		// divisor's check inside: bigint out of range, not 22012.
		{myErr(1690, "22003", "BIGINT value is out of range in '`b` DIV (case when `m` = 0 then 18446744073709551615 + (`m` + 22012) else `m` end)'"), pgerr.NumericValueOutOfRange},
		{myErr(1690, "22003", "BIGINT UNSIGNED value is out of range in '18446744073509551616 + count(`t`.`x`)'"), pgerr.FeatureNotSupported},
		// Numbers not listed: MySQL's own SQLSTATEs are translated,
		// standard ones kept.
		{myErr(9001, "42S02", "some missing table"), pgerr.UndefinedTable},
		{myErr(9002, "42S22", "some missing column"), pgerr.UndefinedColumn},
		{myErr(9003, "21S01", "some count mismatch"), pgerr.SyntaxError},
		{myErr(9004, "HY000", "anything"), pgerr.InternalError},
		{myErr(9005, "22012", "standard"), pgerr.DivisionByZero},
	} {
		if got := classify(context.Background(), c.err).Code; got != c.want {
			t.Errorf("%d %s %q: %s, want %s", c.err.Number, c.err.SQLState, c.err.Message, got, c.want)
		}
	}
	for msg, want := range map[string]string{
		"Create  table `t`.`bad_fk` with foreign key (x) constraint failed. Referenced table `t`.`no_such` not found in the data dictionary.":                                     pgerr.UndefinedTable,
		"Create  table `t`.`bad_fk3` foreign key (x) constraint failed. Column nocol was not found.":                                                                              pgerr.UndefinedColumn,
		"Create  table `t`.`bad_fk4` with foreign key (x) constraint failed. Field type or character set for column 'x' does not match referenced column 'id'.":                   pgerr.DatatypeMismatch,
		"Create  table `t`.`bad_fk2` with foreign key (x) constraint failed. There is no index in the referenced table where the referenced columns appear as the first columns.": "42830",
		"something else": "",
	} {
		if got := foreignKeyWarningCode(msg); got != want {
			t.Errorf("warning %q: %q, want %q", msg, got, want)
		}
	}
}

// TestErrorsOnMariaDB runs mistakes on a real MariaDB and checks the
// SQLSTATE PostgreSQL gives each.
func TestErrorsOnMariaDB(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := Open(ctx, driver.Spec{Name: "maria1", DSN: testenv.MariaDB(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	dc, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	c := dc.(*Conn)
	exec := func(sql string) error {
		q := driver.Query{SQL: sql}
		if strings.HasPrefix(sql, "DROP TABLE") {
			q.Verb = "DROP TABLE" // as shepherd's parser says
		}
		_, err := c.Exec(ctx, q)
		if err != nil {
			err = c.failure(ctx, q, err)
		}
		return err
	}
	for _, sql := range []string{
		"CREATE TABLE p (id INT PRIMARY KEY, v INT, name VARCHAR(10))",
		"CREATE TABLE ch (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES p (id))",
		"INSERT INTO p VALUES (1, 1, 'a'), (2, 2, 'b')",
		"INSERT INTO ch VALUES (1, 1)",
	} {
		if err := exec(sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	for _, c := range []struct{ sql, want string }{
		{"CREATE TABLE bad1 (id INT PRIMARY KEY, x INT REFERENCES no_such (id))", pgerr.UndefinedTable},
		{"CREATE TABLE bad2 (id INT PRIMARY KEY, x INT, FOREIGN KEY (x) REFERENCES p (nocol))", pgerr.UndefinedColumn},
		{"CREATE TABLE bad3 (id INT PRIMARY KEY, x INT, FOREIGN KEY (x) REFERENCES p (v))", "42830"},
		{"CREATE TABLE bad4 (id INT PRIMARY KEY, x VARCHAR(10), FOREIGN KEY (x) REFERENCES p (id))", pgerr.DatatypeMismatch},
		{"DROP TABLE p", "2BP01"},
		{"DELETE FROM p WHERE id = 1", pgerr.ForeignKeyViolation},
		{"TRUNCATE p", pgerr.FeatureNotSupported},
		{"ALTER TABLE p DROP COLUMN id", "2BP01"},
		{"SELECT * FROM nosuch", pgerr.UndefinedTable},
		{"SELECT nocol FROM p", pgerr.UndefinedColumn},
		{"INSERT INTO p (id) VALUES (5, 6)", pgerr.SyntaxError},
		{"SELECT abs(1, 2)", pgerr.UndefinedFunction},
		{"SELECT count(DISTINCT (id, v)) FROM p", pgerr.SyntaxError},
		{"SELECT id FROM p WHERE id = (SELECT id FROM p)", "21000"},
		{"SELECT id FROM p UNION SELECT id, v FROM p", pgerr.SyntaxError},
		{"ALTER TABLE p DROP COLUMN nocol", pgerr.UndefinedColumn},
		{"DROP INDEX nosuch ON p", pgerr.UndefinedObject},
		{"SELECT * FROM p, p", "42712"},
		// The SQL writer's check of a count compared with an average
		// (dialect's avgCompare), with a count scaled to the limit.
		{"SELECT CAST(18446744073509551616 + COUNT(`v`) * 100000000 - 18446744073509551616 AS SIGNED) FROM p", pgerr.FeatureNotSupported},
		{"SELECT CAST(18446744073509551616 + COUNT(`v`) * 99999999 - 18446744073509551616 AS SIGNED) FROM p", ""},
	} {
		err := exec(c.sql)
		if got := pgerr.Code(err); got != c.want {
			t.Errorf("%s: %v, want SQLSTATE %s", c.sql, err, c.want)
		}
	}
}

// TestRangeChecksOnMariaDB runs the SQL writer's range checks of a
// smallint and an integer result (dialect's inRange around - x and
// integer division), its bigint negation, -1 * x, and bigint division
// on a real MariaDB: in range the value itself, out of range
// PostgreSQL's 22003 and message.
func TestRangeChecksOnMariaDB(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := Open(ctx, driver.Spec{Name: "maria1", DSN: testenv.MariaDB(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	dc, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	c := dc.(*Conn)
	int2 := func(x string) string {
		return "SELECT (CAST(" + Int2RangeMark + "(- " + x + ") - 18446744073709486080 AS SIGNED) - 32768)"
	}
	int4 := func(x string) string {
		return "SELECT (CAST(" + Int4RangeMark + "(- " + x + ") - 18446744069414584320 AS SIGNED) - 2147483648)"
	}
	for _, w := range []struct{ sql, value, msg string }{
		{int2("-32768"), "", "smallint out of range"},
		{int2("-32767"), "32767", ""},
		{int2("32767"), "-32767", ""},
		{int2("32768"), "-32768", ""},
		{int2("32769"), "", "smallint out of range"},
		{int2("NULL"), "NULL", ""},
		{int4("-2147483648"), "", "integer out of range"},
		{int4("-2147483647"), "2147483647", ""},
		{int4("2147483648"), "-2147483648", ""},
		{int4("2147483649"), "", "integer out of range"},
		// MariaDB's - x of a constant bigint minimum is a DECIMAL,
		// 9223372036854775808, and 0 - x wraps to x; -1 * x overflows
		// as PostgreSQL's - x does.
		{"SELECT (-1 * (CAST(-9223372036854775807 AS SIGNED) - 1))", "", "bigint out of range"},
		{"SELECT (-1 * b) FROM (SELECT CAST(-9223372036854775807 AS SIGNED) - 1 AS b) x", "", "bigint out of range"},
		{"SELECT (-1 * CAST(-9223372036854775807 AS SIGNED))", "9223372036854775807", ""},
		{"SELECT (-1 * -5)", "5", ""},
		{"SELECT (-1 * NULL)", "NULL", ""},
		{"SELECT - b FROM (SELECT CAST(-9223372036854775807 AS SIGNED) - 1 AS b) x", "", "bigint out of range"},
		{"SELECT ABS(CAST(-9223372036854775807 AS SIGNED) - 1)", "", "bigint out of range"},
		// Integer division (dialect's divide): its minimum DIV -1, the
		// divisor checked for zero as the SQL writer does.
		{"SELECT (b DIV (CASE WHEN d = 0 AND b IS NOT NULL THEN " + DivisionByZeroMark + "d + 22012) ELSE d END)) FROM (SELECT CAST(-9223372036854775807 AS SIGNED) - 1 AS b, -1 AS d) x", "", "bigint out of range"},
		{"SELECT (b DIV (CASE WHEN d = 0 AND b IS NOT NULL THEN " + DivisionByZeroMark + "d + 22012) ELSE d END)) FROM (SELECT CAST(-9223372036854775807 AS SIGNED) - 1 AS b, 2 AS d) x", "-4611686018427387904", ""},
		{"SELECT (CAST(" + Int4RangeMark + "(i DIV -1) - 18446744069414584320 AS SIGNED) - 2147483648) FROM (SELECT -2147483648 AS i) x", "", "integer out of range"},
		{"SELECT (CAST(" + Int4RangeMark + "(i DIV -1) - 18446744069414584320 AS SIGNED) - 2147483648) FROM (SELECT -2147483647 AS i) x", "2147483647", ""},
	} {
		a, err := c.Exec(ctx, driver.Query{SQL: w.sql, Verb: "SELECT", ReturnsRows: true})
		if err != nil {
			err = c.failure(ctx, driver.Query{SQL: w.sql, Verb: "SELECT", ReturnsRows: true}, err)
		}
		switch {
		case w.msg != "":
			if pgerr.Code(err) != pgerr.NumericValueOutOfRange || !strings.Contains(err.Error(), w.msg) {
				t.Errorf("%s: %v %v, want 22003 %q", w.sql, a, err, w.msg)
			}
		case err != nil:
			t.Errorf("%s: %v", w.sql, err)
		default:
			if len(a.Rows) != 1 {
				t.Fatalf("%s: %d rows", w.sql, len(a.Rows))
			}
			v := a.Rows[0][0]
			if got := map[bool]string{true: "NULL", false: v.Text}[v.Null]; got != w.value {
				t.Errorf("%s: %s, want %s", w.sql, got, w.value)
			}
		}
	}
}

// TestMathFailuresOnMariaDB: the marked overflows the SQL writer makes
// MariaDB evaluate where PostgreSQL's math functions fail, and MariaDB's
// own overflow of exp and pow, are reported with PostgreSQL's SQLSTATE
// and message on a real MariaDB.
func TestMathFailuresOnMariaDB(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := Open(ctx, driver.Spec{Name: "maria1", DSN: testenv.MariaDB(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	dc, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	c := dc.(*Conn)
	fail := func(mark string) string {
		return "SELECT CASE WHEN x < 0 THEN " + mark + "(x IS NULL) + 2000) ELSE x END FROM (SELECT -1e0 AS x) t"
	}
	for _, w := range []struct{ sql, code, msg string }{
		{fail(SqrtNegativeMark), "2201F", "cannot take square root of a negative number"},
		{fail(LogZeroMark), "2201E", "cannot take logarithm of zero"},
		{fail(LogNegativeMark), "2201E", "cannot take logarithm of a negative number"},
		{fail(PowerZeroNegativeMark), "2201F", "zero raised to a negative power is undefined"},
		{fail(PowerComplexMark), "2201F", "a negative number raised to a non-integer power yields a complex result"},
		{fail(UnderflowMark), "22003", "value out of range: underflow"},
		{"SELECT EXP(1000e0)", "22003", "value out of range: overflow"},
		{"SELECT POW(10e0, x) FROM (SELECT 400e0 AS x) t", "22003", "value out of range: overflow"},
	} {
		q := driver.Query{SQL: w.sql, Verb: "SELECT", ReturnsRows: true}
		a, err := c.Exec(ctx, q)
		if err != nil {
			err = c.failure(ctx, q, err)
		}
		var pe *pgerr.Error
		if !errors.As(err, &pe) || pe.Code != w.code || pe.Message != w.msg {
			t.Errorf("%s: %v %v, want %s %q", w.sql, a, err, w.code, w.msg)
		}
	}
}

package repair

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/dialect"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/sqlite"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// table is one catalog table with what the SQL writers need.
type table struct {
	t *schema.Table
	// key holds the indexes of the key's columns in t.Columns.
	key []int
	// hints are the columns' PostgreSQL types, for reading answers
	// canonically.
	hints []answer.Column
	// hashed says every column has the same canonical text in every
	// engine, so that ranges can be hashed inside the databases.
	hashed bool
}

func newTable(t *schema.Table) (*table, error) {
	tb := &table{t: t, hashed: true}
	if len(t.Key) == 0 {
		return nil, fmt.Errorf("table %s has no primary key", t.Name)
	}
	for _, k := range t.Key {
		i := -1
		for j, c := range t.Columns {
			if c.Name == k {
				i = j
			}
		}
		if i < 0 {
			return nil, fmt.Errorf("table %s: key column %s is not a column", t.Name, k)
		}
		tb.key = append(tb.key, i)
	}
	for _, c := range t.Columns {
		h := answer.Column{Name: c.Name, Type: dialect.Family(c.Type)}
		switch c.Type {
		case "bpchar":
			h.OID = answer.OIDBPChar
		case "float4":
			h.OID = answer.OIDFloat4
		}
		tb.hints = append(tb.hints, h)
		switch c.Type {
		case "int2", "int4", "int8", "bool", "text", "varchar", "bpchar", "date", "timestamp", "timestamptz", "uuid", "bytea":
		case "numeric":
			tb.hashed = tb.hashed && len(c.Mods) > 0
		default:
			tb.hashed = false
		}
	}
	return tb, nil
}

// sqlw writes one statement for one dialect, numbering placeholders and
// collecting their arguments in the order the text consumes them.
type sqlw struct {
	d    driver.Dialect
	b    strings.Builder
	args []driver.Arg
}

func (w *sqlw) str(s string) *sqlw { w.b.WriteString(s); return w }

func (w *sqlw) ident(name string) *sqlw {
	if w.d == driver.MySQL {
		return w.str("`" + strings.ReplaceAll(name, "`", "``") + "`")
	}
	return w.str(`"` + strings.ReplaceAll(name, `"`, `""`) + `"`)
}

// param writes a placeholder for a value of column c.
func (w *sqlw) param(c schema.Column, v answer.Value) *sqlw {
	w.args = append(w.args, argFor(w.d, c, v))
	if w.d == driver.Postgres {
		return w.str("$" + strconv.Itoa(len(w.args)))
	}
	return w.str("?")
}

// text writes a placeholder for a text value.
func (w *sqlw) text(s string) *sqlw {
	return w.param(schema.Column{Type: "text"}, answer.V(answer.Text, s))
}

func (w *sqlw) query(verb string, rows bool) driver.Query {
	return driver.Query{SQL: w.b.String(), Args: w.args, ReturnsRows: rows, Verb: verb}
}

// argFor binds value v (as an engine answered it, in PostgreSQL's text
// form) for column c in dialect d.
func argFor(d driver.Dialect, c schema.Column, v answer.Value) driver.Arg {
	if v.Null {
		return driver.Arg{Null: true}
	}
	fam := dialect.Family(c.Type)
	if d == driver.Postgres {
		// PostgreSQL types an untyped parameter from its context, which
		// is the column; bytea alone must say it is raw bytes.
		if fam == answer.Bytes {
			return driver.Arg{Type: answer.Bytes, Text: v.Text}
		}
		return driver.Arg{Text: v.Text}
	}
	if fam == answer.Bool {
		if b, ok := answer.ParseBool(v.Text); ok {
			t := "0"
			if b {
				t = "1"
			}
			return driver.Arg{Type: answer.Int, Text: t}
		}
	}
	return dialect.Arg(driver.Arg{Text: v.Text}, fam, d)
}

// columnText writes column c as the canonical text every engine gives
// the same value alike (for the types of table.hashed; others get the
// engine's own text, which is consistent within one engine).
func (w *sqlw) columnText(c schema.Column) {
	col := func() { w.ident(c.Name) }
	switch w.d {
	case driver.Postgres:
		switch c.Type {
		case "bool":
			w.str("CASE WHEN ")
			col()
			w.str(" THEN '1' WHEN NOT ")
			col()
			w.str(" THEN '0' END")
		case "bpchar":
			w.str("rtrim(")
			col()
			w.str("::text, ' ')")
		case "text", "varchar":
			col()
		case "date":
			w.str("to_char(")
			col()
			w.str(", 'YYYY-MM-DD')")
		case "timestamp":
			w.str("to_char(")
			col()
			w.str(", 'YYYY-MM-DD HH24:MI:SS.US')")
		case "timestamptz":
			w.str("to_char(")
			col()
			w.str(" AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')")
		case "bytea":
			w.str("encode(")
			col()
			w.str(", 'hex')")
		default:
			col()
			w.str("::text")
		}
	case driver.MySQL:
		switch c.Type {
		case "bpchar":
			w.str("RTRIM(")
			col()
			w.str(")")
		case "text", "varchar":
			col()
		case "date":
			w.str("DATE_FORMAT(")
			col()
			w.str(", '%Y-%m-%d')")
		case "timestamp", "timestamptz":
			w.str("DATE_FORMAT(")
			col()
			w.str(", '%Y-%m-%d %H:%i:%s.%f')")
		case "bytea":
			w.str("LOWER(HEX(")
			col()
			w.str("))")
		case "uuid":
			w.str("LOWER(CAST(")
			col()
			w.str(" AS CHAR))")
		default:
			w.str("CAST(")
			col()
			w.str(" AS CHAR)")
		}
	default: // SQLite
		switch c.Type {
		case "numeric":
			scale := 0
			if len(c.Mods) == 2 {
				scale = int(c.Mods[1])
			}
			// Stored as the double nearest the decimal at the scale (p <=
			// 15): printing that many places gives the decimal back. A
			// double that is not at the scale (more digits than the
			// column keeps) prints as itself, so that it differs from
			// the other engines' text; printed at the scale it would
			// look the same.
			fixed := func() {
				w.str("printf('%." + strconv.Itoa(scale) + "f', ")
				col()
				w.str(")")
			}
			w.str("CASE WHEN ")
			col()
			w.str(" = CAST(")
			fixed()
			w.str(" AS REAL) THEN ")
			fixed()
			w.str(" ELSE CAST(")
			col()
			w.str(" AS TEXT) END")
		case "bpchar":
			w.str("rtrim(")
			col()
			w.str(", ' ')")
		case "text", "varchar", "date":
			col()
		case "timestamp", "timestamptz":
			// Stored as YYYY-MM-DD HH:MM:SS[.ffffff]: pad to six places.
			w.str("CASE WHEN length(")
			col()
			w.str(") = 19 THEN ")
			col()
			w.str(" || '.000000' ELSE substr(")
			col()
			w.str(" || '000000', 1, 26) END")
		case "bytea":
			w.str("lower(hex(")
			col()
			w.str("))")
		case "uuid":
			w.str("lower(")
			col()
			w.str(")")
		default:
			w.str("CAST(")
			col()
			w.str(" AS TEXT)")
		}
	}
}

// rowHash writes the lowercase hex MD5 of the row's canonical text: per
// column 'N|' for NULL; for text and bytes 'V', the text's length in
// bytes, ':' and the text (lengths make the concatenation unambiguous);
// for the other types, whose text never holds a '|' nor starts with 'N',
// the text and '|'.
func (w *sqlw) rowHash(t *table) {
	var open, sep, close string
	switch w.d {
	case driver.Postgres:
		open, sep, close = "md5(", " || ", ")"
	case driver.MySQL:
		open, sep, close = "MD5(CONCAT(", ", ", "))"
	default:
		open, sep, close = sqlite.MD5Function+"(", " || ", ")"
	}
	w.str(open)
	for i, c := range t.t.Columns {
		if i > 0 {
			w.str(sep)
		}
		w.columnToken(c)
	}
	w.str(close)
}

// columnToken writes one column's part of the row text (see rowHash).
// NULL is tested first: some functions do not pass it on (SQLite's
// printf and hex make "0.000" and "" of it, a CASE on a NULL boolean
// takes its ELSE).
func (w *sqlw) columnToken(c schema.Column) {
	framed := c.Type == "text" || c.Type == "varchar" || c.Type == "bpchar" || c.Type == "bytea" ||
		c.Type == "json" || c.Type == "jsonb"
	w.str("CASE WHEN ")
	w.ident(c.Name)
	w.str(" IS NULL THEN 'N|' ELSE ")
	switch {
	case !framed && w.d == driver.MySQL:
		w.str("CONCAT(")
		w.columnText(c)
		w.str(", '|')")
	case !framed:
		w.columnText(c)
		w.str(" || '|'")
	case w.d == driver.Postgres:
		w.str("'V' || octet_length(")
		w.columnText(c)
		w.str(")::text || ':' || ")
		w.columnText(c)
	case w.d == driver.MySQL:
		w.str("CONCAT('V', LENGTH(")
		w.columnText(c)
		w.str("), ':', ")
		w.columnText(c)
		w.str(")")
	default:
		w.str("'V' || length(CAST(")
		w.columnText(c)
		w.str(" AS BLOB)) || ':' || ")
		w.columnText(c)
	}
	w.str(" END")
}

// hashSlice writes 32 bits of a hex hash column h (slice 0 or 1) as an
// integer.
func (w *sqlw) hashSlice(h string, slice int) {
	from := strconv.Itoa(1 + 8*slice)
	switch w.d {
	case driver.Postgres:
		w.str("('x' || substr(" + h + ", " + from + ", 8))::bit(32)::bigint")
	case driver.MySQL:
		w.str("CAST(CONV(SUBSTRING(" + h + ", " + from + ", 8), 16, 10) AS UNSIGNED)")
	default:
		w.str(sqlite.HexIntFunction + "(substr(" + h + ", " + from + ", 8))")
	}
}

// keyList writes the key columns, comma-separated.
func (w *sqlw) keyList(t *table) {
	for i, k := range t.key {
		if i > 0 {
			w.str(", ")
		}
		w.ident(t.t.Columns[k].Name)
	}
}

// keyCompare writes "key op bound" (a row comparison for a composite
// key).
func (w *sqlw) keyCompare(t *table, op string, bound []answer.Value) {
	if len(t.key) == 1 {
		w.ident(t.t.Columns[t.key[0]].Name)
		w.str(" " + op + " ")
		w.param(t.t.Columns[t.key[0]], bound[0])
		return
	}
	w.str("(")
	w.keyList(t)
	w.str(") " + op + " (")
	for i, k := range t.key {
		if i > 0 {
			w.str(", ")
		}
		w.param(t.t.Columns[k], bound[i])
	}
	w.str(")")
}

// keyEquals writes "k1 = ? AND k2 = ?".
func (w *sqlw) keyEquals(t *table, key []answer.Value) {
	for i, k := range t.key {
		if i > 0 {
			w.str(" AND ")
		}
		w.ident(t.t.Columns[k].Name)
		w.str(" = ")
		w.param(t.t.Columns[k], key[i])
	}
}

// rangeWhere writes the condition of key range r (always something).
func (w *sqlw) rangeWhere(t *table, r keyRange) {
	w.str(" WHERE 1 = 1")
	if r.lo != nil {
		w.str(" AND ")
		w.keyCompare(t, ">", r.lo)
	}
	if r.hi != nil {
		w.str(" AND ")
		w.keyCompare(t, "<=", r.hi)
	}
}

// keyRange is the keys above lo and up to hi; nil bounds are open.
type keyRange struct {
	lo, hi []answer.Value
}

// hashQuery hashes range r in buckets split after each of bounds (bucket
// i holds the keys up to bounds[i]; the last one the rest): one row per
// non-empty bucket with its number, row count and two hash sums.
func hashQuery(d driver.Dialect, t *table, r keyRange, bounds [][]answer.Value) driver.Query {
	w := &sqlw{d: d}
	w.str("SELECT shepherd_b, count(*), sum(shepherd_h1), sum(shepherd_h2) FROM (SELECT ")
	if len(bounds) == 0 {
		w.str("0")
	} else {
		w.str("CASE")
		for i, b := range bounds {
			w.str(" WHEN ")
			w.keyCompare(t, "<=", b)
			w.str(" THEN " + strconv.Itoa(i))
		}
		w.str(" ELSE " + strconv.Itoa(len(bounds)) + " END")
	}
	w.str(" AS shepherd_b, ")
	w.hashSlice("shepherd_h", 0)
	w.str(" AS shepherd_h1, ")
	w.hashSlice("shepherd_h", 1)
	w.str(" AS shepherd_h2 FROM (SELECT ")
	w.keyList(t)
	w.str(", ")
	w.rowHash(t)
	w.str(" AS shepherd_h FROM ")
	w.ident(t.t.Name)
	w.rangeWhere(t, r)
	w.str(") shepherd_x) shepherd_y GROUP BY shepherd_b ORDER BY shepherd_b")
	return w.query("SELECT", true)
}

// rowsQuery reads range r whole: the row's hash, then its columns.
func rowsQuery(d driver.Dialect, t *table, r keyRange) driver.Query {
	w := selectRows(d, t)
	w.rangeWhere(t, r)
	w.str(" ORDER BY ")
	w.keyList(t)
	return w.query("SELECT", true)
}

// selectRows starts a read of whole rows: the row's hash, then the
// columns.
func selectRows(d driver.Dialect, t *table) *sqlw {
	w := &sqlw{d: d}
	w.str("SELECT ")
	w.rowHash(t)
	w.str(" AS shepherd_h")
	for _, c := range t.t.Columns {
		w.str(", ")
		w.ident(c.Name)
	}
	w.str(" FROM ")
	w.ident(t.t.Name)
	return w
}

// boundaryQuery finds the key n rows above lo (the end of a chunk).
func boundaryQuery(d driver.Dialect, t *table, lo []answer.Value, n int) driver.Query {
	w := &sqlw{d: d}
	w.str("SELECT ")
	w.keyList(t)
	w.str(" FROM ")
	w.ident(t.t.Name)
	w.rangeWhere(t, keyRange{lo: lo})
	w.str(" ORDER BY ")
	w.keyList(t)
	w.str(" LIMIT 1 OFFSET " + strconv.Itoa(n-1))
	return w.query("SELECT", true)
}

// splitQuery finds the keys of every step-th row of range r: the bounds
// of sub-ranges of step rows.
func splitQuery(d driver.Dialect, t *table, r keyRange, step int) driver.Query {
	w := &sqlw{d: d}
	w.str("SELECT ")
	w.keyList(t)
	w.str(" FROM (SELECT ")
	w.keyList(t)
	w.str(", row_number() OVER (ORDER BY ")
	w.keyList(t)
	w.str(") AS shepherd_rn FROM ")
	w.ident(t.t.Name)
	w.rangeWhere(t, r)
	w.str(") shepherd_x WHERE shepherd_rn % " + strconv.Itoa(step) + " = 0 ORDER BY ")
	w.keyList(t)
	return w.query("SELECT", true)
}

// keyRowQuery reads the row with key as rowsQuery does.
func keyRowQuery(d driver.Dialect, t *table, key []answer.Value) driver.Query {
	w := selectRows(d, t)
	w.str(" WHERE ")
	w.keyEquals(t, key)
	return w.query("SELECT", true)
}

// countQuery counts the rows with key, and with hash h too when h is not
// empty: a repair's check that a replica's row is still the one seen.
func countQuery(d driver.Dialect, t *table, key []answer.Value, h string) driver.Query {
	w := &sqlw{d: d}
	w.str("SELECT count(*) FROM ")
	w.ident(t.t.Name)
	w.guard(t, key, h)
	return w.query("SELECT", true)
}

// guard writes the condition of a repair: the row with key, whose hash is
// still h (when h is not empty).
func (w *sqlw) guard(t *table, key []answer.Value, h string) {
	w.str(" WHERE ")
	w.keyEquals(t, key)
	if h != "" {
		w.str(" AND ")
		w.rowHash(t)
		w.str(" = ")
		w.text(h)
	}
}

// deleteQuery deletes the row with key if its hash is still h.
func deleteQuery(d driver.Dialect, t *table, key []answer.Value, h string) driver.Query {
	w := &sqlw{d: d}
	w.str("DELETE FROM ")
	w.ident(t.t.Name)
	w.guard(t, key, h)
	return w.query("DELETE", false)
}

// insertQuery inserts row (one value per column).
func insertQuery(d driver.Dialect, t *table, row []answer.Value) driver.Query {
	w := &sqlw{d: d}
	w.str("INSERT INTO ")
	w.ident(t.t.Name)
	w.str(" (")
	always := false
	for i, c := range t.t.Columns {
		if i > 0 {
			w.str(", ")
		}
		w.ident(c.Name)
		always = always || c.Always
	}
	w.str(")")
	if always && d == driver.Postgres {
		w.str(" OVERRIDING SYSTEM VALUE")
	}
	w.str(" VALUES (")
	for i, c := range t.t.Columns {
		if i > 0 {
			w.str(", ")
		}
		w.param(c, row[i])
	}
	w.str(")")
	return w.query("INSERT", false)
}

// updateQuery sets the row with key to row if its hash is still h.
func updateQuery(d driver.Dialect, t *table, key []answer.Value, h string, row []answer.Value) driver.Query {
	w := &sqlw{d: d}
	w.str("UPDATE ")
	w.ident(t.t.Name)
	w.str(" SET ")
	n := 0
	for i, c := range t.t.Columns {
		if t.isKey(i) {
			continue
		}
		if n > 0 {
			w.str(", ")
		}
		n++
		w.ident(c.Name)
		w.str(" = ")
		w.param(c, row[i])
	}
	w.guard(t, key, h)
	return w.query("UPDATE", false)
}

func (t *table) isKey(i int) bool {
	for _, k := range t.key {
		if k == i {
			return true
		}
	}
	return false
}

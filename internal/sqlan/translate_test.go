package sqlan

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/sqlite"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// TestTranslateScripts runs the translation scripts in testdata/translate:
// for a schema and a statement, the text each dialect's replicas receive,
// or the error shepherd answers with instead, and (run) what an embedded
// SQLite replica answers to it. Run with -rewrite to regenerate the
// expected output, then read the diff against PostgreSQL 15's behaviour:
// the scripts state what is right, not what the code happens to do.
//
//	schema
//	CREATE TABLE t (id serial PRIMARY KEY, n numeric(6,2));
//	----
//
//	translate
//	INSERT INTO t (n) VALUES ($1)
//	arg: 99.49001287680001        (a client parameter, sent as untyped text;
//	arg: NULL                      NULL for a null one;
//	argq: "a\x00b"                 a Go-quoted text; arg*3: x three of x;
//	                               $1...$3 in the statement is $1, $2, $3)
//	----
//	param types: date              (the types Describe gives $1...)
//	order: total                   (a read's: its rows compared in order,
//	                                as tie groups, or as a multiset)
//	mariadb: INSERT INTO ...       (each dialect's text, then what each
//	mariadb params: $1 nextval(t.id)  placeholder receives and, with args,
//	mariadb args: '99.49...' 1        the values as the dialect gets them)
//	...
//	error: 22003 message           (the statement refused before any replica)
//	bind: 22021 message            (its parameters refused at Bind)
//
//	run                            (the statement, pins and all, on the
//	SELECT n FROM t                 embedded SQLite replica the schema
//	----                            was created on: rows or the error)
func TestTranslateScripts(t *testing.T) {
	datadriven.Walk(t, "testdata/translate", func(t *testing.T, path string) {
		var sc translateScript
		defer sc.close()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "schema":
				// "schema sqlite": the statements that follow are
				// analysed for SQLite replicas alone.
				sc.liteOnly = d.HasArg("sqlite")
				return sc.schema(t, d.Input)
			case "translate":
				return sc.translate(t, d.Input)
			case "run":
				return sc.run(t, d.Input)
			}
			d.Fatalf(t, "unknown command %q", d.Cmd)
			return ""
		})
	})
}

// translateScript is one script's state: the catalog its DDL built and
// the embedded SQLite replica holding the same tables.
type translateScript struct {
	catalog *schema.Catalog
	lite    driver.Engine
	conn    driver.Conn
	barrier int
	// liteOnly analyses for SQLite replicas alone.
	liteOnly bool
}

// scriptDialects are the dialects a script prints, in order.
var scriptDialects = []struct {
	name string
	d    driver.Dialect
}{{"mariadb", driver.MySQL}, {"postgres", driver.Postgres}, {"sqlite", driver.SQLite}}

func (sc *translateScript) close() {
	if sc.conn != nil {
		sc.conn.Close()
	}
	if sc.lite != nil {
		sc.lite.Close()
	}
}

func (sc *translateScript) env() *Env {
	var snap *schema.Snapshot
	if sc.catalog != nil {
		snap = sc.catalog.Snapshot()
	}
	if sc.liteOnly {
		return &Env{Replicas: map[driver.Dialect][]string{driver.SQLite: {"sqlite"}}, Schema: snap}
	}
	return &Env{Replicas: DefaultEnv.Replicas, Schema: snap}
}

// schema starts a new catalog and SQLite replica and applies each DDL
// statement of input to both, as shepherd does.
func (sc *translateScript) schema(t *testing.T, input string) string {
	sc.close()
	sc.catalog, _ = schema.Open("")
	open, ok := driver.Lookup(sqlite.Pure)
	if !ok {
		t.Fatalf("driver %q is not registered", sqlite.Pure)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	if sc.lite, err = open(ctx, driver.Spec{Name: "lite", DSN: "r.db", DataDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if sc.conn, err = sc.lite.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	texts, err := pg_query.SplitWithScanner(input, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range texts {
		// Each statement is analysed against the schema the ones before
		// it made.
		text = strings.TrimSpace(text)
		st, err := ParseOneIn(text, sc.env())
		if err == nil {
			_, err = sc.exec(ctx, st, nil)
		}
		if err == nil && st.Kind == DDL {
			err = sc.catalog.Apply(st.Tree())
		}
		if err != nil {
			fmt.Fprintf(&out, "%s\nerror: %s\n", text, errorLine(err))
		}
	}
	return out.String()
}

// exec runs st on the SQLite replica with the client's args and the pins'
// values (keys from the catalog's sequences, a fixed time).
func (sc *translateScript) exec(ctx context.Context, st *Stmt, args []driver.Arg) (*answer.Answer, error) {
	at := time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC)
	pins, err := st.PinArgs(PinSource{TxnTime: at, StmtTime: at, Next: func(table, column string) (int64, error) {
		return sc.catalog.Next(table, column, 1)
	}})
	if err != nil {
		return nil, err
	}
	q := Query(st, driver.SQLite, append(append([]driver.Arg(nil), args...), pins...))
	if s, ok := sc.lite.(driver.Sizer); ok {
		// As the cluster does before any replica runs a statement.
		if o := s.Oversize(q); o != nil {
			return nil, o.Refusal("lite")
		}
	}
	return sc.conn.Exec(ctx, q)
}

// statement splits a command's input into the statement and its args.
func statement(input string) (string, []driver.Arg) {
	var sql []string
	var args []driver.Arg
	for _, line := range strings.Split(input, "\n") {
		if v, ok := strings.CutPrefix(line, "argq: "); ok {
			// A Go-quoted text, for bytes a script cannot hold.
			text, err := strconv.Unquote(v)
			if err != nil {
				panic(fmt.Sprintf("argq: %v", err))
			}
			args = append(args, driver.Arg{Text: text})
			continue
		}
		if rest, ok := strings.CutPrefix(line, "arg*"); ok {
			// arg*N: text: N parameters of that text.
			n, v, _ := strings.Cut(rest, ": ")
			count, err := strconv.Atoi(n)
			if err != nil {
				panic(fmt.Sprintf("arg*%s: %v", n, err))
			}
			for range count {
				args = append(args, driver.Arg{Text: v})
			}
			continue
		}
		if v, ok := strings.CutPrefix(line, "arg: "); ok {
			if v == "NULL" {
				args = append(args, driver.Arg{Null: true})
			} else {
				args = append(args, driver.Arg{Text: v})
			}
			continue
		}
		sql = append(sql, expandParams(line))
	}
	return strings.Join(sql, "\n"), args
}

// expandParams writes $1...$N in line as "$1, $2, ..., $N".
func expandParams(line string) string {
	i := strings.Index(line, "$1...$")
	if i < 0 {
		return line
	}
	j := i + len("$1...$")
	k := j
	for k < len(line) && line[k] >= '0' && line[k] <= '9' {
		k++
	}
	n, _ := strconv.Atoi(line[j:k])
	var b strings.Builder
	for p := 1; p <= n; p++ {
		if p > 1 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(p))
	}
	return line[:i] + b.String() + line[k:]
}

func (sc *translateScript) translate(t *testing.T, input string) string {
	sql, args := statement(input)
	return sc.translateSQL(sql, args)
}

// translateSQL is translate for a statement and its arguments.
func (sc *translateScript) translateSQL(sql string, args []driver.Arg) string {
	st, err := ParseOneIn(sql, sc.env())
	if err != nil {
		return "error: " + errorLine(err) + "\n"
	}
	if err := st.CheckArgs(args); err != nil {
		return "bind: " + errorLine(err) + "\n"
	}
	var out strings.Builder
	if st.Kind == Read && st.ReturnsRows {
		// How answers are compared: row by row, as tie groups of the
		// sort keys, or as multisets.
		switch {
		case st.Ordered:
			out.WriteString("order: total\n")
		case len(st.SortKeys) > 0:
			fmt.Fprintf(&out, "order: ties on result columns %v\n", st.SortKeys)
		}
	}
	if oids := st.ParamOIDs(); len(oids) > 0 {
		// The types Describe gives the client's parameters: the wire
		// front reads a value bound to such a type as PostgreSQL does
		// (dates, times, uuids) before any replica sees it.
		var names []string
		for _, oid := range oids {
			names = append(names, oidNames[oid])
		}
		fmt.Fprintf(&out, "param types: %s\n", strings.Join(names, " "))
	}
	if st.Unnest != nil {
		// What the session runs instead, for these arguments.
		text, xargs, err := st.Unnest.Expand(args)
		switch {
		case err != nil:
			return out.String() + "error: " + errorLine(err) + "\n"
		case text == "":
			return out.String() + "expanded: no rows (INSERT 0 0)\n"
		}
		return out.String() + "expanded: " + text + "\n" + sc.translateSQL(text, xargs)
	}
	if sf := st.SelectFirst; sf != nil {
		// The SELECT, then the INSERT ... VALUES of its rows (shown
		// with one).
		out.WriteString("select first: " + st.Inner.SQL + "\n")
		out.WriteString(sc.translateSQL(st.Inner.SQL, sf.SelectArgs(args)))
		out.WriteString("then, a row a VALUES row: " + sf.Insert().SQL + "\n")
		return out.String()
	}
	forms := map[driver.Dialect]Form{}
	for _, f := range st.Forms() {
		forms[f.Dialect] = f
	}
	all := append([]driver.Arg(nil), args...)
	for i := range st.Pins {
		all = append(all, driver.Arg{Text: st.paramName(st.NumParams + i)})
	}
	for _, sd := range scriptDialects {
		f := forms[sd.d]
		fmt.Fprintf(&out, "%s: %s\n", sd.name, f.SQL)
		if len(f.Params) > 0 && (len(st.Pins) > 0 || sd.d == driver.SQLite || !inOrder(f.Params)) {
			fmt.Fprintf(&out, "%s params: %s\n", sd.name, strings.Join(f.Params, " "))
		}
		if len(args) > 0 {
			var vals []string
			for _, a := range Query(st, sd.d, all).Args {
				vals = append(vals, argText(a))
			}
			fmt.Fprintf(&out, "%s args: %s\n", sd.name, strings.Join(vals, " "))
		}
	}
	return out.String()
}

// oidNames names the types of typeOIDs.
var oidNames = func() map[uint32]string {
	m := map[uint32]string{0: "unknown"}
	for name, oid := range typeOIDs {
		m[oid] = name
	}
	for name, oid := range arrayOIDs {
		m[oid] = "_" + name
	}
	return m
}()

// inOrder reports whether params are $1, $2, ... in order.
func inOrder(params []string) bool {
	for i, p := range params {
		if p != fmt.Sprintf("$%d", i+1) {
			return false
		}
	}
	return true
}

func argText(a driver.Arg) string {
	if a.Null {
		return "NULL"
	}
	s := "'" + strings.ReplaceAll(a.Text, "'", "''") + "'"
	if a.Type != answer.Unknown {
		s += "::" + a.Type.String()
	}
	return s
}

// run runs a statement on the SQLite replica and prints its answer as
// shepherd gives it to the client (ShapeAnswer), or its error.
func (sc *translateScript) run(t *testing.T, input string) string {
	if sc.conn == nil {
		t.Fatal("run before schema")
	}
	sql, args := statement(input)
	st, err := ParseOneIn(sql, sc.env())
	if err != nil {
		return "error: " + errorLine(err) + "\n"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := sc.exec(ctx, st, args)
	if err != nil {
		return "error: " + errorLine(err) + "\n"
	}
	if st.ReturnsRows {
		a = ShapeAnswer(a, st.Columns())
	}
	var out strings.Builder
	for _, row := range a.Rows {
		var vals []string
		for _, v := range row {
			if v.Null {
				vals = append(vals, "NULL")
			} else {
				vals = append(vals, v.Text)
			}
		}
		out.WriteString(strings.Join(vals, " | ") + "\n")
	}
	fmt.Fprintf(&out, "%s\n", a.Tag)
	return out.String()
}

// errorLine prints an error as its SQLSTATE and message.
func errorLine(err error) string {
	var pe *pgerr.Error
	if errors.As(err, &pe) {
		return pe.Code + " " + pe.Message
	}
	return "(no SQLSTATE) " + err.Error()
}

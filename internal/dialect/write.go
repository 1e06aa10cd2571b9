package dialect

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// Form is a statement written for one dialect.
type Form struct {
	SQL string
	// Params lists, for each placeholder in SQL in order, the 1-based
	// number of the $n parameter it takes. For SQLite, which numbers its
	// placeholders (?n), it is nil.
	Params []int
	// Hints gives, per $n parameter (index n-1), the family the dialect
	// needs the value as when the client sent it untyped (a LIMIT count
	// must be an integer for MariaDB); Unknown means "as sent".
	Hints []answer.Type
	// CountRows, when positive, is the row count the statement reports
	// in PostgreSQL terms when the engine counts otherwise (MariaDB counts
	// a row that an upsert updated twice).
	CountRows int64
	// ParamTypes gives, per $n parameter (index n-1), the PostgreSQL type
	// the statement expects it as where the writer could tell (a
	// column's value, a comparison with a column); "" where not. Clients
	// are told these types, as PostgreSQL tells them its own inference.
	ParamTypes []string
}

// errRefused marks a construct the dialect cannot express.
var errRefused = errors.New("refused")

// refusal is a construct the writer cannot express in its dialect.
type refusal struct{ what string }

func (r refusal) Error() string { return r.what }
func (r refusal) Unwrap() error { return errRefused }

// failure is an error PostgreSQL itself gives for the statement, found
// while writing it (a constant that does not read as its type).
type failure struct{ err *pgerr.Error }

// Write writes the statement n in dialect d (MySQL or SQLite). s describes
// the tables the statement may use (nil: none known). The error is a
// *pgerr.Error with SQLSTATE 0A000 naming the construct and the dialect.
func Write(n *pg_query.Node, d driver.Dialect, s *schema.Snapshot) (form Form, err error) {
	return write(&writer{d: d, schema: s}, n)
}

// CheckDuckDB refuses (0A000) the writes of statement n that DuckDB would
// store otherwise than PostgreSQL and that only the types of columns and
// expressions tell (a float stored into a numeric column), and whatever
// the SQLite writer refuses: DuckDB computes in binary floating point as
// SQLite does (see DuckDB).
func CheckDuckDB(n *pg_query.Node, s *schema.Snapshot) error {
	_, err := write(&writer{d: driver.SQLite, schema: s, duck: true}, n)
	return err
}

func write(w *writer, n *pg_query.Node) (form Form, err error) {
	d := w.d
	defer func() {
		if r := recover(); r != nil {
			if f, ok := r.(failure); ok {
				form, err = Form{}, f.err
				return
			}
			ref, ok := r.(refusal)
			if !ok {
				panic(r)
			}
			form, err = Form{}, pgerr.New(pgerr.FeatureNotSupported,
				"shepherd cannot write %s for %s replicas", ref.what, dialectName(d))
		}
	}()
	w.stmt(n)
	w.checkJoinLimit()
	w.mixedScales(n) // after the writing, whose refusals say more
	form = Form{SQL: w.b.String(), CountRows: w.countRows}
	if d != driver.SQLite {
		form.Params = w.params
	}
	if w.hints != nil {
		form.Hints = w.hints
	}
	form.ParamTypes = w.ptypes
	return form, nil
}

func dialectName(d driver.Dialect) string {
	switch d {
	case driver.MySQL:
		return "MariaDB/MySQL"
	case driver.SQLite:
		return "SQLite"
	}
	return d.String()
}

// writer prints one statement. Constructs it cannot print panic with a
// refusal, which Write turns into the statement's error.
type writer struct {
	d driver.Dialect
	// duck: the SQLite text is written only to check the statement for
	// DuckDB replicas (see CheckDuckDB).
	duck bool
	// operandTypes, when set, collects the types of the operands of
	// every function call and operator by location (see duckTypes).
	operandTypes map[int32][]string
	schema       *schema.Snapshot
	b            strings.Builder
	params       []int
	hints        []answer.Type
	ptypes       []string // see Form.ParamTypes
	countRows    int64
	// excluded makes EXCLUDED.c read VALUES(c) (MariaDB's upsert).
	excluded bool
	// rounding counts the enclosing expressions that round their value
	// to a stated scale (round(x, n), a numeric(p,s) cast or column),
	// inside which a numeric division may be written.
	rounding int
	// hidden holds the numeric divisions (*pg_query.A_Expr) and avg()
	// calls whose digits no answer sees (see hide), which may be
	// written as the engine computes them; hiddenDiv is set for the
	// division being written when it is one.
	hidden    map[protoreflect.ProtoMessage]bool
	hiddenDiv bool
	// derived numbers the derived tables the writer introduces.
	derived int
	// scopes are the FROM items visible to column references, innermost
	// last.
	scopes []scope
	// copies is how many times the text being written appears in the
	// output, through the constructs that repeat an operand (0: once);
	// see repeated.
	copies int
	// sortKey is the avg() that is itself an ORDER BY item, the one
	// place an engine's own average is written (see funcCall).
	sortKey *pg_query.FuncCall
	// answerSums are the sum() calls of bigint values that are result
	// columns of the statement's own SELECT and nothing sorts by:
	// SQLite's shepherd_sum may answer them as text (see funcCall).
	answerSums map[*pg_query.FuncCall]bool
	// avgCounts are the count() and sum() calls avgCompare put in place
	// of an average (see avgPart).
	avgCounts map[*pg_query.FuncCall]bool
	// mootAvgs are the avg() calls whose value cannot matter, written
	// as the engine's own AVG (see mootAverages).
	mootAvgs map[*pg_query.FuncCall]bool
	// constAvgs are the averages of a constant whose value alone
	// matters (see constantAverages).
	constAvgs map[*pg_query.FuncCall]bool
	// textSum is the call a cast to text is being written around.
	textSum *pg_query.FuncCall
	// rangedCast is the cast to int2 or int4 whose range check is being
	// written around it (see cast).
	rangedCast *pg_query.TypeCast
	// ctes are the names of the statement's WITH queries.
	ctes map[string]bool
	// cteTables are the WITH queries in scope whose columns the writer
	// can type (see addCTETable), by name.
	cteTables map[string]*schema.Table
	// widen are the result columns of recursive queries' first members
	// that MariaDB must be made to type as BIGINT (see widenAnchor).
	widen map[*pg_query.Node]bool
	// single are the result expressions of scalar subqueries SQLite must
	// check return at most one row (see subLink).
	single map[*pg_query.Node]bool
	// derivedTables are the columns of the derived tables the writer
	// introduces, by alias (see fullJoin).
	derivedTables map[string]*schema.Table
	// subqueryTables are the typed columns of the subqueries in FROM
	// (see subqueryTable), nil where they cannot be typed.
	subqueryTables map[*pg_query.RangeSubselect]*schema.Table
	// derivedRels are the typer's columns of the subqueries in FROM
	// typed so far (see typer).
	derivedRels map[*pg_query.RangeSubselect]*rel
	// typedSelects counts the SELECTs the writer's typers typed, a
	// measure of the work done.
	typedSelects int
	// colScales are the scales of the numeric columns of WITH queries
	// and subqueries in FROM that have no declared scale but whose
	// values have a known one (sum(x) of a numeric(12,2) x has 2).
	colScales map[*schema.Column]int
	// tables counts the table references written (see checkJoinLimit).
	tables int
	// splitTables is how many of the tables counted (tables) a join
	// written in parts does not put into one join (see splitJoin).
	splitTables int
	// havingAt is the query whose HAVING clause MariaDB's writer is in,
	// outside aggregates and subqueries (see having).
	havingAt *havingLevel

	// duckArrays, in DuckDB mode, records how DuckDB's copy of the
	// statement's array constructs is rewritten (duckdb_arrays.go).
	duckArrays *duckArrayEdits

	// notes collects, when the writer checks a statement for DuckDB
	// replicas, what its types tell the DuckDB text (see PrepareDuckDB).
	notes *duckNotes
}

// scope is one query level's FROM items: alias (or table name) → table.
type scope struct {
	items []scopeItem
	// merged marks a NATURAL or USING join, whose * is not the
	// concatenation of its tables' columns.
	merged bool
}

type scopeItem struct {
	alias string
	table *schema.Table // nil: a subquery or unknown table
	// relation is the unqualified table name of a FROM item the schema
	// does not have (a CTE, or a relation that does not exist).
	relation string
	// nullable marks the outer side of an outer join.
	nullable bool
}

func (w *writer) refuse(format string, args ...any) {
	panic(refusal{what: fmt.Sprintf(format, args...)})
}

// fail stops writing with an error PostgreSQL gives for the statement.
func (w *writer) fail(code, format string, args ...any) {
	panic(failure{pgerr.New(code, format, args...)})
}

func (w *writer) my() bool   { return w.d == driver.MySQL }
func (w *writer) lite() bool { return w.d == driver.SQLite }
func (w *writer) pg() bool   { return w.d == driver.Postgres }

func (w *writer) str(s string) { w.b.WriteString(s) }

// ident writes an identifier quoted for the dialect. The parser has
// already folded unquoted names to lower case, so quoting keeps exactly
// the name PostgreSQL would use.
func (w *writer) ident(name string) {
	if w.my() {
		w.b.WriteByte('`')
		w.b.WriteString(strings.ReplaceAll(name, "`", "``"))
		w.b.WriteByte('`')
		return
	}
	w.b.WriteByte('"')
	w.b.WriteString(strings.ReplaceAll(name, `"`, `""`))
	w.b.WriteByte('"')
}

// literal writes a string constant. Both dialects take ” for a quote;
// MariaDB's session has NO_BACKSLASH_ESCAPES, so backslashes are plain.
func (w *writer) literal(s string) {
	if strings.IndexByte(s, 0) >= 0 {
		w.refuse("a string constant containing a NUL byte")
	}
	w.b.WriteByte('\'')
	w.b.WriteString(strings.ReplaceAll(s, "'", "''"))
	w.b.WriteByte('\'')
}

// param writes the placeholder of $n.
func (w *writer) param(n int, hint answer.Type) {
	if n < 1 || n > 65535 {
		w.refuse("parameter $%d", n)
	}
	if hint != answer.Unknown {
		for len(w.hints) < n {
			w.hints = append(w.hints, answer.Unknown)
		}
		w.hints[n-1] = hint
	}
	if w.lite() {
		w.str("?" + strconv.Itoa(n))
		return
	}
	w.params = append(w.params, n)
	w.str("?")
}

// list writes items separated by ", ".
func list[T any](w *writer, items []T, each func(T)) {
	for i, it := range items {
		if i > 0 {
			w.str(", ")
		}
		each(it)
	}
}

func nodeName(n *pg_query.Node) string {
	name := fmt.Sprintf("%T", n.GetNode())
	return strings.TrimPrefix(name, "*pg_query.Node_")
}

// stmt writes one top-level statement.
func (w *writer) stmt(n *pg_query.Node) {
	switch {
	case n.GetSelectStmt() != nil:
		w.answerSums = resultSums(n.GetSelectStmt())
		w.selectStmt(n.GetSelectStmt(), true)
	case n.GetInsertStmt() != nil:
		w.insertStmt(n.GetInsertStmt())
	case n.GetUpdateStmt() != nil:
		w.updateStmt(n.GetUpdateStmt())
	case n.GetDeleteStmt() != nil:
		w.deleteStmt(n.GetDeleteStmt())
	case n.GetCreateStmt() != nil:
		w.createTable(n.GetCreateStmt())
	case n.GetIndexStmt() != nil:
		w.createIndex(n.GetIndexStmt())
	case n.GetViewStmt() != nil:
		w.createView(n.GetViewStmt())
	case n.GetDropStmt() != nil:
		w.drop(n.GetDropStmt())
	case n.GetAlterTableStmt() != nil:
		w.alterTable(n.GetAlterTableStmt())
	case n.GetRenameStmt() != nil:
		w.rename(n.GetRenameStmt())
	case n.GetTruncateStmt() != nil:
		w.truncate(n.GetTruncateStmt())
	default:
		w.refuse("%s statements", nodeName(n))
	}
}

package sqlan

import (
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/dialect"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// ColumnGuess is what the statement and the schema tell about one result
// column: the name PostgreSQL would give it, and the type PostgreSQL's
// typing rules give it (Type Unknown when only the engine can tell, as
// for a parameter or a column of a table shepherd does not know).
type ColumnGuess struct {
	Name string
	Type answer.Type
	OID  uint32
	// Mod is the type modifier (char(n), numeric(p,s)); 0 when none.
	Mod int32
	// pad is the width character(n) values have where PostgreSQL reports
	// no modifier (max() of a char(n) column): ShapeAnswer pads to it.
	pad int32
	// scale is 1 + the number of fractional digits numeric values have
	// where PostgreSQL reports no modifier (sum() of a numeric(p,s)
	// column); 0 when unknown. ShapeAnswer writes that many digits.
	scale int32
	// quotient marks an avg() the replicas answer as "sum/count";
	// ShapeAnswer writes PostgreSQL's quotient (see exactAverages).
	quotient bool
	// arith is the arithmetic with a constant done on an avg() quotient.
	arith *avgArith
	// tree is the arithmetic on avg() of a quotient answered as its
	// leaves (see avgExpression).
	tree *avgTree
	// variance names the aggregate of a quotient that is a variance
	// or a standard deviation (see pgVariance), "" for avg().
	variance string
	// round is n for a quotient that is round(avg(x), n) (rounded set).
	round   int
	rounded bool
}

type hintsForm struct {
	once sync.Once
	cols []answer.Column
}

type columnsForm struct {
	once sync.Once
	cols []ColumnGuess // nil when not worked out (a * over an unknown table)
}

// Columns returns the guesses for the result columns of a SELECT, VALUES
// or RETURNING list, or nil when the list cannot be known (a * over a
// table shepherd does not know). Engines name and type expressions
// differently (SQLite calls count(*) "count(*)" and gives it no type);
// these guesses make every replica's answer look the way PostgreSQL's
// would.
func (s *Stmt) Columns() []ColumnGuess {
	if !s.ReturnsRows || s.Kind == Show {
		return nil
	}
	s.columns.once.Do(func() { s.columns.cols = s.guess() })
	return s.columns.cols
}

// KnownColumns returns the result columns as PostgreSQL would describe
// them when the statement and the schema tell the name and type of every
// one, so that the extended protocol's Describe needs no probe (see
// Describe); ok is false otherwise.
func (s *Stmt) KnownColumns() (cols []answer.Column, ok bool) {
	g := s.Columns()
	if len(g) == 0 {
		return nil, false
	}
	cols = make([]answer.Column, len(g))
	for i, c := range g {
		if c.Type == answer.Unknown {
			return nil, false
		}
		cols[i] = answer.Column{Name: c.Name, Type: c.Type, OID: c.OID, Size: sizeOf(c.OID), Mod: -1}
		if c.Mod != 0 {
			cols[i].Mod = c.Mod
		}
	}
	return cols, true
}

// DigestHints returns the PostgreSQL types of the result columns, as far
// as the statement and schema tell, for reading every replica's answer
// alike when voting (see answer.DigestWith); nil when unknown.
func (s *Stmt) DigestHints() []answer.Column {
	s.hints.once.Do(func() {
		g := s.Columns()
		if g == nil {
			return
		}
		out := make([]answer.Column, len(g))
		for i, c := range g {
			out[i] = answer.Column{Name: c.Name, Type: c.Type, OID: c.OID, Mod: c.Mod}
		}
		s.hints.cols = out
	})
	return s.hints.cols
}

// typingPanics lets a panic in column typing through (for FuzzParse).
var typingPanics = false

// guess works the columns out from the text and the schema (see
// guessColumns), and takes the types the SQL writer's own typing gives
// (dialect.OutputTypes) where that knows more.
func (s *Stmt) guess() (guesses []ColumnGuess) {
	defer func() {
		// Typing only informs the answer's column descriptions; a bug
		// that panics in it leaves them unknown (as for a * over an
		// unknown table) rather than ending the session.
		if r := recover(); r != nil {
			if typingPanics {
				panic(r)
			}
			guesses = s.withQuotients(nil)
		}
	}()
	return s.withQuotients(s.guessTypes())
}

// withQuotients marks the columns that exactAverages rewrote in guesses,
// which it makes up (names only) if they do not list the result's
// columns: without the mark, the client would see "sum/count".
func (s *Stmt) withQuotients(guesses []ColumnGuess) []ColumnGuess {
	if len(s.quotients) == 0 {
		return guesses
	}
	targets := s.tree.GetSelectStmt().GetTargetList()
	if len(guesses) != len(targets) {
		guesses = make([]ColumnGuess, len(targets))
		for i, n := range targets {
			guesses[i].Name = n.GetResTarget().GetName()
			if guesses[i].Name == "" {
				guesses[i].Name, _ = columnName(n.GetResTarget().GetVal())
			}
		}
	}
	for _, i := range s.quotients {
		g := guessType(dialect.NamedType("numeric"))
		g.Name, g.quotient = guesses[i].Name, true
		g.variance = s.variances[i]
		g.arith = s.ariths[i]
		g.tree = s.trees[i]
		g.round, g.rounded = s.rounds[i]
		if m := s.typmods[i]; len(m) == 2 {
			g.Mod = m[0]<<16 | m[1] + 4
		}
		guesses[i] = g
	}
	return guesses
}

// guessTypes is guess without the quotients.
func (s *Stmt) guessTypes() []ColumnGuess {
	var snap *schema.Snapshot
	if s.env != nil {
		snap = s.env.Schema
	}
	text := guessColumns(s.SQL, snap)
	var typed []dialect.Typed
	if s.env != nil && s.tree != nil {
		typed = dialect.OutputTypes(s.tree, s.env.Schema)
	}
	if text == nil {
		if typed == nil {
			return nil
		}
		out := make([]ColumnGuess, len(typed))
		for i, t := range typed {
			if t.Name == "" {
				return nil
			}
			out[i] = guessOf(t)
			out[i].Name = t.Name
		}
		return out
	}
	if len(typed) == len(text) {
		for i, t := range typed {
			if text[i].Type != answer.Unknown {
				continue
			}
			if g := guessOf(t); g.Type != answer.Unknown {
				g.Name = text[i].Name
				text[i] = g
			}
		}
	}
	return text
}

// guessOf turns a PostgreSQL type into a column guess, with the type
// modifier PostgreSQL reports (length + 4; (precision << 16 | scale) + 4).
func guessOf(t dialect.Typed) ColumnGuess {
	return guessType(dialect.DeclaredType(t.Type, t.Mods))
}

// guessColumns works out the result columns of a statement from its text
// and the schema: the names PostgreSQL gives them and the types its
// typing rules give them (dialect.ResultColumns). It returns nil when the
// columns cannot be listed (a * over a table shepherd does not know, a
// statement without a result list).
func guessColumns(sql string, snap *schema.Snapshot) []ColumnGuess {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return nil
	}
	cols := dialect.ResultColumns(tree.Stmts[0].Stmt, snap)
	if cols == nil {
		return nil
	}
	out := make([]ColumnGuess, len(cols))
	for i, c := range cols {
		out[i] = guessType(c.Type)
		out[i].Name = c.Name
	}
	return out
}

// columnName is the name PostgreSQL gives a result column written
// without an alias (dialect.ColumnName).
func columnName(n *pg_query.Node) (string, int) { return dialect.ColumnName(n) }

// typeIn types x in the FROM scope of sel (dialect.TypeIn).
func typeIn(snap *schema.Snapshot, sel *pg_query.SelectStmt, x *pg_query.Node) pgType {
	return dialect.TypeIn(snap, sel, x)
}

// isInteger reports whether a type is one of PostgreSQL's integers.
func isInteger(name string) bool { return name == "int2" || name == "int4" || name == "int8" }

// pgType is the typer's type of an expression (dialect.PGType).
type pgType = dialect.PGType

// guessType turns a type into a column guess (no name); Type Unknown
// for types the guesses do not cover.
func guessType(p pgType) ColumnGuess {
	name, mods := p.Name(), p.Mods()
	g, ok := typeByName[name]
	if !ok {
		return ColumnGuess{}
	}
	switch {
	case (name == "bpchar" || name == "varchar") && len(mods) == 1:
		g.Mod = mods[0] + 4
	case name == "numeric" && len(mods) == 1:
		g.Mod = mods[0]<<16 + 4
	case name == "numeric" && len(mods) == 2:
		g.Mod = mods[0]<<16 | mods[1] + 4
	case name == "bpchar":
		g.pad = p.Width()
	case name == "numeric":
		if sc, ok := p.NumericScale(); ok {
			g.scale = sc + 1
		}
	}
	return g
}

var typeByName = map[string]ColumnGuess{
	"int2": {Type: answer.Int, OID: answer.OIDInt2}, "int4": {Type: answer.Int, OID: answer.OIDInt4},
	"int8": {Type: answer.Int, OID: answer.OIDInt8}, "numeric": {Type: answer.Numeric, OID: answer.OIDNumeric},
	"float4": {Type: answer.Float, OID: answer.OIDFloat4}, "float8": {Type: answer.Float, OID: answer.OIDFloat8},
	"bool": {Type: answer.Bool, OID: answer.OIDBool}, "text": {Type: answer.Text, OID: answer.OIDText},
	"varchar": {Type: answer.Text, OID: answer.OIDVarchar}, "bpchar": {Type: answer.Text, OID: answer.OIDBPChar},
	"name": {Type: answer.Text, OID: answer.OIDName},
	"date": {Type: answer.Date, OID: answer.OIDDate}, "timestamp": {Type: answer.Timestamp, OID: answer.OIDTimestamp},
	"timestamptz": {Type: answer.TimestampTZ, OID: answer.OIDTimestampTZ}, "uuid": {Type: answer.UUID, OID: answer.OIDUUID},
	"bytea": {Type: answer.Bytes, OID: answer.OIDBytea}, "time": {Type: answer.Time, OID: answer.OIDTime},
	"json": {Type: answer.JSON, OID: answer.OIDJSON}, "jsonb": {Type: answer.JSON, OID: answer.OIDJSONB},
	"interval": {Type: answer.Interval, OID: answer.OIDInterval},
}

// Shape makes an answer's columns look the way PostgreSQL would show
// them: PostgreSQL's names, and PostgreSQL's type wherever the statement
// and the schema tell it (the primary may be an engine without booleans
// or column types).
func Shape(cols []answer.Column, guesses []ColumnGuess) []answer.Column {
	if len(guesses) != len(cols) {
		return cols
	}
	out := make([]answer.Column, len(cols))
	for i, c := range cols {
		g := guesses[i]
		c.Name = g.Name
		if g.Type != answer.Unknown && (c.Type != g.Type || c.OID != g.OID) {
			c.Type, c.OID, c.Size, c.Mod = g.Type, g.OID, sizeOf(g.OID), -1
		}
		if g.Mod != 0 {
			c.Mod = g.Mod
		}
		out[i] = c
	}
	return out
}

// sizeOf is pg_type.typlen of the OIDs guesses use.
func sizeOf(oid uint32) int16 {
	switch oid {
	case answer.OIDBool:
		return 1
	case answer.OIDInt2:
		return 2
	case answer.OIDInt4, answer.OIDFloat4, answer.OIDDate:
		return 4
	case answer.OIDInt8, answer.OIDFloat8, answer.OIDTimestamp, answer.OIDTimestampTZ, answer.OIDTime:
		return 8
	case answer.OIDUUID, answer.OIDInterval:
		return 16
	case answer.OIDName:
		return 64
	}
	return -1
}

// ShapeAnswer is Shape for a whole answer: the columns, and the values
// whose text PostgreSQL would write differently for the column's type
// (booleans as t/f, char(n) padded to n, numeric(p,s) with s digits, and,
// for the columns whose type the guesses know, floats, dates, times,
// timestamps and UUIDs as PostgreSQL prints them: a timestamptz with its
// +00). It returns a new answer when something changed; a is not
// modified.
func ShapeAnswer(a *answer.Answer, guesses []ColumnGuess) *answer.Answer {
	if a.Columns == nil {
		return a
	}
	cols := Shape(a.Columns, guesses)
	out := *a
	out.Columns = cols
	known := len(guesses) == len(cols)
	var fix []int
	widths := make([]int, len(cols)) // char(n) length, numeric scale + 1
	for i, c := range cols {
		switch {
		case c.OID == answer.OIDBPChar && c.Mod > 4:
			widths[i] = int(c.Mod - 4)
		case c.OID == answer.OIDBPChar && known:
			widths[i] = int(guesses[i].pad)
		case c.Type == answer.Numeric && c.Mod > 4:
			widths[i] = int((c.Mod-4)&0xffff) + 1
		case c.Type == answer.Numeric && known:
			widths[i] = int(guesses[i].scale)
		}
		retext := false
		if known && guesses[i].Type != answer.Unknown {
			switch c.Type {
			case answer.Float, answer.Date, answer.Time, answer.Timestamp, answer.TimestampTZ, answer.UUID:
				retext = true
			}
		}
		if c.Type == answer.Bool || widths[i] > 0 || retext || known && guesses[i].quotient {
			fix = append(fix, i)
		}
	}
	if len(fix) == 0 {
		return &out
	}
	out.Rows = make([][]answer.Value, len(a.Rows))
	for r, row := range a.Rows {
		nr := append([]answer.Value(nil), row...)
		for _, i := range fix {
			if i >= len(nr) || nr[i].Null {
				continue
			}
			if guesses[i].quotient && guesses[i].tree != nil {
				q, null, ok := guesses[i].tree.eval(nr[i].Text)
				if ok {
					nr[i] = answer.Value{Type: answer.Numeric, Text: q, Null: null}
				}
				continue
			}
			if guesses[i].quotient {
				q, ok := pgQuotient(nr[i].Text)
				if guesses[i].variance != "" {
					var null bool
					q, null, ok = pgVariance(nr[i].Text, guesses[i].variance)
					if ok && null {
						nr[i] = answer.Value{Type: answer.Numeric, Null: true}
						continue
					}
				}
				if ok && guesses[i].arith != nil {
					q, ok = guesses[i].arith.apply(q)
				}
				if ok {
					if guesses[i].rounded {
						q, ok = pgRound(q, guesses[i].round)
					}
					if ok {
						nr[i] = answer.Value{Type: answer.Numeric, Text: q}
					}
				}
				continue
			}
			nr[i] = pgValue(cols[i], widths[i], nr[i])
		}
		out.Rows[r] = nr
	}
	return &out
}

// pgValue writes a value the way PostgreSQL prints it for column c: width
// is the length of character(n), 1 + the scale of numeric, 0 when
// unknown.
func pgValue(c answer.Column, width int, v answer.Value) answer.Value {
	switch {
	case c.Type == answer.Bool:
		switch strings.ToLower(v.Text) {
		case "1", "t", "true":
			return answer.Value{Type: answer.Bool, Text: "t"}
		case "0", "f", "false":
			return answer.Value{Type: answer.Bool, Text: "f"}
		}
	case c.OID == answer.OIDBPChar:
		if k := utf8.RuneCountInString(v.Text); k < width {
			return answer.Value{Type: v.Type, Text: v.Text + strings.Repeat(" ", width-k)}
		}
	case c.Type == answer.Numeric:
		if width > 0 {
			return answer.Value{Type: answer.Numeric, Text: withScale(v.Text, width-1)}
		}
	case c.Type == answer.Float:
		bits := 64
		if c.OID == answer.OIDFloat4 {
			bits = 32
		}
		if f, err := strconv.ParseFloat(v.Text, 64); err == nil {
			return answer.Value{Type: answer.Float, Text: answer.FormatFloat(f, bits)}
		}
	default:
		if text, ok := answer.PGText(c.Type, v.Text); ok {
			return answer.Value{Type: c.Type, Text: text}
		}
	}
	return v
}

// withScale writes a decimal number with exactly scale fractional digits
// when that loses nothing (text that is not a plain decimal, or has more
// digits, is left alone).
func withScale(s string, scale int) string {
	if f, err := strconv.ParseFloat(s, 64); err == nil && strings.ContainsAny(s, "eE") {
		s = strconv.FormatFloat(f, 'f', -1, 64)
	}
	intPart, frac, _ := strings.Cut(s, ".")
	for _, ch := range strings.TrimPrefix(intPart, "-") + frac {
		if ch < '0' || ch > '9' {
			return s
		}
	}
	if len(frac) > scale {
		if strings.Trim(frac[scale:], "0") != "" {
			return s
		}
		frac = frac[:scale]
	}
	if scale == 0 {
		return intPart
	}
	return intPart + "." + frac + strings.Repeat("0", scale-len(frac))
}

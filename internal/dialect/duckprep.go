package dialect

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// PrepareDuckDB checks statement n for DuckDB replicas as CheckDuckDB
// does, and returns a copy of n for DuckDB to write, changed where only
// the checking writer's types or the schema tell what PostgreSQL does:
//
//   - a strict operator over a NULL constant that PostgreSQL folds to
//     NULL without evaluating its other operand (see nullfold.go) is
//     NULL, as the SQL writer writes it: DuckDB would evaluate col / 0
//     in col / 0 = NULL and fail it (the corpus's DuckDB replica lost
//     the vote on it);
//   - a numeric operand of +, - or * is widened to DECIMAL(38) (x *
//     1::numeric(38,0) keeps its scale): DuckDB computes DECIMAL values
//     of up to 18 digits in 64 bits and fails (22003) a sum or product
//     beyond them, where PostgreSQL's numeric has room (2.500 *
//     20000.000000000000 lost the vote);
//   - a GROUP BY that lists a table's primary key lists its other
//     columns too: PostgreSQL lets the query use them ungrouped (they
//     depend on the key, and shepherd checks that rule), DuckDB fails
//     it (42803). The groups are the same;
//   - and what addConstraint and duckRewrites rewrite.
//
// An ALTER TABLE DuckDB cannot run is refused (indexedAlter).
//
// n is not modified.
func PrepareDuckDB(n *pg_query.Node, s *schema.Snapshot) (*pg_query.Node, error) {
	if err := indexedAlter(n, s); err != nil {
		return nil, err
	}
	out := proto.Clone(n).(*pg_query.Node)
	notes := &duckNotes{folds: map[foldKey]bool{}, widen: map[*pg_query.Node]bool{}, avgCmps: map[foldKey]*pg_query.Node{}}
	if _, err := write(&writer{d: driver.SQLite, schema: s, duck: true, notes: notes}, out); err != nil {
		return nil, err
	}
	notes.apply(out)
	out = addConstraint(out, s)
	groupByKeys(out, s)
	duckRewrites(out)
	return out, nil
}

// duckNotes is what the writer checking a statement for DuckDB found in
// it (see PrepareDuckDB). Its methods do nothing on a nil receiver, the
// writer's other uses.
type duckNotes struct {
	// folds are the operations written as NULL (foldsToNull), by
	// operands.
	folds map[foldKey]bool
	// widen are the numeric operands of +, - and *.
	widen map[*pg_query.Node]bool
	// avgCmps are the comparisons with an average written as
	// comparisons of its sum (avgCompare), by operands, and what
	// replaces them.
	avgCmps map[foldKey]*pg_query.Node
}

// foldKey names a folded operation by its operands: l op r, or l IN
// (...) when in is set.
type foldKey struct {
	l, r *pg_query.Node
	in   bool
}

// fold notes the operation over l and r (r nil: l IN a list) as folded.
func (d *duckNotes) fold(l, r *pg_query.Node) {
	if d != nil {
		d.folds[foldKey{l: l, r: r, in: r == nil}] = true
	}
}

// noteWiden notes the numeric operands of op for widening (see
// PrepareDuckDB). An operand that is itself such an operation is wide
// already.
func (w *writer) noteWiden(op string, l, r *pg_query.Node) {
	if w.notes == nil || op != "+" && op != "-" && op != "*" {
		return
	}
	for _, x := range []*pg_query.Node{l, r} {
		if x == nil || w.typeOf(x) != "numeric" {
			continue
		}
		if e := x.GetAExpr(); e != nil && e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && e.Lexpr != nil {
			if o := schema.OpName(e.Name); o == "+" || o == "-" || o == "*" {
				continue
			}
		}
		w.notes.widen[x] = true
	}
}

// AvgCountMacro is the DuckDB macro (package driver/duckdb defines it in
// every session) the count of a comparison with an average goes through:
// the count itself below the limit under which the comparison is exact
// (avgCountLimit), else an error the driver reports as 0A000, as SQLite's
// shepherd_avg_count does.
const AvgCountMacro = "shepherd_avg_count"

// avgCompare notes l op r, a comparison of e with an average that
// avgCompare writes as e * count(x) op sum(x) (or the sum op the
// product, flipped; the sum negated for neg), for DuckDB's text.
func (d *duckNotes) avgCompare(op string, l, r, e, count, sum *pg_query.Node, neg, flipped bool) {
	if d == nil {
		return
	}
	count = proto.Clone(count).(*pg_query.Node)
	guard := func(n *pg_query.Node) *pg_query.Node {
		return pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(AvgCountMacro)}, []*pg_query.Node{n}, -1)
	}
	if sl := count.GetSubLink(); sl != nil {
		rt := sl.Subselect.GetSelectStmt().TargetList[0].GetResTarget()
		rt.Val = guard(rt.Val)
	} else {
		count = guard(count)
	}
	sum = proto.Clone(sum).(*pg_query.Node)
	if neg {
		sum = pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("-")}, nil, sum, -1)
	}
	product := pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("*")},
		proto.Clone(e).(*pg_query.Node), count, -1)
	a, b := product, sum
	if flipped {
		a, b = sum, product
	}
	d.avgCmps[foldKey{l: l, r: r}] = pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode(op)}, a, b, -1)
}

// apply changes tree, the one the notes were taken on.
func (d *duckNotes) apply(tree *pg_query.Node) {
	if len(d.avgCmps) > 0 {
		walkNodes(tree.ProtoReflect(), func(n *pg_query.Node) {
			if e := n.GetAExpr(); e != nil && e.Kind == pg_query.A_Expr_Kind_AEXPR_OP {
				if to := d.avgCmps[foldKey{l: e.Lexpr, r: e.Rexpr}]; to != nil {
					n.Node = to.Node
				}
			}
		})
	}
	if len(d.folds) > 0 {
		walkNodes(tree.ProtoReflect(), func(n *pg_query.Node) {
			e := n.GetAExpr()
			if e == nil {
				return
			}
			op := e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && d.folds[foldKey{l: e.Lexpr, r: e.Rexpr}]
			in := e.Kind == pg_query.A_Expr_Kind_AEXPR_IN && d.folds[foldKey{l: e.Lexpr, in: true}]
			if op || in {
				n.Node = &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: -1}}
			}
		})
	}
	for x := range d.widen {
		inner := &pg_query.Node{Node: x.Node}
		x.Node = pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("*")},
			inner, wideOne(), -1).Node
	}
}

// wideOne is 1::numeric(38,0), by which a DECIMAL is widened to 38 digits
// with its scale kept.
func wideOne() *pg_query.Node {
	return &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
		Arg: pg_query.MakeAConstIntNode(1, -1),
		TypeName: &pg_query.TypeName{
			Names:    []*pg_query.Node{pg_query.MakeStrNode("pg_catalog"), pg_query.MakeStrNode("numeric")},
			Typmods:  []*pg_query.Node{pg_query.MakeAConstIntNode(38, -1), pg_query.MakeAConstIntNode(0, -1)},
			Location: -1,
		},
		Location: -1,
	}}}
}

// walkNodes calls f on every Node under m, parents first; f may change
// the node it is given (its children are visited as they are then).
func walkNodes(m protoreflect.Message, f func(*pg_query.Node)) {
	if n, ok := m.Interface().(*pg_query.Node); ok {
		f(n)
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				walkNodes(l.Get(i).Message(), f)
			}
		case fd.Message() != nil && !fd.IsMap():
			walkNodes(v.Message(), f)
		}
		return true
	})
}

// groupByKeys adds to every plain GROUP BY (no grouping sets) that lists
// the primary key of a table in its FROM the table's other columns (see
// PrepareDuckDB). A name that a WITH query of the statement takes is left
// alone: the schema's table is not the one read.
func groupByKeys(tree *pg_query.Node, s *schema.Snapshot) {
	if s == nil {
		return
	}
	ctes := map[string]bool{}
	walkNodes(tree.ProtoReflect(), func(n *pg_query.Node) {
		if c := n.GetCommonTableExpr(); c != nil {
			ctes[c.Ctename] = true
		}
	})
	walkNodes(tree.ProtoReflect(), func(n *pg_query.Node) {
		sel := n.GetSelectStmt()
		if sel == nil || len(sel.GroupClause) == 0 {
			return
		}
		for _, g := range sel.GroupClause {
			if g.GetGroupingSet() != nil {
				return
			}
		}
		var items []*pg_query.RangeVar
		var from func(*pg_query.Node)
		from = func(f *pg_query.Node) {
			switch {
			case f.GetRangeVar() != nil:
				items = append(items, f.GetRangeVar())
			case f.GetJoinExpr() != nil:
				from(f.GetJoinExpr().Larg)
				from(f.GetJoinExpr().Rarg)
			}
		}
		for _, f := range sel.FromClause {
			from(f)
		}
		for _, rv := range items {
			if ctes[rv.Relname] || rv.Schemaname != "" && rv.Schemaname != "public" {
				continue
			}
			t := s.Table(rv.Relname)
			if t == nil || len(t.Key) == 0 {
				continue
			}
			alias := rv.Relname
			if rv.Alias != nil {
				alias = rv.Alias.Aliasname
			}
			grouped := func(col string) bool {
				for _, g := range sel.GroupClause {
					cr := g.GetColumnRef()
					if cr == nil {
						continue
					}
					f := refFields(cr)
					if len(f) == 1 && f[0] == col || len(f) == 2 && f[0] == alias && f[1] == col {
						return true
					}
				}
				return false
			}
			all := true
			for _, k := range t.Key {
				all = all && grouped(k)
			}
			if !all {
				continue
			}
			for _, c := range t.Columns {
				if !grouped(c.Name) {
					sel.GroupClause = append(sel.GroupClause, pg_query.MakeColumnRefNode(
						[]*pg_query.Node{pg_query.MakeStrNode(alias), pg_query.MakeStrNode(c.Name)}, -1))
				}
			}
		}
	})
}

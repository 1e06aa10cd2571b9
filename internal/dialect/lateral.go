package dialect

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// maxLateralRefs bounds the references to a LATERAL subquery's columns:
// each becomes a copy of the subquery.
const maxLateralRefs = 8

// hasLateral reports whether a FROM item of s is a LATERAL subquery.
func hasLateral(s *pg_query.SelectStmt) bool {
	for _, n := range s.FromClause {
		if n.GetRangeSubselect().GetLateral() {
			return true
		}
		if j := n.GetJoinExpr(); j != nil && (j.Rarg.GetRangeSubselect().GetLateral() || j.Larg.GetRangeSubselect().GetLateral()) {
			return true
		}
	}
	return false
}

// lateral rewrites, for MariaDB and SQLite, which have no LATERAL, the
// one form whose meaning scalar subqueries keep: a LATERAL subquery that
// gives at most one row (LIMIT 1), joined by a comma, CROSS JOIN or
// JOIN ... ON true (or LEFT JOIN ... ON true) to one table or item:
//
//	SELECT d.name, top.name FROM dept d
//	    CROSS JOIN LATERAL (SELECT name FROM emp WHERE emp.dept_id = d.id
//	        ORDER BY salary DESC LIMIT 1) AS top
//
// becomes SELECT d.name, (SELECT name FROM emp WHERE ... LIMIT 1) FROM
// dept d WHERE EXISTS (SELECT ... LIMIT 1): each reference top.x is the
// subquery giving x, and the CROSS join keeps only the rows for which it
// has a row (a LEFT join keeps every row, x NULL where there is none).
// Every copy has the same ORDER BY, which sqlan has made total over the
// subquery's output, so each picks a row with the same output. It
// returns nil (refused as before) for anything else: references without
// the subquery's alias, *, more than maxLateralRefs references.
func (w *writer) lateral(s *pg_query.SelectStmt) *pg_query.SelectStmt {
	if s.Op != pg_query.SetOperation_SETOP_NONE {
		return nil
	}
	out := proto.Clone(s).(*pg_query.SelectStmt)
	var rs *pg_query.RangeSubselect
	cross := true
	for i, n := range out.FromClause {
		switch {
		case n.GetRangeSubselect().GetLateral():
			if rs != nil {
				return nil
			}
			rs = n.GetRangeSubselect()
			out.FromClause = append(out.FromClause[:i:i], out.FromClause[i+1:]...)
		case n.GetJoinExpr() != nil:
			j := n.GetJoinExpr()
			if j.Larg.GetRangeSubselect().GetLateral() {
				return nil
			}
			if !j.Rarg.GetRangeSubselect().GetLateral() {
				continue
			}
			if rs != nil || j.IsNatural || len(j.UsingClause) > 0 || j.Alias != nil {
				return nil
			}
			onTrue := j.Quals == nil
			if c := j.Quals.GetAConst(); c != nil && c.GetBoolval() != nil && c.GetBoolval().Boolval {
				onTrue = true
			}
			if tc := j.Quals.GetTypeCast(); tc != nil && tc.Arg.GetAConst().GetSval().GetSval() == "t" {
				onTrue = true // ON true is parsed as 't'::bool
			}
			switch {
			case j.Jointype == pg_query.JoinType_JOIN_INNER && onTrue:
			case j.Jointype == pg_query.JoinType_JOIN_LEFT && onTrue:
				cross = false
			default:
				return nil
			}
			rs = j.Rarg.GetRangeSubselect()
			out.FromClause[i] = j.Larg
		}
	}
	if rs == nil || rs.Alias == nil || len(rs.Alias.Colnames) > 0 {
		return nil
	}
	sub := rs.Subquery.GetSelectStmt()
	if sub == nil || sub.Op != pg_query.SetOperation_SETOP_NONE || len(sub.ValuesLists) > 0 || sub.WithClause != nil ||
		len(sub.LockingClause) > 0 || sub.LimitOffset != nil || len(sub.DistinctClause) > 0 {
		return nil
	}
	if n, ok := intConst(sub.LimitCount); !ok || n != 1 || sub.LimitCount.GetAConst().GetIval() == nil {
		return nil
	}
	// The subquery's columns by name, and its ORDER BY resolved to
	// expressions (a copy with one column cannot use positions).
	cols := map[string]*pg_query.Node{}
	for _, t := range sub.TargetList {
		rt := t.GetResTarget()
		if cr := rt.Val.GetColumnRef(); cr != nil && starRef(cr) {
			return nil
		}
		name := rt.Name
		if name == "" {
			name, _ = outputName(rt.Val)
		}
		if cols[name] != nil {
			return nil
		}
		cols[name] = rt.Val
	}
	var order []*pg_query.Node
	for _, n := range sub.SortClause {
		sb := n.GetSortBy()
		key := sb.Node
		if i, ok := ordinal(key); ok {
			if i < 1 || i > len(sub.TargetList) {
				return nil
			}
			key = sub.TargetList[i-1].GetResTarget().Val
		} else if name, ok := bareName(key); ok && cols[name] != nil {
			key = cols[name] // PostgreSQL reads a result column's name first
		} else if key.GetAConst() != nil {
			return nil
		}
		order = append(order, &pg_query.Node{Node: &pg_query.Node_SortBy{SortBy: &pg_query.SortBy{
			Node: key, SortbyDir: sb.SortbyDir, SortbyNulls: sb.SortbyNulls, UseOp: sb.UseOp, Location: -1}}})
	}
	copyWith := func(targets []*pg_query.Node) *pg_query.Node {
		c := &pg_query.SelectStmt{
			TargetList: targets, FromClause: sub.FromClause, WhereClause: sub.WhereClause, GroupClause: sub.GroupClause,
			HavingClause: sub.HavingClause, WindowClause: sub.WindowClause, SortClause: order,
			LimitCount: sub.LimitCount, LimitOption: sub.LimitOption, Op: pg_query.SetOperation_SETOP_NONE,
		}
		return &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: c}}
	}
	alias := rs.Alias.Aliasname
	var found []*pg_query.Node
	ok := true
	walk(out.ProtoReflect(), func(m protoreflect.Message) bool {
		n, isNode := m.Interface().(*pg_query.Node)
		if !isNode || n.GetColumnRef() == nil {
			return true
		}
		f := refFields(n.GetColumnRef())
		switch {
		case starRef(n.GetColumnRef()) || len(f) == 1 && cols[f[0]] != nil:
			ok = false // * or a bare name that may be the subquery's
		case len(f) == 2 && f[0] == alias:
			ok = cols[f[1]] != nil
			found = append(found, n)
		}
		return ok && len(found) <= maxLateralRefs
	})
	if !ok || len(found) > maxLateralRefs {
		return nil
	}
	for _, n := range found {
		v := cols[refFields(n.GetColumnRef())[1]]
		n.Node = &pg_query.Node_SubLink{SubLink: &pg_query.SubLink{
			SubLinkType: pg_query.SubLinkType_EXPR_SUBLINK,
			Subselect:   copyWith([]*pg_query.Node{pg_query.MakeResTargetNodeWithVal(v, -1)}),
		}}
	}
	// Output names: an unaliased top.x is named x, as PostgreSQL names it.
	for i, t := range s.TargetList {
		if rt := t.GetResTarget(); rt != nil && rt.Name == "" {
			if name, strength := outputName(rt.Val); strength > 0 {
				out.TargetList[i].GetResTarget().Name = name
			}
		}
	}
	if cross {
		exists := &pg_query.Node{Node: &pg_query.Node_SubLink{SubLink: &pg_query.SubLink{
			SubLinkType: pg_query.SubLinkType_EXISTS_SUBLINK, Subselect: copyWith(sub.TargetList),
		}}}
		if out.WhereClause == nil {
			out.WhereClause = exists
		} else {
			out.WhereClause = pg_query.MakeBoolExprNode(pg_query.BoolExprType_AND_EXPR, []*pg_query.Node{out.WhereClause, exists}, -1)
		}
	}
	return out
}

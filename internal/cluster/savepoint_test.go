package cluster

import (
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// TestSurvivorsDropRolledBack: the log record of a committed transaction
// keeps only the statements whose effects it kept: ROLLBACK TO drops
// what came after its savepoint (the failed statement among them, which
// replay could not run), RELEASE and the savepoint statements leave
// nothing, and the latest of equal names is the one rolled back to.
func TestSurvivorsDropRolledBack(t *testing.T) {
	parse := func(sql string) stmtCall {
		st, err := sqlan.ParseOne(sql)
		if err != nil {
			t.Fatal(err)
		}
		return stmtCall{st: st}
	}
	sp := func(op sqlan.SavepointOp, name string) stmtCall { return stmtCall{st: sqlan.NewSavepoint(op, name)} }
	for _, c := range []struct {
		stmts []stmtCall
		want  string
	}{
		{[]stmtCall{parse("INSERT INTO t VALUES (1)"), sp(sqlan.SavepointDefine, "a"), parse("INSERT INTO t VALUES (2)"),
			parse("INSERT INTO t VALUES (1)"), sp(sqlan.SavepointRollbackTo, "a"), parse("INSERT INTO t VALUES (3)"),
			sp(sqlan.SavepointRelease, "a")},
			"INSERT INTO t VALUES (1); INSERT INTO t VALUES (3)"},
		{[]stmtCall{sp(sqlan.SavepointDefine, "a"), parse("INSERT INTO t VALUES (1)"), sp(sqlan.SavepointDefine, "b"),
			parse("INSERT INTO t VALUES (2)"), sp(sqlan.SavepointRelease, "b"), parse("INSERT INTO t VALUES (3)"),
			sp(sqlan.SavepointRollbackTo, "a"), parse("INSERT INTO t VALUES (4)"), sp(sqlan.SavepointRollbackTo, "a"),
			parse("INSERT INTO t VALUES (5)")},
			"INSERT INTO t VALUES (5)"},
		{[]stmtCall{parse("INSERT INTO t VALUES (1)"), sp(sqlan.SavepointDefine, "a"), parse("INSERT INTO t VALUES (2)"),
			sp(sqlan.SavepointDefine, "b"), parse("INSERT INTO t VALUES (3)"), sp(sqlan.SavepointRelease, "b"),
			sp(sqlan.SavepointRelease, "a")},
			"INSERT INTO t VALUES (1); INSERT INTO t VALUES (2); INSERT INTO t VALUES (3)"},
	} {
		var got []string
		for _, call := range survivors(c.stmts) {
			got = append(got, call.st.SQL)
		}
		if s := strings.Join(got, "; "); s != c.want {
			t.Errorf("survivors: %s\nwant %s", s, c.want)
		}
	}
}

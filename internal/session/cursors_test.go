package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// queryErr runs sql and returns its error's SQLSTATE and message, "" for
// none.
func queryErr(s *Session, sql string) (string, string) {
	err := s.Query(context.Background(), sql, func(*answer.Answer) error { return nil })
	if err == nil {
		return "", ""
	}
	var pe *pgerr.Error
	if errors.As(err, &pe) {
		return pe.Code, pe.Message
	}
	return "?", err.Error()
}

// TestCursorMemory: the rows a session's cursors keep are bounded; a
// DECLARE beyond the bound fails with 54000 naming the cursor and the
// bound, keeps nothing and aborts the block as any error does, and
// closing a cursor (or the end of its transaction) gives its share back.
func TestCursorMemory(t *testing.T) {
	s := newSession(t)
	query(t, s, "CREATE TABLE big (id int PRIMARY KEY, s text)")
	var vals []string
	for i := 1; i <= 100; i++ {
		vals = append(vals, fmt.Sprintf("(%d, '%s')", i, strings.Repeat("x", 100)))
	}
	query(t, s, "INSERT INTO big VALUES "+strings.Join(vals, ", "))
	one := rowsSize([][]answer.Value{{answer.V(answer.Int, "1"), answer.V(answer.Text, strings.Repeat("x", 100))}})
	s.cursorLimit = 150 * one // room for 150 rows: one cursor over the table, not two
	query(t, s, "BEGIN")
	query(t, s, "DECLARE a CURSOR FOR SELECT id, s FROM big")
	if code, msg := queryErr(s, "DECLARE b CURSOR FOR SELECT id, s FROM big"); code != "54000" || !strings.Contains(msg, `cursor "b"`) {
		t.Fatalf("second cursor over the bound: %s %s, want 54000 naming it", code, msg)
	}
	if code, _ := queryErr(s, "FETCH a"); code != "25P02" {
		t.Errorf("FETCH after the refused DECLARE: %q, want 25P02 (the block failed)", code)
	}
	query(t, s, "ROLLBACK")
	query(t, s, "BEGIN")
	query(t, s, "DECLARE a CURSOR FOR SELECT id, s FROM big")
	query(t, s, "CLOSE a")
	query(t, s, "DECLARE b CURSOR FOR SELECT id, s FROM big WHERE id <= 40")
	query(t, s, "DECLARE c CURSOR WITH HOLD FOR SELECT id, s FROM big WHERE id <= 40")
	if code, _ := queryErr(s, "DECLARE d CURSOR FOR SELECT id, s FROM big WHERE id <= 80"); code != "54000" {
		t.Errorf("third cursor: %q, want 54000", code)
	}
	query(t, s, "ROLLBACK")
	// Rolled back: nothing kept any more.
	query(t, s, "DECLARE h CURSOR WITH HOLD FOR SELECT id, s FROM big")
	if a := query(t, s, "FETCH ALL h"); len(a) != 1 || len(a[0].Rows) != 100 || a[0].Tag != "FETCH 100" {
		t.Errorf("FETCH ALL h: %+v", a)
	}
	if code, _ := queryErr(s, "DECLARE h2 CURSOR WITH HOLD FOR SELECT id, s FROM big WHERE id <= 60"); code != "54000" {
		t.Errorf("beside a held cursor: %q, want 54000", code)
	}
	query(t, s, "CLOSE ALL")
	query(t, s, "DECLARE h2 CURSOR WITH HOLD FOR SELECT id, s FROM big WHERE id <= 60")
}

package replica

import (
	"context"
	"strconv"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// LogTable is the table shepherd keeps in every replica: one row per
// transaction the replica committed under the write-ahead log, written by
// the transaction itself, so that the row exists exactly when the
// transaction's effects do. After a crash (of the replica or of
// shepherd) it tells which logged transactions a replica lacks.
const LogTable = "shepherd_log"

// LogCreate is the statement that creates LogTable; it reads the same in
// every dialect.
const LogCreate = "CREATE TABLE IF NOT EXISTS " + LogTable + " (barrier BIGINT PRIMARY KEY)"

// LogInsert is the statement that records barrier b in LogTable.
func LogInsert(d driver.Dialect, b uint64) driver.Query {
	return driver.Query{
		SQL:  "INSERT INTO " + LogTable + " (barrier) VALUES (" + placeholder(d) + ")",
		Args: []driver.Arg{{Type: answer.Int, Text: strconv.FormatUint(b, 10)}},
		Verb: "INSERT",
	}
}

// LogTrim is the statement that deletes the rows of LogTable below b.
func LogTrim(d driver.Dialect, b uint64) driver.Query {
	return driver.Query{
		SQL:  "DELETE FROM " + LogTable + " WHERE barrier < " + placeholder(d),
		Args: []driver.Arg{{Type: answer.Int, Text: strconv.FormatUint(b, 10)}},
		Verb: "DELETE",
	}
}

// placeholder is the first parameter's placeholder in dialect d.
func placeholder(d driver.Dialect) string {
	if d == driver.Postgres {
		return "$1"
	}
	return "?"
}

// LogRead returns the barriers at or above from that a replica's log
// table holds, creating the table if it is missing.
func LogRead(ctx context.Context, c driver.Conn, from uint64) (map[uint64]bool, uint64, error) {
	if _, err := c.Exec(ctx, driver.Query{SQL: LogCreate, Verb: "CREATE TABLE"}); err != nil {
		return nil, 0, err
	}
	a, err := c.Exec(ctx, driver.Query{
		SQL:         "SELECT barrier FROM " + LogTable + " WHERE barrier >= " + strconv.FormatUint(from, 10),
		ReturnsRows: true, Verb: "SELECT",
	})
	if err != nil {
		return nil, 0, err
	}
	have := make(map[uint64]bool, len(a.Rows))
	for _, r := range a.Rows {
		if len(r) != 1 || r[0].Null {
			return nil, 0, pgerr.New(pgerr.DataException, "%s holds a bad row", LogTable)
		}
		b, err := strconv.ParseUint(r[0].Text, 10, 64)
		if err != nil {
			return nil, 0, pgerr.New(pgerr.DataException, "%s holds barrier %q", LogTable, r[0].Text)
		}
		have[b] = true
	}
	m, err := c.Exec(ctx, driver.Query{SQL: "SELECT max(barrier) FROM " + LogTable, ReturnsRows: true, Verb: "SELECT"})
	if err != nil {
		return nil, 0, err
	}
	var top uint64
	if len(m.Rows) == 1 && !m.Rows[0][0].Null {
		top, _ = strconv.ParseUint(m.Rows[0][0].Text, 10, 64)
	}
	return have, top, nil
}

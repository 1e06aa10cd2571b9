package replica

import (
	"strconv"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// The replicas' fence against a deposed shepherd node (docs/DESIGN.md,
// section 9; the rule is ha.Admit and ha.Raise). These statements are
// for the PostgreSQL and MariaDB replicas a cluster of nodes shares; the
// replica worker does not run them yet (issue 19's wiring: the commit's
// LogInsert becomes LogInsertFenced, start-up and takeover run FenceCreate,
// FenceInit, LogAddEpoch, and FenceRaise before a term's first commit).

// FenceTable holds one row, id 1, whose epoch is the highest term that
// raised it.
const FenceTable = "shepherd_fence"

// FenceCreate creates FenceTable; it reads the same in both dialects.
const FenceCreate = "CREATE TABLE IF NOT EXISTS " + FenceTable + " (id INT PRIMARY KEY, epoch BIGINT NOT NULL)"

// LogAddEpoch adds to LogTable the column recording the term of each
// commit (0: a single-node shepherd's); it reads the same in both
// dialects and does nothing where the column exists.
const LogAddEpoch = "ALTER TABLE " + LogTable + " ADD COLUMN IF NOT EXISTS epoch BIGINT NOT NULL DEFAULT 0"

// FenceInit writes the fence's row, epoch 0, where it is missing.
func FenceInit(d driver.Dialect) driver.Query {
	if d == driver.Postgres {
		return driver.Query{SQL: "INSERT INTO " + FenceTable + " (id, epoch) VALUES (1, 0) ON CONFLICT (id) DO NOTHING", Verb: "INSERT"}
	}
	return driver.Query{SQL: "INSERT IGNORE INTO " + FenceTable + " (id, epoch) VALUES (1, 0)", Verb: "INSERT"}
}

// FenceRaise raises the fence to epoch, in an engine transaction of its
// own, committed before the term's first commit on the replica. It
// changes one row, or none when a newer term has raised the fence (the
// node is deposed: ha.Raise's refusal). Its exclusive row lock waits for
// every commit that checked the fence before it (LogInsertFenced).
func FenceRaise(d driver.Dialect, epoch uint64) driver.Query {
	e := epochArg(epoch)
	if d == driver.Postgres {
		return driver.Query{SQL: "UPDATE " + FenceTable + " SET epoch = $1 WHERE id = 1 AND epoch <= $1", Args: []driver.Arg{e}, Verb: "UPDATE"}
	}
	// The mysql driver counts matched rows (CLIENT_FOUND_ROWS), so a
	// raise to the epoch the fence has counts one row, as on PostgreSQL.
	return driver.Query{SQL: "UPDATE " + FenceTable + " SET epoch = ? WHERE id = 1 AND epoch <= ?", Args: []driver.Arg{e, e}, Verb: "UPDATE"}
}

// FenceRead reads the fence (for the admin view and tests), unlocked.
const FenceRead = "SELECT epoch FROM " + FenceTable + " WHERE id = 1"

// LogInsertFenced is LogInsert for a node of a cluster: it records
// barrier b with the committing term's epoch, and it is the fence's
// check (ha.Admit), in one statement, so that it still goes with COMMIT
// in one round trip (driver.Committer). The epoch comes from a locking
// read of the fence row that yields it only if it is not below the
// fence: a raise in progress makes it wait; a raise already made makes
// it NULL, refused by the NOT NULL column (23502, IsFenced), which fails
// the transaction instead of committing it. A commit whose check came
// first holds the shared lock until its COMMIT, so no raise, and no
// commit of a newer term, overtakes it.
func LogInsertFenced(d driver.Dialect, b, epoch uint64) driver.Query {
	ba, e := driver.Arg{Type: answer.Int, Text: strconv.FormatUint(b, 10)}, epochArg(epoch)
	if d == driver.Postgres {
		return driver.Query{
			SQL:  "INSERT INTO " + LogTable + " (barrier, epoch) VALUES ($1, (SELECT $2::bigint FROM " + FenceTable + " WHERE id = 1 AND epoch <= $2 FOR SHARE))",
			Args: []driver.Arg{ba, e}, Verb: "INSERT",
		}
	}
	return driver.Query{
		SQL:  "INSERT INTO " + LogTable + " (barrier, epoch) VALUES (?, (SELECT ? FROM " + FenceTable + " WHERE id = 1 AND epoch <= ? LOCK IN SHARE MODE))",
		Args: []driver.Arg{ba, e, e}, Verb: "INSERT",
	}
}

// IsFenced reports whether err, from LogInsertFenced, is the fence's
// refusal: a newer term raised the replica's fence, so this node is
// deposed and the transaction did not commit there. (On PostgreSQL at
// REPEATABLE READ or SERIALIZABLE, not the workers' READ COMMITTED, a
// raise committed after the transaction's snapshot fails it with 40001
// instead; FenceRead then tells the two apart.)
func IsFenced(err error) bool {
	return err != nil && pgerr.From(err).Code == pgerr.NotNullViolation
}

func epochArg(epoch uint64) driver.Arg {
	return driver.Arg{Type: answer.Int, Text: strconv.FormatUint(epoch, 10)}
}

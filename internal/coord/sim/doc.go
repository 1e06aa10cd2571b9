// Package sim is a seeded simulator over the pure coordinator core
// (package coord): it drives the core with clients and fake replicas,
// chooses every interleaving from one random seed, and checks the promise
// of DESIGN.md after every commit and at the end of the run. No
// goroutines, no clock: a seed replays exactly, trace and all.
//
// # The model
//
// The database is a handful of integer keys (8 to 20, so transactions
// conflict). A statement reads a key, adds to a key and returns the new
// value, sums a range of keys, or copies one key (plus a constant) into
// another and returns only the row count, as INSERT ... SELECT does: runs
// on different states answer alike and write differently. Its answer is
// digested into a coord.Vote as the shell digests canonical rows. Clients (8 to 16) run transactions
// of one to four statements, one operation at a time, waiting for each
// Reply; they COMMIT, or now and then ROLLBACK, and roll back after any
// error as a PostgreSQL client must.
//
// Statements name keys through a schema catalog (names to keys, the
// identity at first), which shepherd applies when the client submits a
// statement: the replicas, the log's forms and the reference run the
// translation. In the schema-swap scenarios (and a quarter of the drawn
// runs with a log and no DDL) some transactions are a lone schema change
// that swaps two names (as renaming p to tmp, q to p, tmp to q does); it
// moves no data, takes the locks ALTER TABLE takes, and reaches the
// catalog with its commit. The catalog's file (catalog.json) is the
// shell's own schema.Catalog, one table per name (a swap is three ALTER
// TABLE ... RENAME): a transaction's changes are written there, with its
// log barrier, once its client's COMMIT succeeded, or, for a client let
// go during the COMMIT of a pinned swap (schema-swap-pinned), once its
// record is durable (Txn.AfterCommit). A crash in between leaves the file
// without them.
//
// In the savepoints scenario a third of the transactions set a savepoint
// and roll back to it later: the fakes undo the writes between (keeping
// their locks, as engines do), the reference does too, and the log keeps
// only what survived, as the shell's does, for restart and catch-up to
// replay. Half of those run, right after the savepoint, an add under a
// CHECK constraint that every correct replica fails alike (23514; an
// MVCC fake then answers 25P02 until the ROLLBACK TO, as PostgreSQL
// does); its client recovers with the ROLLBACK TO (coord.Submit.Recovers)
// and commits, and the error, voted before the client saw it, must be
// backed by f+1 replicas like every other answer of the commit.
//
// One transaction in 16 is a survey (coord.Begin.Survey), the shell's
// compare-and-repair step: scheduled like the others, committed only when
// every replica that took part answered alike.
//
// Fake replicas keep committed state and run each attempt (coord.Send's
// Try) of a transaction as one engine transaction, by their class:
//
//   - locking: strict two-phase locking, shared locks for reads and
//     exclusive ones for writes, held to the end; a statement that
//     conflicts waits; a wait that closes a cycle fails with 40P01 and
//     rolls the attempt back.
//   - mvcc: READ COMMITTED; reads see the latest commits and never wait,
//     writes take row locks held to the end and re-read the row once
//     granted.
//   - serial: one transaction at a time; another waits for its first
//     statement until the running one ends.
//
// After an error an attempt answers 25P02 until COMMIT or ROLLBACK, as
// PostgreSQL does. An Abort rolls the attempt back at once; answers
// already on their way still arrive (the core must ignore them).
//
// Up to f replicas misbehave, one or two ways each: lying (wrong answers
// with some chance, or always), stalling (answers held back for ticks),
// muting (some statements never answered while everything else and the
// probes are: selective silence, which only coord.Config.OpTicks
// catches; TestSimSelectiveSilence),
// spurious deadlock errors, spurious unique violations (errs; only in
// the erring-primary scenarios), a crash (coord.Down), or broken concurrency
// control that never blocks and loses updates (the paper's figure 5
// primary). Only in scenarios: silent corruption (corrupt: a COMMIT
// stores, for one key it wrote, another value than its statements
// answered with), and a log table that claims a barrier beyond the
// write-ahead log's last (claims). Each step the simulator picks at
// random among what can happen next — a client submits its next
// operation, a replica runs its next operation, an answer arrives — or
// sends a Tick.
//
// # The checks
//
//  1. Answers: the committed transactions, replayed one at a time on a
//     reference store in the order the core decided their commits, give
//     exactly the answers their clients received. The decision order is
//     the order of each transaction's first COMMIT Send. (It is not always
//     the order of the COMMIT replies: in CBS a reply waits for f+1
//     commits, so a slow answer can delay the reply of a transaction
//     decided before another already acknowledged.)
//  2. State: once the run drained, every correct replica still in use
//     holds exactly the reference state, with nothing left open.
//  3. Progress: the clients finish their transactions, with no stretch
//     of ticks without a reply or a finished transaction and within a
//     step budget. Work that only faulty replicas still chew on at the
//     end is left to them (Result.Lagging).
//  4. Surveys: every correct replica a survey took answered it alike
//     (they read the same state; not checked with a primary that never
//     blocks), a survey is unanimous exactly when f+1 or more took part
//     and agreed, and no survey ever accuses a replica.
//  5. Errors: an error a client gets from a replica for a statement's own
//     reasons (not a concurrency failure, cancel or 25P02) was given by
//     f+1 replicas; the erring-primary scenarios have a primary that
//     fails chosen statements with 23505.
//  6. Compare: a survey, read as compare-and-repair reads it (the
//     replicas that took part grouped by their answers, the group f+1
//     agree on chosen by coord.Agreement, the rule internal/repair
//     uses), is unanimous only when every replica that took part
//     answered alike, so a replica that committed other values than it
//     answered with is seen once a survey reads them; and no correct
//     replica is ever outside the agreed group (it would be "repaired").
//  7. Backing: when a COMMIT is acknowledged, every answer its client
//     got was given by f+1 replicas, so by a correct one. With checks 1
//     and 2 (the answers clients got are the serial reference's, which
//     every correct replica ends holding) this is what "backed by f+1
//     replicas" means when a replica stores other values than it
//     answered with.
//
// In a third of the CBS and SS runs (and the ddl-* scenarios) one
// transaction in eight is a lone DDL statement, which one locking replica
// (MariaDB-like) commits as it runs it, so that no rollback undoes it
// there, and some clients cancel their COMMIT (coord.Cancel). Check 2
// then says the core never leaves that replica different from the others
// while it stays in use: it drives such a transaction to commit, or
// retires the replica (coord.Retire). In half of those runs (and the
// ddl-block scenarios, which crash shepherd often) half the DDL
// statements stand among others in a block (coord.Submit.Defer): the
// core must keep them from that replica until the commit is decided and
// logged (the fake commits DDL with what its transaction ran before, so
// sending it earlier and rolling back leaves it different).
//
// In runs with a write-ahead log, the log may refuse records (as one too
// large is refused) and may fail for good (as after a failed fsync); the
// core is told in barrier order (coord.LogRefused, coord.LogFailed).
// Then no COMMIT may be sent to a replica, or acknowledged to a client,
// without its record durable, and the checks above still hold. The log
// holds wal.Records as the shell writes them: each writing statement with
// the client's text (its names) and one form per dialect (what the
// replicas ran). A crashed replica that comes back is replayed, in
// barrier order, the durable records it lacks, each statement in its
// dialect's form (wal.Statement.FormFor, as cluster.Replay does), and
// must then hold exactly what the log's transactions give; replay that
// resolved the client's names against today's catalog (issue 14, item 2)
// fails the schema-swap seeds (TestBrokenShellDecisions).
//
// # Restarts
//
// In a third of the drawn runs with a log, and in the
// restart* and schema-swap-restart scenarios, shepherd itself crashes
// (sim.restart): every connection goes; what was queued for the log and
// not durable never committed (its client's connection dropped); what was
// durable committed, whether or not its client heard so. Start-up then
// does what the shell's does, with the shell's own decisions: each
// reachable replica's log table (a barrier per logged transaction it
// committed, or a lie) is validated by coord.CheckBarrier, the replica is
// replayed what it lacks, coord.PlanStart picks the replicas to start
// with (any f+1 usable) and the barrier to go on from, and a new core
// starts, the others down until they catch up as above. Checked at once:
// a replica taken in holds nothing the log lacks (committed = logged)
// and no barrier beyond it; start-up is refused only when fewer than f+1
// correct replicas were usable; every transaction acknowledged, decided
// or durable is committed on every replica taken in, and the correct ones
// among them hold exactly the reference state. Start-up that trusts log
// tables, or needs every replica, fails the restart-liar and
// restart-down seeds (TestBrokenShellDecisions). The catalog file is
// recovered as the shell's start-up recovers it (coord.PlanCatalog and
// the catalog's record of what it holds, schema.LogMark: the changes of
// the durable records it lacks, applied from the log), and must then map
// names exactly as the log's committed schema changes, applied once each
// in barrier order, give (issue 14, item 10). Start-up that applies none
// of them, or applies again those the file holds, fails
// schema-swap-restart seed 1, and so does a catalog that does not record
// the barrier with the changes (schema.Catalog.Commit); a pinned swap
// recorded when its client is let go, without its barrier, fails
// schema-swap-pinned seed 1 (TestBrokenShellDecisions). With DDL that a
// replica commits as it runs it, the shell records a DDL intent before the core
// gets the statement, and start-up resolves the open ones with
// coord.PlanIntents (sim.resolveIntents): completing them (logged after
// the log's last record, then replayed to every replica) or retiring the
// replicas that may hold them. Start-up that ignores them leaves that
// replica alone with a change (the restart seeds SS 3 and CBS 3 fail,
// TestBrokenShellDecisions).
//
// Besides, every action must keep the contract of coord's Send, Abort,
// Reply and Finished (ops of an attempt in order, a new try only after an
// Abort, no Abort after COMMIT was sent, replies only to waiting clients,
// from replicas that answered). A failure names the seed, the command
// that replays it verbosely, the replicas' and clients' state and the
// last events.
//
// # Running it
//
//	go test ./internal/coord/sim                           40k transactions in each of serial, cbs, ss
//	go test ./internal/coord/sim -sim.txns=100000          100k transactions per mode
//	go test ./internal/coord/sim -sim.modes=cbs            CBS only
//	SHEPHERD_SIM_MODES=cbs go test ./...                   the same, by environment
//	go test ./internal/coord/sim -run 'TestSim$' -sim.modes=cbs -sim.seed=49 -v
//	                                                       replay one seed with a full trace
//
// -sim.first moves the sweep to other seeds; -sim.scenario=name runs a
// named cluster (Scenarios) instead of the drawn one, and TestScenarios
// runs each of them on a few seeds.
package sim

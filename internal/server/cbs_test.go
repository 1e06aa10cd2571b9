package server

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/config"
)

// cbsBankSeconds is how long each CBS bank run lasts: 30 s, or
// SHEPHERD_BANK_SECONDS for a quicker local run.
func cbsBankSeconds(t *testing.T) time.Duration {
	if v := os.Getenv("SHEPHERD_BANK_SECONDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("SHEPHERD_BANK_SECONDS=%q is not a positive number", v)
		}
		return time.Duration(n) * time.Second
	}
	return 30 * time.Second
}

const cbsAccounts = 1000

// read is one balance a committed transfer read: account acc had balance
// bal at version ver, and the transfer then changed it by delta.
type read struct {
	acc, ver   int
	bal, delta int64
}

// bankResult is what a bank run observed.
type bankResult struct {
	committed []read // reads of committed transfers
	commits   int64
	refused   int64 // commits refused with class 40 and retried
}

// TestBankCBS runs 16 clients of transfers over 1,000 accounts for 30 s in
// cbs mode, MariaDB primary with PostgreSQL and SQLite secondaries: first
// with no fault, then with 5% wrong answers on a secondary, then on the
// primary; and for a third of that in ss mode with a faulty SQLite. Every
// committed read is checked against the transfer log and the final state
// (see checkChains), the total never changes, the replicas end identical,
// and the faulty replica is caught.
func TestBankCBS(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mode   string
		faulty string // replica given wrong_answer_rate = 0.05
	}{
		{"clean", "cbs", ""},
		{"faulty-secondary", "cbs", "pg"},
		{"faulty-primary", "cbs", "maria"},
		{"ss-faulty-secondary", "ss", "lite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := realCluster(t, tc.mode)
			for i := range cfg.Replicas {
				if cfg.Replicas[i].Name == tc.faulty {
					cfg.Replicas[i].Fault = config.Fault{WrongAnswerRate: 0.05, Seed: 7}
				}
			}
			addr, srv := start(t, cfg)
			d := cbsBankSeconds(t)
			if tc.mode == "ss" {
				d /= 3
			}
			res := runBank(t, addr, bankClients, 2, d)
			checkBank(t, srv, addr, res, d)
			// A faulty replica whose answer to a write (RETURNING rows)
			// was wrong twice in a row is taken out, since shepherd
			// cannot tell a lie in the answer from a different effect;
			// catch-up brings it back from the log.
			waitAllBack(t, srv)
			assertIdentical(t, cfg, "SELECT id, bal, ver FROM acc ORDER BY id")
			for _, r := range srv.Cluster().Replicas() {
				switch {
				case r.Name == tc.faulty && r.Mismatches == 0:
					t.Errorf("faulty replica %s was never caught: 0 mismatches", r.Name)
				case r.Name != tc.faulty && r.Mismatches > 0:
					t.Errorf("correct replica %s accused %d times", r.Name, r.Mismatches)
				}
				t.Logf("replica %s (%s, %s): %s, %d mismatches", r.Name, r.Class, r.Role, r.State, r.Mismatches)
			}
		})
	}
}

// checkBank waits until every replica is done, then checks a bank run:
// something committed, every committed read agrees with the log and the
// final state (checkChains), and the total is unchanged.
func checkBank(t *testing.T, srv *Server, addr string, res *bankResult, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d transfers committed in %v, %d refused and retried", res.commits, d, res.refused)
	if res.commits == 0 {
		t.Fatal("no transfer committed")
	}
	conn := connect(t, addr, "app")
	if wrong := checkChains(t, conn, res.committed); wrong > 0 {
		t.Errorf("%d committed reads were wrong", wrong)
	}
	var sum int64
	retry40(t, func() error { return conn.QueryRow(ctx, "SELECT sum(bal) FROM acc").Scan(&sum) })
	if sum != cbsAccounts*bankInitial {
		t.Errorf("total %d, want %d", sum, cbsAccounts*bankInitial)
	}
}

// runBank creates the accounts and runs transfers from clients
// connections for d, with readers checking the total meanwhile.
func runBank(t testing.TB, addr string, clients, readers int, d time.Duration) *bankResult {
	t.Helper()
	setup := connect(t, addr, "app")
	mustExec(t, setup, "CREATE TABLE acc (id int PRIMARY KEY, bal bigint NOT NULL, ver int NOT NULL)")
	var vals []string
	for i := 1; i <= cbsAccounts; i++ {
		vals = append(vals, fmt.Sprintf("(%d, %d, 0)", i, bankInitial))
		if len(vals) == 250 || i == cbsAccounts {
			mustExec(t, setup, "INSERT INTO acc VALUES "+strings.Join(vals, ", "))
			vals = vals[:0]
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	res := &bankResult{}
	var mu sync.Mutex
	var commits, refused atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, clients+readers)
	for c := range clients {
		conn := connect(t, addr, "app")
		rng := rand.New(rand.NewPCG(uint64(c), 99))
		wg.Go(func() {
			for ctx.Err() == nil {
				from, to := rng.IntN(cbsAccounts)+1, rng.IntN(cbsAccounts)+1
				if from == to {
					continue
				}
				amount := int64(rng.IntN(50) + 1)
				// The transfer itself is not cut short by the end of the
				// run: its outcome must be known to check the log.
				reads, n, err := verifiedTransfer(context.Background(), conn, from, to, amount)
				refused.Add(int64(n))
				if err != nil {
					errs <- err
					return
				}
				commits.Add(1)
				mu.Lock()
				res.committed = append(res.committed, reads...)
				mu.Unlock()
			}
		})
	}
	for range readers {
		conn := connect(t, addr, "app")
		wg.Go(func() {
			for ctx.Err() == nil {
				var sum int64
				err := conn.QueryRow(ctx, "SELECT sum(bal) FROM acc").Scan(&sum)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					if strings.HasPrefix(sqlstate(err), "40") {
						continue
					}
					errs <- fmt.Errorf("reader: %w", err)
					return
				}
				if sum != cbsAccounts*bankInitial {
					errs <- fmt.Errorf("reader saw total %d, want %d", sum, cbsAccounts*bankInitial)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	res.commits, res.refused = commits.Load(), refused.Load()
	return res
}

// verifiedTransfer moves amount from one account to another, reading both
// balances and versions first. It retries while the cluster refuses the
// commit (class 40) or an account read comes back empty, and returns the reads of the attempt that committed,
// and how many attempts were refused.
func verifiedTransfer(ctx context.Context, c *pgx.Conn, from, to int, amount int64) ([]read, int, error) {
	for refused := 0; ; refused++ {
		var reads []read
		err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			for _, a := range []struct {
				id    int
				delta int64
			}{{from, -amount}, {to, amount}} {
				r := read{acc: a.id, delta: a.delta}
				if err := tx.QueryRow(ctx, "SELECT bal, ver FROM acc WHERE id = $1", a.id).Scan(&r.bal, &r.ver); err != nil {
					return err
				}
				reads = append(reads, r)
			}
			for _, r := range reads {
				if _, err := tx.Exec(ctx, "UPDATE acc SET bal = bal + $1, ver = ver + 1 WHERE id = $2", r.delta, r.acc); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			return reads, refused, nil
		}
		switch {
		case strings.HasPrefix(sqlstate(err), "40"):
		case errors.Is(err, pgx.ErrNoRows):
			// A faulty primary's answer lost the account: the application
			// gives up on the transfer (rolls back) and tries again.
		default:
			return nil, refused, fmt.Errorf("transfer %d -> %d: %w", from, to, err)
		}
	}
}

// checkChains checks every committed read against the final state: for
// each account, the committed transfers' reads must be versions 0, 1, …
// of it, each once, each balance the previous one plus the previous
// transfer's change, ending at the final balance and version. A wrong
// answer that committed breaks its chain. It returns the number of
// broken links.
func checkChains(t *testing.T, conn *pgx.Conn, reads []read) int {
	t.Helper()
	type state struct {
		bal int64
		ver int
	}
	var final map[int]state
	retry40(t, func() error {
		final = map[int]state{}
		rows, err := conn.Query(context.Background(), "SELECT id, bal, ver FROM acc")
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int
			var s state
			if err := rows.Scan(&id, &s.bal, &s.ver); err != nil {
				rows.Close()
				return err
			}
			final[id] = s
		}
		return rows.Err()
	})
	byAcc := map[int]map[int]read{}
	wrong := 0
	for _, r := range reads {
		if byAcc[r.acc] == nil {
			byAcc[r.acc] = map[int]read{}
		}
		if _, dup := byAcc[r.acc][r.ver]; dup {
			t.Errorf("account %d: two committed transfers read version %d", r.acc, r.ver)
			wrong++
		}
		byAcc[r.acc][r.ver] = r
	}
	for id := 1; id <= cbsAccounts; id++ {
		f, ok := final[id]
		if !ok {
			t.Errorf("account %d is gone", id)
			wrong++
			continue
		}
		bal := int64(bankInitial)
		for v := 0; v < f.ver; v++ {
			r, ok := byAcc[id][v]
			if !ok {
				t.Errorf("account %d: no committed transfer read version %d (final version %d)", id, v, f.ver)
				wrong++
				break
			}
			if r.bal != bal {
				t.Errorf("account %d version %d: a committed transfer read balance %d, the log says %d", id, v, r.bal, bal)
				wrong++
			}
			bal = r.bal + r.delta
		}
		if len(byAcc[id]) != f.ver {
			t.Errorf("account %d: %d committed transfers, final version %d", id, len(byAcc[id]), f.ver)
			wrong++
		}
		if bal != f.bal {
			t.Errorf("account %d: the log ends at balance %d, the database says %d", id, bal, f.bal)
			wrong++
		}
	}
	return wrong
}

// retry40 runs f until it does not fail with SQLSTATE class 40 (a faulty
// primary's wrong answer is refused that way), and fails the test on any
// other error.
func retry40(t testing.TB, f func() error) {
	t.Helper()
	for range 50 {
		err := f()
		if err == nil {
			return
		}
		if !strings.HasPrefix(sqlstate(err), "40") {
			t.Fatal(err)
		}
	}
	t.Fatal("still refused after 50 tries")
}

// TestCBSFigure5 reproduces the paper's figure 5 on real engines: the
// MariaDB primary runs at READ UNCOMMITTED, so it lets two transactions
// read a counter at once and both write back their read plus one. The
// secondaries (PostgreSQL, SQLite) must keep every such lost update from
// committing: the counter ends equal to the number of acknowledged
// increments, on every replica.
//
// It runs with PostgreSQL both one transaction at a time (its default) and
// concurrently, where only its fresh answers may endorse.
func TestCBSFigure5(t *testing.T) {
	for _, schedule := range []string{"sequential", "concurrent"} {
		t.Run("pg-"+schedule, func(t *testing.T) { figure5(t, schedule) })
	}
}

func figure5(t *testing.T, pgSchedule string) {
	cfg := realCluster(t, "cbs")
	cfg.Replicas[0].Fault = config.Fault{Isolation: "read-uncommitted"}
	cfg.Replicas[1].Schedule = pgSchedule
	addr, srv := start(t, cfg)
	setup := connect(t, addr, "app")
	mustExec(t, setup, "CREATE TABLE counter (id int PRIMARY KEY, v int NOT NULL)")
	mustExec(t, setup, "INSERT INTO counter VALUES (1, 0)")
	ctx := context.Background()
	const clients, rounds = 8, 25
	var acked, refused atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		conn := connect(t, addr, "app")
		wg.Go(func() {
			for range rounds {
				for {
					err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
						var v int
						if err := tx.QueryRow(ctx, "SELECT v FROM counter WHERE id = 1").Scan(&v); err != nil {
							return err
						}
						_, err := tx.Exec(ctx, "UPDATE counter SET v = $1 WHERE id = 1", v+1)
						return err
					})
					if err == nil {
						acked.Add(1)
						break
					}
					if !strings.HasPrefix(sqlstate(err), "40") {
						errs <- err
						return
					}
					refused.Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d increments acknowledged, %d refused and retried", acked.Load(), refused.Load())
	assertCount(t, setup, "SELECT v FROM counter WHERE id = 1", acked.Load())
	// The faulty primary is often caught and taken out; catch-up brings
	// it back from the log before the replicas are compared.
	waitAllBack(t, srv)
	assertIdentical(t, cfg, "SELECT id, v FROM counter")
	for _, r := range srv.Cluster().Replicas() {
		t.Logf("replica %s (%s): %s, %d mismatches", r.Name, r.Role, r.State, r.Mismatches)
	}
}

// TestCBSReadAfterCommit: on the MVCC secondary a statement that ran on
// the primary after a transaction's COMMIT waits for that COMMIT to finish
// there. Writers increment counters and, right after each commit, a
// reader on another connection must see the new value; every replica must
// agree (no refused commit, no mismatch).
func TestCBSReadAfterCommit(t *testing.T) {
	cfg := realCluster(t, "cbs")
	cfg.Replicas[1].Schedule = "concurrent"
	addr, srv := start(t, cfg)
	setup := connect(t, addr, "app")
	mustExec(t, setup, "CREATE TABLE ctr (id int PRIMARY KEY, v int NOT NULL)")
	mustExec(t, setup, "INSERT INTO ctr VALUES (1, 0), (2, 0), (3, 0), (4, 0)")
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for id := 1; id <= 4; id++ {
		w, r := connect(t, addr, "app"), connect(t, addr, "app")
		wg.Go(func() {
			for want := 1; want <= 40; want++ {
				if _, err := w.Exec(ctx, "UPDATE ctr SET v = v + 1 WHERE id = $1", id); err != nil {
					errs <- err
					return
				}
				var got int
				err := pgx.BeginFunc(ctx, r, func(tx pgx.Tx) error {
					return tx.QueryRow(ctx, "SELECT v FROM ctr WHERE id = $1", id).Scan(&got)
				})
				if err != nil {
					errs <- fmt.Errorf("read after commit: %w", err)
					return
				}
				if got != want {
					errs <- fmt.Errorf("counter %d: read %d right after committing %d", id, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.Cluster().Replicas() {
		if r.Mismatches > 0 {
			t.Errorf("replica %s: %d mismatches", r.Name, r.Mismatches)
		}
	}
	assertIdentical(t, cfg, "SELECT id, v FROM ctr ORDER BY id")
}

// TestCBSSerialReplicaNeeded: with the PostgreSQL secondary down, the
// SQLite replica (serial class) is needed for f+1, so it must become ready
// to commit transactions ahead of their COMMIT decision, or nothing could
// commit.
func TestCBSSerialReplicaNeeded(t *testing.T) {
	cfg := realCluster(t, "cbs")
	addr, srv := start(t, cfg)
	setup := connect(t, addr, "app")
	mustExec(t, setup, "CREATE TABLE acc (id int PRIMARY KEY, bal bigint NOT NULL)")
	mustExec(t, setup, "INSERT INTO acc VALUES (1, 100), (2, 100), (3, 100), (4, 100)")
	if err := srv.Cluster().TakeDown("pg"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for c := range 4 {
		conn := connect(t, addr, "app")
		wg.Go(func() {
			for i := range 20 {
				if err := transfer(ctx, conn, c%4+1, (c+i)%4+1, 1); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("transfers did not finish: the serial replica never became ready")
	}
	assertCount(t, setup, "SELECT sum(bal) FROM acc", 400)
	if err := srv.Cluster().Idle(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfg.Replicas = []config.Replica{cfg.Replicas[0], cfg.Replicas[2]}
	assertIdentical(t, cfg, "SELECT id, bal FROM acc ORDER BY id")
	for _, r := range srv.Cluster().Replicas() {
		if r.Name == "pg" && r.State != "down" {
			t.Errorf("pg is %s, want down", r.State)
		}
	}
}

// TestCBSMVCCWaitsForCommit: on PostgreSQL (the MVCC secondary) a read
// that ran on the primary after a writer's COMMIT must wait until that
// COMMIT finished there. PostgreSQL's commits are made slow on purpose (a
// deferred trigger sleeps 50 ms), so the writer hears COMMIT from MariaDB
// and SQLite while PostgreSQL is still committing, and the reader comes
// next. Had the read gone out at once, PostgreSQL would have answered
// from before the write and had to run it again (a re-run); with the rule
// it never does.
func TestCBSMVCCWaitsForCommit(t *testing.T) {
	cfg := realCluster(t, "cbs")
	cfg.Replicas[1].Schedule = "concurrent"
	addr, srv := start(t, cfg)
	setup := connect(t, addr, "app")
	mustExec(t, setup, "CREATE TABLE ctr (id int PRIMARY KEY, v int NOT NULL)")
	mustExec(t, setup, "INSERT INTO ctr VALUES (1, 0)")
	ctx := context.Background()
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	pg, err := pgx.Connect(ctx, cfg.Replicas[1].DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	for _, q := range []string{
		"CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.05); RETURN NULL; END $$",
		"CREATE CONSTRAINT TRIGGER slow AFTER UPDATE ON ctr DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()",
	} {
		if _, err := pg.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	w, r := connect(t, addr, "app"), connect(t, addr, "app")
	for want := 1; want <= 20; want++ {
		mustExec(t, w, "UPDATE ctr SET v = v + 1 WHERE id = 1")
		var got int
		err := pgx.BeginFunc(ctx, r, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, "SELECT v FROM ctr WHERE id = 1").Scan(&got)
		})
		if err != nil {
			t.Fatalf("read after commit %d: %v", want, err)
		}
		if got != want {
			t.Fatalf("read %d right after committing %d", got, want)
		}
	}
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	for _, rs := range srv.Cluster().Replicas() {
		if rs.Reruns > 0 || rs.Mismatches > 0 {
			t.Errorf("%s: %d re-runs, %d mismatches; want none", rs.Name, rs.Reruns, rs.Mismatches)
		}
	}
	assertIdentical(t, cfg, "SELECT id, v FROM ctr")
}

// TestCBSViewChange takes the MariaDB primary out while 16 clients run
// transfers. Transactions in flight abort (40001, retried by the
// clients), SQLite (the next replica fit to be primary) takes over once
// it has committed everything decided, and the clients go on: every
// committed read still checks out against the log and the final state,
// and the two remaining replicas end identical.
func TestCBSViewChange(t *testing.T) {
	cfg := realCluster(t, "cbs")
	addr, srv := start(t, cfg)
	d := cbsBankSeconds(t) / 3
	// The fault is injected at a time, not waited for: nothing below
	// depends on when it lands.
	down := time.AfterFunc(d/3, func() {
		if err := srv.Cluster().TakeDown("maria"); err != nil {
			t.Error(err)
		}
	})
	defer down.Stop()
	res := runBank(t, addr, bankClients, 2, d)
	checkBank(t, srv, addr, res, d)
	roles := map[string]string{}
	for _, r := range srv.Cluster().Replicas() {
		roles[r.Name] = r.Role + "/" + r.State
		if r.Mismatches > 0 {
			t.Errorf("replica %s accused %d times", r.Name, r.Mismatches)
		}
	}
	if roles["maria"] != "secondary/down" || roles["lite"] != "primary/up" {
		t.Errorf("roles after the view change: %v", roles)
	}
	cfg.Replicas = cfg.Replicas[1:]
	assertIdentical(t, cfg, "SELECT id, bal, ver FROM acc ORDER BY id")
}

// TestShutdownDrains: shepherd stops (as on SIGTERM) right after a burst
// of transfers, with the sequential secondaries still behind. Before it
// exits, every replica must have applied every committed transaction:
// the replicas end identical without anybody waiting for them.
func TestShutdownDrains(t *testing.T) {
	cfg := realCluster(t, "cbs")
	addr, _, stop := startServer(t, cfg)
	defer stop()
	res := runBank(t, addr, bankClients, 0, cbsBankSeconds(t)/10)
	if res.commits == 0 {
		t.Fatal("no transfer committed")
	}
	stop()
	assertIdentical(t, cfg, "SELECT id, bal, ver FROM acc ORDER BY id")
}

// waitAllBack waits until every replica is back in service (a replica
// taken out catches up from the log by itself) and the cluster is idle,
// so that the replicas can be compared.
func waitAllBack(t *testing.T, srv *Server) {
	t.Helper()
	waitFor(t, "every replica back", func() bool {
		for _, r := range srv.Cluster().Replicas() {
			if r.State != "up" && r.State != "suspect" {
				return false
			}
		}
		return true
	})
	if err := srv.Cluster().Idle(context.Background()); err != nil {
		t.Fatal(err)
	}
}

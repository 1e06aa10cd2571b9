package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/admin"
	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/repair"
)

// onReplica runs statements directly on one replica, behind shepherd's
// back: the damage compare-and-repair must find. Each must change one
// row (a DROP, none).
func onReplica(t *testing.T, cfg *config.Config, name string, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		n, _ := replicaExec(t, cfg, name, driver.Query{SQL: s, Verb: strings.ToUpper(strings.Fields(s)[0])})
		if n != 1 && !strings.HasPrefix(s, "DROP") {
			t.Fatalf("%s: %s changed %d rows, want 1", name, s, n)
		}
	}
}

// finding is one CHECK/REPAIR row reduced to what a test asserts.
type finding struct{ replica, table, key, problem string }

func findings(t *testing.T, cols []string, rows [][]string) (out []finding, actions map[finding]string) {
	t.Helper()
	if len(cols) < 5 || cols[0] != "replica" || cols[1] != "table" || cols[2] != "key" || cols[3] != "problem" {
		t.Fatalf("columns %v", cols)
	}
	actions = map[finding]string{}
	for _, r := range rows {
		f := finding{r[0], r[1], r[2], r[3]}
		out = append(out, f)
		if len(r) > 5 {
			actions[f] = r[5]
		}
	}
	slices.SortFunc(out, func(a, b finding) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return out, actions
}

// TestCompareAndRepair damages rows behind shepherd's back on MariaDB
// (the primary), PostgreSQL and SQLite, in tables keyed by integer,
// text, decimal and timestamp, while clients move money through
// shepherd. CHECK names every damaged row (replica, table, key) and
// writes nothing; REPAIR rewrites every row that f+1 replicas agree on
// and leaves alone, with an alarm, the one row damaged differently on two
// replicas; afterwards the replicas are identical except that row, and
// the clients saw nothing but the usual retryable aborts.
func TestCompareAndRepair(t *testing.T) {
	cfg := realCluster(t, "cbs")
	cfg.Repair.Mode = "off" // on demand only: the test decides when
	addr, srv := start(t, cfg)
	setup := connect(t, addr, "app")
	for _, s := range []string{
		"CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, price numeric(10,2), at timestamptz)",
		"CREATE TABLE tags (code text PRIMARY KEY, note varchar(40), qty int NOT NULL)",
		"CREATE TABLE prices (amount numeric(10,2) PRIMARY KEY, label text, live boolean NOT NULL)",
		"CREATE TABLE events (at timestamp PRIMARY KEY, what text NOT NULL, day date)",
		"CREATE TABLE spare (id int PRIMARY KEY)",
		"CREATE TABLE order_lines (order_id int, line int, sku text NOT NULL, qty int, PRIMARY KEY (order_id, line))",
		"CREATE TABLE readings (id int PRIMARY KEY, v double precision, ok boolean)",
		"INSERT INTO spare VALUES (1)",
	} {
		mustExec(t, setup, s)
	}
	for i := 1; i <= 300; i++ {
		mustExec(t, setup, "INSERT INTO items VALUES ($1, $2, $3, $4)", i, fmt.Sprintf("item %d é", i),
			fmt.Sprintf("%d.%02d", i, i%100), fmt.Sprintf("2026-03-%02d 10:%02d:%02d.25+02", 1+i%28, i%60, i%60))
		mustExec(t, setup, "INSERT INTO tags VALUES ($1, $2, $3)", fmt.Sprintf("c-%04d", i), fmt.Sprintf("note %d", i), i)
		mustExec(t, setup, "INSERT INTO prices VALUES ($1, $2, $3)", fmt.Sprintf("%d.%02d", i, i%7), fmt.Sprintf("p%d", i), i%2 == 0)
		mustExec(t, setup, "INSERT INTO order_lines VALUES ($1, $2, $3, $4)", 1+i/10, i%10, fmt.Sprintf("sku-%d", i%17), i%5)
		mustExec(t, setup, "INSERT INTO readings VALUES ($1, $2, $3)", i, float64(i)/3, i%3 == 0)
		mustExec(t, setup, "INSERT INTO events VALUES ($1, $2, $3)", fmt.Sprintf("2026-01-01 00:00:%02d.%06d", i%60, i*1000+i/60),
			fmt.Sprintf("event %d", i), fmt.Sprintf("2026-02-%02d", 1+i%28))
	}
	load := startLoad(t, addr)
	ctx := context.Background()
	login := admin.Login{Addr: addr, User: "app"}
	// The clients' own rate of retryable aborts, before any pass, to set
	// beside the rate while passes run.
	waitFor(t, "300 transfers", func() bool { return load.commits() >= 300 })
	before, beforeFail := load.tally()

	// Identical replicas: nothing to report.
	cols, rows, err := admin.Compare(ctx, login, false, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := findings(t, cols, rows); len(got) > 0 {
		t.Fatalf("identical replicas, yet CHECK reports %v", got)
	}

	onReplica(t, cfg, "pg",
		"UPDATE items SET price = price + 1 WHERE id = 7",
		"DELETE FROM tags WHERE code = 'c-0042'",
		"UPDATE items SET name = 'pg says' WHERE id = 250",
		"UPDATE readings SET v = v + 0.000001 WHERE id = 123")
	onReplica(t, cfg, "maria",
		"INSERT INTO prices VALUES (99999.99, 'ghost', 1)",
		"UPDATE events SET what = 'rewritten' WHERE at = '2026-01-01 00:00:17.017000'",
		"UPDATE items SET at = '2026-03-03 03:03:03' WHERE id = 100")
	onReplica(t, cfg, "lite",
		"UPDATE items SET name = 'lite says' WHERE id = 250",
		"UPDATE prices SET live = 1 - live WHERE label = 'p33'",
		"DELETE FROM events WHERE what = 'event 60'",
		"UPDATE order_lines SET qty = 99 WHERE order_id = 5 AND line = 3",
		"DROP TABLE spare")
	// Every damaged row, with the replica it is on; items 250 is damaged
	// differently on two replicas: no two agree, so all three are named.
	want := []finding{
		{"lite", "events", "2026-01-01 00:00:00.060001", "missing"},
		{"lite", "items", "250", "no agreement"},
		{"lite", "order_lines", "(5, 3)", "differs"},
		{"lite", "prices", "33.05", "differs"},
		{"lite", "spare", "", "error"},
		{"maria", "events", "2026-01-01 00:00:17.017", "differs"},
		{"maria", "items", "100", "differs"},
		{"maria", "items", "250", "no agreement"},
		{"maria", "prices", "99999.99", "extra"},
		{"pg", "items", "250", "no agreement"},
		{"pg", "items", "7", "differs"},
		{"pg", "readings", "123", "differs"},
		{"pg", "tags", "c-0042", "missing"},
	}
	cols, rows, err = admin.Compare(ctx, login, false, "")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := findings(t, cols, rows)
	if !slices.Equal(got, want) {
		t.Errorf("CHECK found\n%v\nwant\n%v\n(rows %v)", got, want, rows)
	}
	// CHECK writes nothing: the same again.
	_, rows2, err := admin.Compare(ctx, login, false, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows2) != len(rows) {
		t.Errorf("second CHECK found %d rows, first %d", len(rows2), len(rows))
	}

	cols, rows, err = admin.Compare(ctx, login, true, "")
	if err != nil {
		t.Fatal(err)
	}
	got, actions := findings(t, cols, rows)
	if !slices.Equal(got, want) {
		t.Errorf("REPAIR found\n%v\nwant\n%v", got, want)
	}
	for f, a := range actions {
		switch {
		case f.problem == "no agreement" || f.problem == "error":
			if a == "repaired" {
				t.Errorf("%v: %s, without f+1 agreement", f, a)
			}
		case a != "repaired":
			t.Errorf("%v: %s", f, a)
		}
	}
	// What is left: the row without agreement, and the dropped table.
	cols, rows, err = admin.Compare(ctx, login, false, "")
	if err != nil {
		t.Fatal(err)
	}
	got, _ = findings(t, cols, rows)
	var left []finding
	for _, f := range want {
		if f.problem == "no agreement" || f.problem == "error" {
			left = append(left, f)
		}
	}
	if !slices.Equal(got, left) {
		t.Errorf("after REPAIR, CHECK found\n%v\nwant\n%v", got, left)
	}
	cols, rows, err = admin.Compare(ctx, login, false, "tags")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := findings(t, cols, rows); len(got) > 0 {
		t.Errorf("CHECK TABLE tags after REPAIR: %v", got)
	}
	after, afterFail := load.tally()
	t.Logf("clients: before the passes %d transfers, %.1f%% of attempts aborted; during them %d, %.1f%% aborted",
		before, 100*float64(beforeFail)/float64(before+beforeFail),
		after-before, 100*float64(afterFail-beforeFail)/float64(after-before+afterFail-beforeFail))
	load.finish(t, srv, addr, cfg)
	assertIdentical(t, cfg, "SELECT id, name, price, at FROM items WHERE id <> 250 ORDER BY id")
	assertIdentical(t, cfg, "SELECT code, note, qty FROM tags ORDER BY code")
	assertIdentical(t, cfg, "SELECT amount, label, live FROM prices ORDER BY amount")
	assertIdentical(t, cfg, "SELECT at, what, day FROM events ORDER BY at")
	assertIdentical(t, cfg, "SELECT order_id, line, sku, qty FROM order_lines ORDER BY order_id, line")
	assertIdentical(t, cfg, "SELECT id, v, ok FROM readings ORDER BY id")

	// SHOW REPAIRS keeps what the passes found.
	a := connect(t, addr, "shepherd")
	var n int
	hist, err := a.Query(ctx, "SHOW REPAIRS")
	if err != nil {
		t.Fatal(err)
	}
	for hist.Next() {
		n++
	}
	if hist.Err() != nil || n < 2*len(want) {
		t.Errorf("SHOW REPAIRS: %d rows (%v), want at least %d", n, hist.Err(), 2*len(want))
	}
	var running, passes, last, remaining string
	if err := a.QueryRow(ctx, "SHOW REPAIR STATUS").Scan(&running, &passes, &last, nil, nil, nil, nil, nil, &remaining, nil, nil); err != nil {
		t.Fatal(err)
	}
	if running != "" || passes != "6" || last != "checking table tags" || remaining != "0" {
		t.Errorf("SHOW REPAIR STATUS: running %q, %s passes, last %q, %s remaining", running, passes, last, remaining)
	}

	// A replica taken out is named as not compared: a check that says
	// nothing of it must not pass for agreement.
	if err := srv.Cluster().TakeDown("lite"); err != nil {
		t.Fatal(err)
	}
	cols, rows, err = admin.Compare(ctx, login, false, "tags")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := findings(t, cols, rows); !slices.Equal(got, []finding{{"lite", "", "", "error"}}) {
		t.Errorf("CHECK TABLE tags with lite taken out: %v", got)
	}
}

// TestRepairModes damages one row on one replica in each mode that votes
// (ss, serial; cbs is TestCompareAndRepair) and lets the background
// runner find and repair it; passthrough has one replica and nothing to
// compare.
func TestRepairModes(t *testing.T) {
	for _, mode := range []string{"ss", "serial"} {
		t.Run(mode, func(t *testing.T) {
			cfg := realCluster(t, mode)
			cfg.Repair = config.Repair{Mode: "repair", Every: "20ms"}
			addr, srv := start(t, cfg)
			setup := connect(t, addr, "app")
			mustExec(t, setup, "CREATE TABLE kv (k text PRIMARY KEY, v bigint NOT NULL, at timestamp)")
			for i := range 100 {
				mustExec(t, setup, "INSERT INTO kv VALUES ($1, $2, '2026-05-01 12:00:00')", fmt.Sprintf("key %03d", i), i)
			}
			if err := srv.Cluster().Idle(context.Background()); err != nil {
				t.Fatal(err)
			}
			onReplica(t, cfg, "pg", "UPDATE kv SET v = -1 WHERE k = 'key 042'")
			waitFor(t, "the background runner to repair pg", func() bool {
				_, repaired := srv.Repair().Counts("pg")
				return repaired > 0
			})
			if err := srv.Cluster().Idle(context.Background()); err != nil {
				t.Fatal(err)
			}
			assertIdentical(t, cfg, "SELECT k, v, at FROM kv ORDER BY k")
			var found bool
			for _, f := range srv.Repair().History() {
				found = found || (f.Replica == "pg" && f.Table == "kv" && f.Key == "key 042" && f.Action == "repaired")
			}
			if !found {
				t.Errorf("SHOW REPAIRS lacks the repair: %v", srv.Repair().History())
			}
		})
	}
}

// TestCompareHashesAgree fills tables of every type that is hashed inside
// the engines, in every way a client can (constants, parameters, values
// shepherd pins: now(), current_date, gen_random_uuid(), serial keys),
// and checks that a pass finds the chunks equal at the first comparison:
// the canonical text each engine writes is the same bytes, so identical
// tables cost one hash per chunk rather than a descent to their rows.
func TestCompareHashesAgree(t *testing.T) {
	cfg := realCluster(t, "cbs")
	cfg.Repair.Mode = "off"
	addr, srv := start(t, cfg)
	c := connect(t, addr, "app")
	mustExec(t, c, `CREATE TABLE every (id serial PRIMARY KEY, s smallint, i int, b bigint, n numeric(12,3), n0 numeric(9),
		ok boolean, t text, v varchar(20), ch char(5), d date, ts timestamp, tz timestamptz, u uuid, bs bytea,
		made timestamptz DEFAULT now(), day date DEFAULT current_date, ref uuid DEFAULT gen_random_uuid())`)
	for i := range 200 {
		var ok any = i%3 == 0
		if i%7 == 0 {
			ok = nil
		}
		mustExec(t, c, `INSERT INTO every (s, i, b, n, n0, ok, t, v, ch, d, ts, tz, u, bs)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
			int16(i-100), int32(i*1000-7), int64(i)<<40, fmt.Sprintf("%d.%03d", i-50, i*37%1000), fmt.Sprint(i*i),
			ok, fmt.Sprintf("text %d ünï '%d'", i, i), fmt.Sprintf("v%d", i), fmt.Sprintf("c%d", i%100),
			fmt.Sprintf("20%02d-%02d-%02d", i%50, 1+i%12, 1+i%28), fmt.Sprintf("2026-04-05 06:07:%02d.%d", i%60, i),
			fmt.Sprintf("2026-04-05 06:07:08.%06d-05", i), fmt.Sprintf("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a%02d", i%100),
			[]byte{byte(i), 0, 255, '\\'})
	}
	mustExec(t, c, "INSERT INTO every (t, ch) VALUES ('', '')")
	mustExec(t, c, "INSERT INTO every (t, v) VALUES (NULL, 'x y z')")
	mustExec(t, c, "UPDATE every SET made = now(), day = current_date WHERE id % 5 = 0")
	// A bytea parameter sent as text ("\x..."), as pgx does for an
	// untyped one, is stored as its bytes on every engine, not as text.
	var bs []byte
	if err := c.QueryRow(context.Background(), "SELECT bs FROM every WHERE id = 8").Scan(&bs); err != nil || string(bs) != "\x07\x00\xff\\" {
		t.Errorf("bytea read back as %q (%v), want %q", bs, err, "\x07\x00\xff\\")
	}
	rep, err := srv.Repair().Run(context.Background(), repair.Options{Table: "every"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) > 0 {
		t.Fatalf("identical tables: %v", rep.Findings)
	}
	if rep.Rows != 202 || rep.Rounds != 1 {
		t.Errorf("%d rows in %d rounds: the engines hash identical rows differently (want 202 rows, 1 round)", rep.Rows, rep.Rounds)
	}

	// Types compared row by row, in shepherd: the replicas must hold the
	// same values all the same.
	mustExec(t, c, "CREATE TABLE odd (id int PRIMARY KEY, r real, f double precision, tm time, j json, jb jsonb)")
	for i := range 100 {
		mustExec(t, c, "INSERT INTO odd VALUES ($1, $2, $3, $4, $5, $6)", i, float32(i)/7, float64(i)/3-1e-9,
			fmt.Sprintf("%02d:%02d:%02d.%d", i%24, i%60, i%60, i), fmt.Sprintf(`{"a": %d, "b": [1, 2]}`, i),
			fmt.Sprintf(`{"z": "x%d", "a": null}`, i))
	}
	mustExec(t, c, "INSERT INTO odd (id) VALUES (1000)")
	rep, err = srv.Repair().Run(context.Background(), repair.Options{Table: "odd"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) > 0 || rep.Rows != 101 {
		t.Errorf("odd: %d rows, findings %v", rep.Rows, rep.Findings)
	}

	// Go values, which pgx sends typed and often in binary: the same
	// again.
	mustExec(t, c, "CREATE TABLE typed (id bigint PRIMARY KEY, at timestamptz, ts timestamp, d date, f double precision, ok boolean, b bytea, n numeric(10,2))")
	base := time.Date(2026, 7, 8, 9, 10, 11, 123456000, time.FixedZone("x", 5*3600))
	for i := range 100 {
		at := base.Add(time.Duration(i) * 90 * time.Minute)
		mustExec(t, c, "INSERT INTO typed VALUES ($1, $2, $3, $4, $5, $6, $7, $8)", int64(i), at, at.UTC(), at,
			float64(i)*1.1, i%2 == 0, []byte(fmt.Sprintf("b%d\x00", i)), float64(i)+0.25)
	}
	rep, err = srv.Repair().Run(context.Background(), repair.Options{Table: "typed"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) > 0 || rep.Rows != 100 {
		t.Errorf("typed: %d rows, findings %v", rep.Rows, rep.Findings)
	}
}

// TestParamTypesDescribed: a prepared statement's untyped parameters are
// described with the types PostgreSQL would infer where shepherd can tell
// (the column a value goes to or is compared with), so that clients send
// typed values.
func TestParamTypesDescribed(t *testing.T) {
	cfg := realCluster(t, "cbs")
	cfg.Repair.Mode = "off"
	addr, _ := start(t, cfg)
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE typed (id bigint PRIMARY KEY, at timestamptz, ts timestamp, d date, f double precision, ok boolean, b bytea, n numeric(10,2))")
	for q, want := range map[string][]uint32{
		"INSERT INTO typed VALUES ($1, $2, $3, $4, $5, $6, $7, $8)": {20, 1184, 1114, 1082, 701, 16, 17, 1700},
		"SELECT id FROM typed WHERE d = $1 AND id > $2":             {1082, 20},
		"UPDATE typed SET b = $1 WHERE at < $2":                     {17, 1184},
		"SELECT $1::date + 1":                                       {1082},
	} {
		sd, err := c.Prepare(context.Background(), "", q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if !slices.Equal(sd.ParamOIDs, want) {
			t.Errorf("%s: parameters described as %v, want %v", q, sd.ParamOIDs, want)
		}
	}
}

// TestCompareSeesExtraDigits: a SQLite replica that holds more digits
// than a numeric(p,s) column keeps (99.49001287680001 where the others
// hold 99.49: what SQLite stored before values were rounded for it) is
// found by CHECK. Its canonical text printed the value at the column's
// scale, which hid the difference.
func TestCompareSeesExtraDigits(t *testing.T) {
	cfg := realCluster(t, "cbs")
	cfg.Repair.Mode = "off"
	addr, srv := start(t, cfg)
	c := connect(t, addr, "app")
	mustExec(t, c, "CREATE TABLE num (id int PRIMARY KEY, n numeric(6,2))")
	for i := range 50 {
		mustExec(t, c, "INSERT INTO num (id, n) VALUES ($1, $2)", i, fmt.Sprintf("%d.%02d", i*37-900, i*13%100))
	}
	mustExec(t, c, "UPDATE num SET n = 99.49 WHERE id = 7")
	rep, err := srv.Repair().Run(context.Background(), repair.Options{Table: "num"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) > 0 {
		t.Fatalf("identical tables: %v", rep.Findings)
	}
	onReplica(t, cfg, "lite", `UPDATE "num" SET "n" = 99.49001287680001 WHERE "id" = 7`)
	rep, err = srv.Repair().Run(context.Background(), repair.Options{Table: "num"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Replica != "lite" || rep.Findings[0].Key != "7" {
		t.Errorf("findings %+v, want one: lite, key 7", rep.Findings)
	}
	// REPAIR writes the value the others hold; then nothing differs.
	if _, err := srv.Repair().Run(context.Background(), repair.Options{Table: "num", Repair: true}); err != nil {
		t.Fatal(err)
	}
	rep, err = srv.Repair().Run(context.Background(), repair.Options{Table: "num"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) > 0 {
		t.Errorf("after REPAIR: %+v", rep.Findings)
	}
	a := replicaQuery(t, cfg, "lite", driver.Query{SQL: `SELECT "n" FROM "num" WHERE "id" = 7`, ReturnsRows: true, Verb: "SELECT"})
	if len(a.Rows) != 1 || a.Rows[0][0].Text != "99.49" {
		t.Errorf("lite holds %v after REPAIR, want 99.49", a.Rows)
	}
}

package pgwire

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

var pgxModes = []pgx.QueryExecMode{
	pgx.QueryExecModeSimpleProtocol,
	pgx.QueryExecModeExec,
	pgx.QueryExecModeCacheStatement,
	pgx.QueryExecModeDescribeExec,
	pgx.QueryExecModeCacheDescribe,
}

func pgxConnect(t *testing.T, addr string, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	cfg, err := pgx.ParseConfig(fmt.Sprintf("host=%s port=%s user=alice database=db sslmode=disable", host, port))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestPgxEndToEnd(t *testing.T) {
	ts := startServer(t, nil)
	for _, mode := range pgxModes {
		t.Run(mode.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
			defer cancel()
			conn := pgxConnect(t, ts.addr, mode)
			checkPgxEcho(ctx, t, conn)
			checkPgxRows(ctx, t, conn)
			checkPgxExecAndTx(ctx, t, conn)
		})
	}
}

func checkPgxEcho(ctx context.Context, t *testing.T, conn *pgx.Conn) {
	at := time.Date(2024, 1, 2, 3, 4, 5, 123456000, time.UTC)
	price := pgtype.Numeric{Int: big.NewInt(1250), Exp: -2, Valid: true}
	var (
		i      int64
		s      string
		f      float64
		b      bool
		raw    []byte
		ts     time.Time
		num    pgtype.Numeric
		numStr string
		null   *int64
	)
	err := conn.QueryRow(ctx,
		"echo $1::int8, $2::text, $3::float8, $4::bool, $5::bytea, $6::timestamptz, $7::numeric, $8::numeric, $9::int8",
		int64(-42), "it's", 2.5, true, []byte{0, 1, 0xff}, at, price, "3.14159", nil,
	).Scan(&i, &s, &f, &b, &raw, &ts, &num, &numStr, &null)
	if err != nil {
		t.Fatalf("echo: %v", err)
	}
	if i != -42 || s != "it's" || f != 2.5 || !b || !bytes.Equal(raw, []byte{0, 1, 0xff}) || !ts.Equal(at) || null != nil {
		t.Errorf("echo gave %d %q %v %v %x %v %v", i, s, f, b, raw, ts, null)
	}
	if v, _ := num.Value(); v != "12.50" {
		t.Errorf("numeric %v, want 12.50", v)
	}
	if numStr != "3.14159" {
		t.Errorf("numeric as string %q", numStr)
	}
}

func checkPgxRows(ctx context.Context, t *testing.T, conn *pgx.Conn) {
	rows, err := conn.Query(ctx, "select rows")
	if err != nil {
		t.Fatalf("select rows: %v", err)
	}
	type row struct {
		id    int64
		name  *string
		price pgtype.Numeric
		ratio *float64
		ok    *bool
		data  []byte
		day   pgtype.Date
		at    pgtype.Timestamptz
		uid   pgtype.UUID
		doc   map[string]any
	}
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.name, &r.price, &r.ratio, &r.ok, &r.data, &r.day, &r.at, &r.uid, &r.doc); err != nil {
			t.Fatalf("scan: %v", err)
		}
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("rows: %v", err)
	}
	if tag := rows.CommandTag().String(); tag != "SELECT 2" {
		t.Errorf("tag %q", tag)
	}
	if len(got) != 2 {
		t.Fatalf("%d rows", len(got))
	}
	r := got[0]
	price, _ := r.price.Value()
	wantDay := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)
	wantAt := time.Date(2024, 1, 2, 3, 4, 5, 123456000, time.UTC)
	if r.id != 1 || *r.name != "alice" || price != "12.50" || *r.ratio != 0.25 || !*r.ok ||
		!bytes.Equal(r.data, []byte{0, 0xff}) || !r.day.Time.Equal(wantDay) || !r.at.Time.Equal(wantAt) ||
		fmt.Sprintf("%x", r.uid.Bytes) != "a0eebc999c0b4ef8bb6d6bb9bd380a11" || r.doc["a"] != float64(1) {
		t.Errorf("row 1 = %+v", r)
	}
	r = got[1]
	if r.id != 2 || r.name != nil || r.price.Valid || r.ratio != nil || r.ok != nil || r.data != nil ||
		r.day.Valid || r.at.Valid || r.uid.Valid || r.doc != nil {
		t.Errorf("row 2 = %+v", r)
	}
}

func checkPgxExecAndTx(ctx context.Context, t *testing.T, conn *pgx.Conn) {
	tag, err := conn.Exec(ctx, "insert into t values ($1)", "x")
	if err != nil || tag.String() != "INSERT 0 1" {
		t.Fatalf("insert: %v %q", err, tag)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st := conn.PgConn().TxStatus(); st != 'T' {
		t.Errorf("tx status %q in a transaction", st)
	}
	if _, err := tx.Exec(ctx, "fail"); err == nil {
		t.Error("fail did not fail")
	}
	if st := conn.PgConn().TxStatus(); st != 'E' {
		t.Errorf("tx status %q after an error", st)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := conn.QueryRow(ctx, "count 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("after rollback: %v %d", err, n)
	}
}

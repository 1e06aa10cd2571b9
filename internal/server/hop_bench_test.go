package server

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/testenv"
)

// BenchmarkPassthroughHop measures the proxy's own cost per statement:
// pgbench's select-only statement, prepared (Bind, Execute, Sync per
// statement, as pgbench -M prepared sends it), through passthrough over
// a real PostgreSQL. The clients speak raw protocol bytes, so nearly all
// of the process's CPU is shepherd's. Reported per statement: process
// CPU (user + system, getrusage; sys-µs/stmt is the system's part, most
// of it the loopback sockets' work), allocations, and the process's read and
// write system calls (/proc/self/io), which on this machine's shared
// cores are steadier than wall time.
//
//	go test -run '^$' -bench PassthroughHop -benchtime 20000x ./internal/server
//	SHEPHERD_HOP_CLIENTS=1 ... (default 8)
func BenchmarkPassthroughHop(b *testing.B) {
	clients := benchEnv(b, "SHEPHERD_HOP_CLIENTS", 8)
	cfg := &config.Config{
		Listen:   "127.0.0.1:0",
		DataDir:  b.TempDir(),
		Mode:     "passthrough",
		Replicas: []config.Replica{{Name: "pg", Driver: "postgres", DSN: testenv.Postgres(b)}},
	}
	addr, _, stop := startServer(b, cfg)
	defer stop()
	ctx := context.Background()
	url := fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr)
	setup, err := pgconn.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	const accounts = 10000
	for _, q := range []string{
		"CREATE TABLE pgbench_accounts (aid int PRIMARY KEY, bid int, abalance int, filler char(84))",
		"INSERT INTO pgbench_accounts SELECT g, 1, 0, '' FROM generate_series(1, " + strconv.Itoa(accounts) + ") g",
	} {
		if _, err := setup.Exec(ctx, q).ReadAll(); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	setup.Close(ctx)

	conns := make([]net.Conn, clients)
	for i := range conns {
		pc, err := pgconn.Connect(ctx, url)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := pc.Prepare(ctx, "P0_1", "SELECT abalance FROM pgbench_accounts WHERE aid = $1;", nil); err != nil {
			b.Fatal(err)
		}
		hj, err := pc.Hijack()
		if err != nil {
			b.Fatal(err)
		}
		conns[i] = hj.Conn
		defer hj.Conn.Close()
	}
	// One round first, outside the measurement: plans, caches.
	for i, nc := range conns {
		if err := hopStatements(nc, 50, i); err != nil {
			b.Fatal(err)
		}
	}

	b.ReportAllocs()
	io0 := procIO(b)
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i, nc := range conns {
		n := b.N / clients
		if i < b.N%clients {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := hopStatements(nc, n, i); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	io1 := procIO(b)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	cpu := time.Duration(ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano()) * time.Nanosecond
	sys := time.Duration(ru1.Stime.Nano()-ru0.Stime.Nano()) * time.Nanosecond
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/stmt")
	b.ReportMetric(float64(sys.Microseconds())/float64(b.N), "sys-µs/stmt")
	b.ReportMetric(float64(io1["syscw"]-io0["syscw"])/float64(b.N), "writes/stmt")
	b.ReportMetric(float64(io1["syscr"]-io0["syscr"])/float64(b.N), "reads/stmt")
}

// hopStatements sends n Bind/Execute/Sync groups of prepared statement
// P0_1, one at a time, and reads each answer to its ReadyForQuery.
func hopStatements(nc net.Conn, n, seed int) error {
	// The client allocates nothing per statement: allocs/op is the
	// server's.
	var msg, body, aid []byte
	buf := make([]byte, 64<<10)
	for i := range n {
		aid = strconv.AppendInt(aid[:0], int64(1+(seed*7919+i*104729)%10000), 10)
		msg = msg[:0]
		// Bind: portal "", statement P0_1, no parameter formats (text),
		// one parameter, no result formats.
		body = append(body[:0], 0)
		body = append(body, "P0_1\x00"...)
		body = binary.BigEndian.AppendUint16(body, 0)
		body = binary.BigEndian.AppendUint16(body, 1)
		body = binary.BigEndian.AppendUint32(body, uint32(len(aid)))
		body = append(body, aid...)
		body = binary.BigEndian.AppendUint16(body, 0)
		msg = appendMsg(msg, 'B', body)
		msg = appendMsg(msg, 'E', execBody)
		msg = appendMsg(msg, 'S', nil)
		if _, err := nc.Write(msg); err != nil {
			return err
		}
		if err := readToReady(nc, buf); err != nil {
			return fmt.Errorf("statement %d: %w", i, err)
		}
	}
	return nil
}

// execBody is Execute's: portal "", no row limit.
var execBody = []byte{0, 0, 0, 0, 0}

func appendMsg(dst []byte, typ byte, body []byte) []byte {
	dst = append(dst, typ)
	dst = binary.BigEndian.AppendUint32(dst, uint32(4+len(body)))
	return append(dst, body...)
}

// readToReady reads messages until ReadyForQuery; an ErrorResponse or a
// missing DataRow is an error.
func readToReady(nc net.Conn, buf []byte) error {
	have, rows := 0, 0
	for {
		// Whole messages at the front of buf[:have].
		for have >= 5 {
			n := int(binary.BigEndian.Uint32(buf[1:5])) + 1
			if have < n {
				break
			}
			switch buf[0] {
			case 'E':
				return fmt.Errorf("error response: %q", buf[5:n])
			case 'D':
				rows++
			case 'Z':
				if rows != 1 {
					return fmt.Errorf("%d rows, want 1", rows)
				}
				if have != n {
					return fmt.Errorf("%d bytes after ReadyForQuery", have-n)
				}
				return nil
			}
			copy(buf, buf[n:have])
			have -= n
		}
		k, err := nc.Read(buf[have:])
		if err != nil {
			return err
		}
		have += k
	}
}

// procIO reads the process's I/O counters (syscr, syscw, ...).
func procIO(b *testing.B) map[string]int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		b.Logf("no /proc/self/io: %v", err)
		return map[string]int64{}
	}
	m := map[string]int64{}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if ok {
			m[k], _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return m
}

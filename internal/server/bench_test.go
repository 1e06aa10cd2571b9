package server

import (
	"fmt"
	"os"

	"github.com/shepherd-db/shepherd/internal/config"
	"github.com/shepherd-db/shepherd/internal/testenv"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkBankModes measures bank-transfer throughput (16 clients, 1,000
// accounts; each transfer reads both balances and updates both accounts)
// in serial, ss and cbs over the same three real replicas: MariaDB
// primary, PostgreSQL and SQLite secondaries. The modes alternate within
// one run, several rounds, and the result is reported as ratios to
// serial, because absolute figures from this shared machine mean little.
//
//	make bench-modes
//	SHEPHERD_BENCH_SECONDS=20 SHEPHERD_BENCH_ROUNDS=3 go test -run '^$' -bench BankModes -benchtime 1x ./internal/server
func BenchmarkBankModes(b *testing.B) {
	secs := benchEnv(b, "SHEPHERD_BENCH_SECONDS", 15)
	rounds := benchEnv(b, "SHEPHERD_BENCH_ROUNDS", 2)
	modes := []string{"serial", "ss", "cbs"}
	if m := os.Getenv("SHEPHERD_BENCH_MODES"); m != "" {
		// For profiling one mode, or adding passthrough (the MariaDB
		// primary alone); ratios need serial.
		modes = strings.Split(m, ",")
	}
	for b.Loop() {
		commits := map[string]int64{}
		refused := map[string]int64{}
		for round := range rounds {
			for _, mode := range modes {
				cfg := realCluster(b, mode)
				switch mode {
				case "passthrough":
					cfg.F, cfg.Replicas = 0, cfg.Replicas[:1] // the primary alone
				case "cbs-locking":
					// A second MariaDB database in place of SQLite: a
					// locking secondary endorses concurrently.
					cfg.Mode = "cbs"
					cfg.Replicas[2] = config.Replica{Name: "maria2", Driver: "mysql", DSN: testenv.MariaDB(b)}
				}
				addr, _, stop := startServer(b, cfg)
				res := runBank(b, addr, bankClients, 0, time.Duration(secs)*time.Second)
				stop()
				commits[mode] += res.commits
				refused[mode] += res.refused
				b.Logf("round %d %-6s %7.1f transfers/s (%d refused and retried)", round+1, mode,
					float64(res.commits)/float64(secs), res.refused)
			}
		}
		var lines []string
		for _, mode := range modes {
			tps := float64(commits[mode]) / float64(secs*rounds)
			ratio := float64(commits[mode]) / float64(max(commits["serial"], 1))
			b.ReportMetric(tps, mode+"-tps")
			b.ReportMetric(ratio, mode+"/serial")
			lines = append(lines, "| "+mode+" | "+strconv.FormatFloat(tps, 'f', 1, 64)+" | "+
				strconv.FormatFloat(ratio, 'f', 2, 64)+" | "+strconv.FormatInt(refused[mode], 10)+" |")
		}
		// Printed, not logged: benchmark logs are cut after a few lines.
		fmt.Printf("\n| mode | transfers/s | ratio to serial | refused and retried |\n|---|---|---|---|\n%s\n\n", strings.Join(lines, "\n"))
	}
}

func benchEnv(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q is not a positive number", name, v)
	}
	return n
}

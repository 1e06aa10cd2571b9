package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shepherd-db/shepherd/internal/latency"
)

// Report is everything a benchmark command records: how it was run,
// where, and what it measured.
type Report struct {
	// Command is the command line, program name first.
	Command  []string  `json:"command"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Machine  Machine   `json:"machine"`
	Workload string    `json:"workload"`
	// Config is the workload's configuration.
	Config   any         `json:"config"`
	Settings Settings    `json:"settings"`
	Runs     []RunRecord `json:"runs"`
	Summary  []Point     `json:"summary"`
	Notes    []string    `json:"notes,omitempty"`
	// Target is what a single run (bench tpcc, bench bank) ran against.
	Target string `json:"target,omitempty"`
}

// Settings are the run settings shared by every run of a report.
type Settings struct {
	Modes    []string      `json:"modes,omitempty"`
	Clients  []int         `json:"clients"`
	Rounds   int           `json:"rounds"`
	WarmUp   time.Duration `json:"warmup_ns"`
	Duration time.Duration `json:"duration_ns"`
	Think    time.Duration `json:"think_ns"`
	Seed     uint64        `json:"seed"`
	// Durable: the engines the benchmark started sync every commit to
	// disk.
	Durable bool `json:"durable,omitempty"`
	// Link is the link put in front of each server engine (package
	// link); LinkHeld, how long its chunks were really held.
	Link     *LinkSettings              `json:"link,omitempty"`
	LinkHeld map[string]latency.Summary `json:"link_held,omitempty"`
}

// LinkSettings are a link's settings as reported.
type LinkSettings struct {
	Delay     time.Duration `json:"delay_ns"`
	Jitter    time.Duration `json:"jitter_ns,omitempty"`
	Bandwidth int64         `json:"bandwidth_bytes_per_s,omitempty"`
}

// WriteJSON writes the report, indented, to path.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// WriteSummaryCSV writes one line per mode and client count.
func WriteSummaryCSV(w io.Writer, points []Point) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"mode", "clients", "runs", "failed_runs", "throughput_tps", "p50_ms", "p95_ms", "p99_ms",
		"abort_rate", "vs_direct", "vs_bound", "process_cpu_us_per_txn",
		"statements_per_txn", "process_cpu_us_per_statement"})
	for _, p := range points {
		r := p.Result
		_ = cw.Write([]string{p.Mode, strconv.Itoa(p.Clients), strconv.Itoa(p.Runs), strconv.Itoa(p.Failed),
			f2(r.Throughput), ms(r.Latency.P50), ms(r.Latency.P95), ms(r.Latency.P99),
			strconv.FormatFloat(p.AbortRate, 'f', 4, 64), ratio(p.VsDirect), ratio(p.VsBound), us(r.CPUPerTxn()),
			f2(r.StatementsPerTxn()), us(r.CPUPerStatement())})
	}
	cw.Flush()
	return cw.Error()
}

// WriteRunsCSV writes one line per run.
func WriteRunsCSV(w io.Writer, runs []RunRecord) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"round", "mode", "clients", "throughput_tps", "p50_ms", "p95_ms", "p99_ms",
		"finished", "aborted", "failed", "process_cpu_us_per_txn", "load_s", "check", "error"})
	for _, rec := range runs {
		row := []string{strconv.Itoa(rec.Round), rec.Mode, strconv.Itoa(rec.Clients)}
		if r := rec.Result; r != nil {
			row = append(row, f2(r.Throughput), ms(r.Latency.P50), ms(r.Latency.P95), ms(r.Latency.P99),
				strconv.FormatInt(r.Finished, 10), strconv.FormatInt(r.Aborted, 10), strconv.FormatInt(r.Failed, 10),
				us(r.CPUPerTxn()))
		} else {
			row = append(row, "", "", "", "", "", "", "", "")
		}
		row = append(row, strconv.FormatFloat(rec.LoadTime.Seconds(), 'f', 1, 64), rec.Check, rec.Error)
		_ = cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

func f2(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64)
}

func us(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', 1, 64)
}

func ratio(x float64) string {
	if x == 0 {
		return ""
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

// FormatResult writes one run's result as a small table: the totals,
// then one line per transaction kind.
func FormatResult(w io.Writer, r *Result, kinds []string) {
	fmt.Fprintf(w, "%d clients, %v measured: %.1f txn/s, p50 %s, p95 %s, p99 %s, abort rate %.2f%%",
		r.Clients, r.Measured.Round(time.Millisecond), r.Throughput,
		human(r.Latency.P50), human(r.Latency.P95), human(r.Latency.P99), 100*r.AbortRate())
	if r.Failed > 0 {
		fmt.Fprintf(w, ", %d given up", r.Failed)
	}
	if r.Statements > 0 {
		fmt.Fprintf(w, ", %.1f statements per txn", r.StatementsPerTxn())
	}
	if r.ProcessCPU > 0 {
		fmt.Fprintf(w, "; this process used %s CPU per txn, %s per statement", human(r.CPUPerTxn()), human(r.CPUPerStatement()))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  %-12s %9s %9s %9s %9s %9s %9s %8s\n", "kind", "finished", "txn/s", "p50", "p95", "p99", "max", "aborted")
	names := slices.Clone(kinds)
	for name := range r.Kinds {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	for _, name := range names {
		k, ok := r.Kinds[name]
		if !ok {
			continue
		}
		rate := 0.0
		if r.Measured > 0 {
			rate = float64(k.Finished) / r.Measured.Seconds()
		}
		fmt.Fprintf(w, "  %-12s %9d %9.1f %9s %9s %9s %9s %8d\n", name, k.Finished, rate,
			human(k.Latency.P50), human(k.Latency.P95), human(k.Latency.P99), human(k.Latency.Max), k.Aborted)
	}
	if len(r.Aborts) > 0 {
		var parts []string
		for _, code := range slicesSortedKeys(r.Aborts) {
			parts = append(parts, fmt.Sprintf("%s=%d", code, r.Aborts[code]))
		}
		fmt.Fprintf(w, "  aborts by SQLSTATE: %s\n", strings.Join(parts, " "))
	}
}

func slicesSortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// human writes a latency with three significant digits.
func human(d time.Duration) string {
	switch {
	case d == 0:
		return "-"
	case d < time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', 0, 64) + "µs"
	case d < 10*time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + "ms"
	case d < time.Second:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
}

// FormatSummary writes the points as a Markdown table: per client count
// and mode, throughput, latency percentiles, abort rate, and the ratios
// to direct and to the three-direct bound.
func FormatSummary(w io.Writer, points []Point) {
	fmt.Fprintln(w, "| clients | mode | txn/s | p50 | p95 | p99 | aborts | × direct | × bound | CPU/txn here |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, p := range points {
		r := p.Result
		tps := fmt.Sprintf("%.1f", r.Throughput)
		if p.Runs == 0 {
			tps = "failed"
		} else if p.Failed > 0 {
			tps += fmt.Sprintf(" (%d failed)", p.Failed)
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %.2f%% | %s | %s | %s |\n", p.Clients, p.Mode, tps,
			human(r.Latency.P50), human(r.Latency.P95), human(r.Latency.P99), 100*p.AbortRate,
			times(p.VsDirect), times(p.VsBound), human(r.CPUPerTxn()))
	}
}

func times(x float64) string {
	if x == 0 {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

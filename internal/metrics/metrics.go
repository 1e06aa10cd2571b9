// Package metrics exports shepherd's counters for Prometheus
// (github.com/prometheus/client_golang) on an HTTP endpoint of its own
// ([metrics] listen).
//
// Two kinds of values are exported. Latencies and sizes (statements,
// commits, the write-ahead log's fsyncs and batches) are observed by the
// shell as they happen, through the nil-safe methods of Metrics. The
// state of the replicas, the views and compare-and-repair is read when a
// scrape comes, from a Snapshot the server assembles from the cluster and
// the repair service: those keep their own counters, and the pure core
// (internal/coord) knows nothing of this package.
package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// States are the values of a replica's state (cluster.ReplicaStatus),
// each exported as shepherd_replica_state{state=...} 1 or 0.
var States = []string{"up", "suspect", "down", "unresponsive", "failed", "retired"}

// Replica is one replica's part of a Snapshot.
type Replica struct {
	Name, Role, State string
	// VotesWon counts the transactions the replica committed: a replica
	// commits only what its answers agreed on with the decision.
	// VotesLost counts its answers outvoted; Reruns its transaction
	// attempts aborted to run again; Digests its answers kept as digests.
	VotesWon, VotesLost, Reruns, Digests int64
	// LagTxns is how many decided transactions it has yet to commit
	// (CBS and SS), LagSeconds how long the oldest of them has been
	// decided; both 0 when it is level.
	LagTxns    int
	LagSeconds float64
}

// Repair is one replica's compare-and-repair findings so far.
type Repair struct {
	Replica string
	// Repaired counts rows rewritten and verified; Unrepaired the
	// findings left as they were (a check, no agreement, a failure).
	Repaired, Unrepaired int
}

// Snapshot is what a scrape reads of the running shepherd.
type Snapshot struct {
	Replicas []Replica
	// ViewChanges counts the primary's replacements (CBS and SS).
	ViewChanges int
	// Active counts the live transactions.
	Active int
	// Waiting counts the client transactions waiting for a slot of
	// max_transactions.
	Waiting int
	// RepairPasses counts compare passes made; Repairs is per replica.
	RepairPasses int
	Repairs      []Repair
}

// Metrics holds shepherd's metrics and their registry. A nil *Metrics is
// valid and records nothing, so that the shell observes unconditionally.
type Metrics struct {
	reg        *prometheus.Registry
	statements *prometheus.HistogramVec
	commits    *prometheus.HistogramVec
	walSync    prometheus.Histogram
	walRecords prometheus.Histogram
	walBytes   prometheus.Histogram
	errors     *prometheus.CounterVec
	reloads    *prometheus.CounterVec
	// byOutcome keeps the children of statements and commits per
	// outcome once made (WithLabelValues hashes its label on every
	// call, once per statement).
	byOutcome [2][2]atomic.Pointer[prometheus.Observer]
}

// latencyBuckets spans 100µs to about 26s.
var latencyBuckets = prometheus.ExponentialBuckets(0.0001, 4, 10)

// New returns metrics registered in a registry of their own (with the Go
// runtime's and the process's collectors), reading the rest from
// snapshot at each scrape. snapshot may be nil.
func New(snapshot func() Snapshot) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.statements = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "shepherd_statement_duration_seconds",
		Help:    "Time from a statement's submission to the replicas to the answer chosen for the client, by outcome (ok or error).",
		Buckets: latencyBuckets,
	}, []string{"outcome"})
	m.commits = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "shepherd_commit_duration_seconds",
		Help:    "Time of a COMMIT, from its submission until f+1 replicas committed (or it failed), by outcome (ok or error).",
		Buckets: latencyBuckets,
	}, []string{"outcome"})
	m.walSync = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "shepherd_wal_fsync_duration_seconds",
		Help:    "Time of one fsync of a write-ahead log segment.",
		Buckets: prometheus.ExponentialBuckets(0.00005, 4, 10),
	})
	m.walRecords = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "shepherd_wal_batch_records",
		Help:    "Records made durable by one write and fsync of the write-ahead log (group commit).",
		Buckets: prometheus.ExponentialBuckets(1, 2, 12),
	})
	m.walBytes = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "shepherd_wal_batch_bytes",
		Help:    "Bytes written by one batch of the write-ahead log.",
		Buckets: prometheus.ExponentialBuckets(256, 4, 10),
	})
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shepherd_client_errors_total",
		Help: "Errors sent to clients, by SQLSTATE (0A000 counts the statements shepherd refuses).",
	}, []string{"sqlstate"})
	m.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shepherd_config_reloads_total",
		Help: "Configuration reloads (SIGHUP), by result: ok, refused (a key that needs a restart changed) or error (the file does not load).",
	}, []string{"result"})
	m.reg.MustRegister(m.statements, m.commits, m.walSync, m.walRecords, m.walBytes, m.errors, m.reloads,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if snapshot != nil {
		m.reg.MustRegister(&snapshotCollector{read: snapshot})
	}
	return m
}

func outcome(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// observer returns vec's child for err's outcome; which (0: statements,
// 1: commits) says where it is kept. The child is made on first use, as
// WithLabelValues makes it, so an outcome not seen yet is not exported.
func (m *Metrics) observer(which int, vec *prometheus.HistogramVec, err error) prometheus.Observer {
	o := 0
	if err != nil {
		o = 1
	}
	slot := &m.byOutcome[which][o]
	if p := slot.Load(); p != nil {
		return *p
	}
	obs := vec.WithLabelValues(outcome(err))
	slot.Store(&obs)
	return obs
}

// Statement observes one statement's latency.
func (m *Metrics) Statement(d time.Duration, err error) {
	if m != nil {
		m.observer(0, m.statements, err).Observe(d.Seconds())
	}
}

// Commit observes one COMMIT's latency.
func (m *Metrics) Commit(d time.Duration, err error) {
	if m != nil {
		m.observer(1, m.commits, err).Observe(d.Seconds())
	}
}

// Fsync observes one fsync of the write-ahead log.
func (m *Metrics) Fsync(d time.Duration) {
	if m != nil {
		m.walSync.Observe(d.Seconds())
	}
}

// Batch observes one batch of the write-ahead log.
func (m *Metrics) Batch(records, bytes int) {
	if m != nil {
		m.walRecords.Observe(float64(records))
		m.walBytes.Observe(float64(bytes))
	}
}

// ClientError counts an error sent to a client.
func (m *Metrics) ClientError(sqlstate string) {
	if m != nil {
		m.errors.WithLabelValues(sqlstate).Inc()
	}
}

// Reload counts a configuration reload; result is ok, refused or error.
func (m *Metrics) Reload(result string) {
	if m != nil {
		m.reloads.WithLabelValues(result).Inc()
	}
}

// Handler returns the HTTP handler of the exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Serve answers scrapes on ln (/metrics) until ctx ends.
func (m *Metrics) Serve(ctx context.Context, ln net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	err := srv.Serve(ln)
	<-stopped
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// snapshotCollector exports a Snapshot read at each scrape.
type snapshotCollector struct {
	read func() Snapshot
}

var (
	descState = prometheus.NewDesc("shepherd_replica_state",
		"1 for the replica's current state (up, suspect, down, unresponsive, failed, retired), 0 for the others.",
		[]string{"replica", "state"}, nil)
	descPrimary = prometheus.NewDesc("shepherd_replica_primary",
		"1 for the replica whose answers clients get first (the primary), 0 for the others.",
		[]string{"replica"}, nil)
	descWon = prometheus.NewDesc("shepherd_replica_votes_won_total",
		"Transactions the replica committed: a replica commits only what its answers agreed on with the decision.",
		[]string{"replica"}, nil)
	descLost = prometheus.NewDesc("shepherd_replica_votes_lost_total",
		"Answers of the replica outvoted (each also makes it suspect).",
		[]string{"replica"}, nil)
	descReruns = prometheus.NewDesc("shepherd_replica_reruns_total",
		"Transaction attempts aborted on the replica to be run again (deadlocks, lock waits, stale snapshots).",
		[]string{"replica"}, nil)
	descDigests = prometheus.NewDesc("shepherd_replica_digest_answers_total",
		"Answers the replica kept as digests only (digest_rows).",
		[]string{"replica"}, nil)
	descLagTxns = prometheus.NewDesc("shepherd_replica_lag_transactions",
		"Decided transactions the replica has yet to commit (cbs, ss).",
		[]string{"replica"}, nil)
	descLagSeconds = prometheus.NewDesc("shepherd_replica_lag_seconds",
		"How long the oldest decided transaction the replica has yet to commit has been decided (cbs, ss).",
		[]string{"replica"}, nil)
	descViews = prometheus.NewDesc("shepherd_view_changes_total",
		"Times the primary was replaced (cbs, ss).", nil, nil)
	descActive = prometheus.NewDesc("shepherd_transactions_active",
		"Live transactions (clients' and compare passes').", nil, nil)
	descWaiting = prometheus.NewDesc("shepherd_transactions_waiting",
		"Client transactions waiting for a slot of max_transactions.", nil, nil)
	descPasses = prometheus.NewDesc("shepherd_repair_passes_total",
		"Compare-and-repair passes made (background and on demand).", nil, nil)
	descFindings = prometheus.NewDesc("shepherd_repair_findings_total",
		"Rows (or tables) found to differ from what f+1 replicas agree on, by replica and outcome (repaired or unrepaired).",
		[]string{"replica", "outcome"}, nil)
)

// Describe implements prometheus.Collector.
func (c *snapshotCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descState, descPrimary, descWon, descLost, descReruns, descDigests,
		descLagTxns, descLagSeconds, descViews, descActive, descWaiting, descPasses, descFindings} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *snapshotCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.read()
	for _, r := range s.Replicas {
		for _, st := range States {
			v := 0.0
			if st == r.State {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(descState, prometheus.GaugeValue, v, r.Name, st)
		}
		primary := 0.0
		if r.Role == "primary" {
			primary = 1
		}
		ch <- prometheus.MustNewConstMetric(descPrimary, prometheus.GaugeValue, primary, r.Name)
		ch <- prometheus.MustNewConstMetric(descWon, prometheus.CounterValue, float64(r.VotesWon), r.Name)
		ch <- prometheus.MustNewConstMetric(descLost, prometheus.CounterValue, float64(r.VotesLost), r.Name)
		ch <- prometheus.MustNewConstMetric(descReruns, prometheus.CounterValue, float64(r.Reruns), r.Name)
		ch <- prometheus.MustNewConstMetric(descDigests, prometheus.CounterValue, float64(r.Digests), r.Name)
		ch <- prometheus.MustNewConstMetric(descLagTxns, prometheus.GaugeValue, float64(r.LagTxns), r.Name)
		ch <- prometheus.MustNewConstMetric(descLagSeconds, prometheus.GaugeValue, r.LagSeconds, r.Name)
	}
	ch <- prometheus.MustNewConstMetric(descViews, prometheus.CounterValue, float64(s.ViewChanges))
	ch <- prometheus.MustNewConstMetric(descActive, prometheus.GaugeValue, float64(s.Active))
	ch <- prometheus.MustNewConstMetric(descWaiting, prometheus.GaugeValue, float64(s.Waiting))
	ch <- prometheus.MustNewConstMetric(descPasses, prometheus.CounterValue, float64(s.RepairPasses))
	for _, r := range s.Repairs {
		ch <- prometheus.MustNewConstMetric(descFindings, prometheus.CounterValue, float64(r.Repaired), r.Replica, "repaired")
		ch <- prometheus.MustNewConstMetric(descFindings, prometheus.CounterValue, float64(r.Unrepaired), r.Replica, "unrepaired")
	}
}

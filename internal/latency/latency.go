// Package latency counts durations in a histogram and reports their
// percentiles: the one latency histogram of the benchmark (internal/bench)
// and the TPC-C workload (internal/workload/tpcc). Prometheus histograms
// (internal/metrics) serve the running server; this one serves reports,
// where a percentile must be close to the true value whatever the spread.
package latency

import (
	"math/bits"
	"time"
)

// Histogram counts durations in microseconds. Buckets are exact below
// 64 µs and then 32 to each doubling, so any percentile it reports is
// within about 1.6 % of the true value, whatever the number of samples.
// The zero value is empty and ready; it is not safe for concurrent use.
type Histogram struct {
	counts []uint64
	n      uint64
	sum    uint64 // microseconds
	max    uint64
}

const (
	histLinear = 64 // values below this are buckets of their own
	histPerOct = 32 // buckets per doubling above histLinear
)

// histIndex returns the bucket of v microseconds.
func histIndex(v uint64) int {
	if v < histLinear {
		return int(v)
	}
	// Keep the six leading bits: the top one says the octave, the five
	// after it say where in the octave.
	shift := bits.Len64(v) - 6
	return histLinear + (shift-1)*histPerOct + int(v>>shift) - histPerOct
}

// histValue returns the middle of bucket i in microseconds.
func histValue(i int) uint64 {
	if i < histLinear {
		return uint64(i)
	}
	k := i - histLinear
	shift := k/histPerOct + 1
	low := uint64(k%histPerOct+histPerOct) << shift
	return low + (uint64(1)<<shift)/2
}

// Add records one duration (negative ones count as zero).
func (h *Histogram) Add(d time.Duration) {
	v := uint64(max(d.Microseconds(), 0))
	i := histIndex(v)
	if i >= len(h.counts) {
		h.counts = append(h.counts, make([]uint64, i+1-len(h.counts))...)
	}
	h.counts[i]++
	h.n++
	h.sum += v
	h.max = max(h.max, v)
}

// Merge adds every sample of o to h.
func (h *Histogram) Merge(o *Histogram) {
	if len(o.counts) > len(h.counts) {
		h.counts = append(h.counts, make([]uint64, len(o.counts)-len(h.counts))...)
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

// Count returns the number of samples.
func (h *Histogram) Count() uint64 { return h.n }

// Quantile returns the duration below which a fraction q (0 to 1) of the
// samples fall; zero without samples. Quantile(1) is the exact maximum.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	if q >= 1 {
		return time.Duration(h.max) * time.Microsecond
	}
	rank := uint64(q*float64(h.n)) + 1 // the rank-th smallest sample
	rank = min(rank, h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return time.Duration(min(histValue(i), h.max)) * time.Microsecond
		}
	}
	return time.Duration(h.max) * time.Microsecond
}

// Mean returns the average duration; zero without samples.
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum/h.n) * time.Microsecond
}

// Summary summarises a histogram.
type Summary struct {
	P50  time.Duration `json:"p50_ns"`
	P95  time.Duration `json:"p95_ns"`
	P99  time.Duration `json:"p99_ns"`
	Max  time.Duration `json:"max_ns"`
	Mean time.Duration `json:"mean_ns"`
}

// Summary returns the histogram's percentiles.
func (h *Histogram) Summary() Summary {
	return Summary{P50: h.Quantile(0.5), P95: h.Quantile(0.95), P99: h.Quantile(0.99),
		Max: h.Quantile(1), Mean: h.Mean()}
}

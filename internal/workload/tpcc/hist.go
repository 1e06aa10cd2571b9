package tpcc

import (
	"math/bits"
	"time"
)

// histogram counts latencies in microseconds in log-linear buckets: exact
// below 128 µs, then 64 buckets per power of two, so a reported
// percentile is within 1 % of the true value whatever the run's length.
type histogram struct {
	counts []uint64
	n      uint64
	max    uint64
}

const (
	histExact = 128 // values below are their own bucket
	histSub   = 64  // buckets per power of two above
)

func histBucket(v uint64) int {
	if v < histExact {
		return int(v)
	}
	shift := bits.Len64(v) - 7 // >= 1: keep the top 7 bits
	return histExact + (shift-1)*histSub + int(v>>shift) - histSub
}

// histMid returns the middle of bucket b, the value reported for it.
func histMid(b int) uint64 {
	if b < histExact {
		return uint64(b)
	}
	k := b - histExact
	shift := k/histSub + 1
	lo := uint64(k%histSub+histSub) << shift
	return lo + (uint64(1)<<shift)/2
}

func (h *histogram) add(d time.Duration) {
	v := uint64(max(d.Microseconds(), 0))
	b := histBucket(v)
	if b >= len(h.counts) {
		h.counts = append(h.counts, make([]uint64, b+1-len(h.counts))...)
	}
	h.counts[b]++
	h.n++
	h.max = max(h.max, v)
}

func (h *histogram) merge(o *histogram) {
	if len(o.counts) > len(h.counts) {
		h.counts = append(h.counts, make([]uint64, len(o.counts)-len(h.counts))...)
	}
	for b, c := range o.counts {
		h.counts[b] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// quantile returns the latency below which a fraction q (0..1) of the
// values lie; 0 when empty.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.5)
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for b, c := range h.counts {
		seen += c
		if seen >= rank {
			return time.Duration(min(histMid(b), h.max)) * time.Microsecond
		}
	}
	return time.Duration(h.max) * time.Microsecond
}

// Latency summarises the latencies of a kind of transaction, each from
// the first BEGIN to the final COMMIT or ROLLBACK, retries included.
type Latency struct {
	P50, P95, P99, Max time.Duration
}

func (h *histogram) summary() Latency {
	return Latency{
		P50: h.quantile(0.50),
		P95: h.quantile(0.95),
		P99: h.quantile(0.99),
		Max: time.Duration(h.max) * time.Microsecond,
	}
}

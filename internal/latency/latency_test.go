package latency

import (
	"math"
	"testing"
	"time"
)

func TestHistogram(t *testing.T) {
	var h Histogram
	if h.Quantile(0.5) != 0 || h.Mean() != 0 {
		t.Error("empty histogram reports a value")
	}
	for i := 1; i <= 10000; i++ {
		h.Add(time.Duration(i) * time.Microsecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5000 * time.Microsecond}, {0.95, 9500 * time.Microsecond}, {0.99, 9900 * time.Microsecond}} {
		got := h.Quantile(c.q)
		if math.Abs(float64(got-c.want)) > 0.02*float64(c.want) {
			t.Errorf("q%.2f = %v, want %v within 2%%", c.q, got, c.want)
		}
	}
	if h.Quantile(1) != 10000*time.Microsecond {
		t.Errorf("max %v", h.Quantile(1))
	}
	if m := h.Mean(); m < 5000*time.Microsecond || m > 5001*time.Microsecond {
		t.Errorf("mean %v", m)
	}
	// Small values are exact; a merge counts both.
	var small Histogram
	for range 3 {
		small.Add(7 * time.Microsecond)
	}
	small.Add(-time.Second)
	if small.Quantile(0.9) != 7*time.Microsecond || small.Quantile(0) != 0 {
		t.Errorf("small: %v %v", small.Quantile(0.9), small.Quantile(0))
	}
	h.Merge(&small)
	if h.Count() != 10004 {
		t.Errorf("merged count %d", h.Count())
	}
	// Every bucket's middle maps back to the bucket (up to 2^61 µs).
	for i := range histIndex(1 << 61) {
		if got := histIndex(histValue(i)); got != i {
			t.Fatalf("bucket %d: middle %d maps to %d", i, histValue(i), got)
		}
	}
}

package capacity

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/metrics"
)

// With samples uniform on [1 µs, 1001 µs] the true p99 is 991 µs: about 95%
// of the intervals from independent samples must hold it, and their width
// is what the binomial rank gives (2·1.96·√(n·0.99·0.01) ranks of 1000/n µs).
func TestPercentileCICoversTheTruePercentile(t *testing.T) {
	const n, trials = 2000, 400
	const truth = 991 * time.Microsecond
	rng := rand.New(rand.NewPCG(1, 2))
	covered := 0
	var widths time.Duration
	for range trials {
		h := metrics.NewHistogram()
		for range n {
			_ = h.RecordValue(int64(time.Microsecond) + rng.Int64N(int64(1000*time.Microsecond)))
		}
		iv, ok := PercentileCI(h, 99)
		if !ok || iv.Open {
			t.Fatalf("interval %+v, ok %v", iv, ok)
		}
		if iv.Low <= truth && truth <= iv.High {
			covered++
		}
		widths += iv.Width()
	}
	if share := float64(covered) / trials; share < 0.90 || share > 0.99 {
		t.Errorf("%.1f%% of %d intervals hold the true p99, want ~95%%", 100*share, trials)
	}
	want := 2 * z * math.Sqrt(n*0.99*0.01) * 1000 / n // µs
	if mean := (widths / trials).Seconds() * 1e6; mean < 0.8*want || mean > 1.3*want {
		t.Errorf("mean width %.2f µs, want ~%.2f µs", mean, want)
	}
}

// Too few samples above the percentile to bound it: the interval is open
// and its high end is the largest sample.
func TestPercentileCIOpen(t *testing.T) {
	h := metrics.NewHistogram()
	for i := range 100 {
		_ = h.RecordValue(int64(i+1) * 1000)
	}
	iv, ok := PercentileCI(h, 99.9)
	if !ok || !iv.Open || iv.High != time.Duration(h.Max()) {
		t.Fatalf("%+v", iv)
	}
	if _, ok := PercentileCI(metrics.NewHistogram(), 99); ok {
		t.Fatal("empty histogram has a percentile")
	}
}

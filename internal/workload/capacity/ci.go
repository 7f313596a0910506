package capacity

import (
	"math"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Confidence is the level of every percentile's confidence interval, and z
// its two-sided normal quantile.
const (
	Confidence = 0.95
	z          = 1.959963984540054
)

// Interval is a percentile of a histogram with its confidence interval.
type Interval struct {
	Value, Low, High time.Duration
	// Open says the interval's upper rank lies beyond the last sample: too
	// few samples above the percentile to bound it, so High is the largest.
	Open bool
}

// Width is High − Low.
func (iv Interval) Width() time.Duration { return iv.High - iv.Low }

// PercentileCI is the pct-th percentile of h (values in ns) and its
// Confidence interval by order statistics: of n samples, the rank of the
// q-quantile is Binomial(n, q), which the normal approximation bounds by
// n·q ± z·√(n·q·(1−q)); the interval is the values at those ranks. The
// histogram's bucket width (0.1% at 3 digits) adds to it. false when h is
// empty.
func PercentileCI(h *hdr.Histogram, pct float64) (Interval, bool) {
	n := h.TotalCount()
	if n == 0 || !(pct > 0 && pct < 100) {
		return Interval{}, false
	}
	q := pct / 100
	nf := float64(n)
	half := z * math.Sqrt(nf*q*(1-q))
	lo := max(math.Floor(nf*q-half), 1)
	hi := math.Ceil(nf*q + half)
	atRank := func(r float64) time.Duration { return time.Duration(h.ValueAtQuantile(100 * r / nf)) }
	iv := Interval{Value: time.Duration(h.ValueAtQuantile(pct)), Low: atRank(lo)}
	if hi > nf {
		iv.Open = true
		iv.High = time.Duration(h.Max())
	} else {
		iv.High = atRank(hi)
	}
	// Bucket rounding may put the point a hair outside its own interval.
	iv.Low = min(iv.Low, iv.Value)
	iv.High = max(iv.High, iv.Value)
	return iv, true
}

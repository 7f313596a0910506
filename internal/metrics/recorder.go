// Package metrics records latencies per worker and merges them into the
// figures of one phase.
//
// Units: every histogram here records nanoseconds, with a lowest discernible
// value of 1 ns and a highest trackable value of 60 s: the in-process memory
// store, the floor every other store is compared with, answers in a fraction
// of a µs, which a 1 µs floor (512 ns buckets) showed as 0.51 or 1.02 µs. The phase
// histogram keeps 3 significant digits (DESIGN.md, "Measurement rules"); the
// per-second series uses 2, which is enough for a time series and keeps its
// memory small. Latencies above 60 s are recorded as 60 s and counted
// (Phase.Warnings says so). Figures in a Phase are in microseconds (float).
//
// Concurrency: a Recorder belongs to one goroutine. Recorders that share a
// Collector hand their per-second data to it once per second; that is the only
// lock, never taken per operation.
package metrics

import (
	"math"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/storebench/storebench/internal/errclass"
)

// Histogram geometry, shared by every histogram of this package.
const (
	// LowestNs is the lowest discernible latency, in nanoseconds. It costs
	// ~220 KB per phase histogram instead of ~150 KB at 1 µs.
	LowestNs = 1
	// HighestNs is the highest trackable latency, in nanoseconds (60 s).
	HighestNs = 60_000_000_000
	// Digits is the precision of the phase histogram.
	Digits = 3
	// seriesDigits is the precision of the per-second histograms.
	seriesDigits = 2
	// maxSamples is how many error messages one Recorder keeps.
	maxSamples = 5
)

const nClasses = len(errclass.Classes)

// NewHistogram returns an empty histogram with the phase geometry.
func NewHistogram() *hdr.Histogram { return hdr.New(LowestNs, HighestNs, Digits) }

func newSeriesHistogram() *hdr.Histogram { return hdr.New(LowestNs, HighestNs, seriesDigits) }

// RecorderBytes is the memory of one Recorder's histograms, with or without
// the per-second series: what each worker of a phase costs, for a plan's
// memory estimate.
func RecorderBytes(series bool) int64 {
	phase, perSecond := histogramBytes()
	if series {
		return phase + perSecond
	}
	return phase
}

// histogramBytes measures the two histogram geometries once: each plan's
// estimate asked again, allocating ~100 KiB of histograms per call.
var histogramBytes = sync.OnceValues(func() (phase, perSecond int64) {
	return int64(NewHistogram().ByteSize()), int64(newSeriesHistogram().ByteSize())
})

// Recorder collects the results of one worker. It is not safe for concurrent
// use: one worker goroutine owns it. Record, RecordError and Tick do not
// allocate (RecordError keeps the first few messages, which does).
type Recorder struct {
	hist    *hdr.Histogram
	ops     int64 // successes + errors
	sumNs   int64 // over successes, for an exact mean
	minNs   int64
	maxNs   int64
	errs    [nClasses]int64
	nErrs   int64
	clamped int64 // latencies above HighestNs, recorded as HighestNs
	samples []string

	// Per-second series; col == nil disables it.
	col   *Collector
	id    int
	start time.Time
	next  time.Time // next second boundary: Tick is one comparison until then
	sec   int64     // second of start the interval belongs to
	iv    interval
	done  bool
	// interval is the open-loop schedule's time between this worker's
	// ops; 0 for a closed loop.
	interval time.Duration
	_        [64]byte // written per op: keep other workers' recorders off this cache line
}

// interval is what a worker recorded during one second.
type interval struct {
	h     *hdr.Histogram
	ops   int64 // successes + errors
	errs  int64
	sumNs int64
	maxNs int64
	lagNs int64 // the last Lag sample of the second, or -1: none
}

func (iv *interval) reset() {
	iv.h.Reset()
	iv.ops, iv.errs, iv.sumNs, iv.maxNs, iv.lagNs = 0, 0, 0, 0, -1
}

// NewRecorder returns a Recorder that hands its per-second data to c. With a
// nil c it keeps no series.
func NewRecorder(c *Collector) *Recorder {
	r := &Recorder{
		hist:    NewHistogram(),
		minNs:   math.MaxInt64,
		samples: make([]string, 0, maxSamples),
	}
	if c != nil {
		r.col = c
		r.id = c.register()
		r.iv.h = newSeriesHistogram()
		r.iv.lagNs = -1
	}
	return r
}

// Start sets the start of the measured phase: second 0 of the series begins
// at t0. Call it before the first Tick, from the owning goroutine.
func (r *Recorder) Start(t0 time.Time) {
	r.start = t0
	r.sec = 0
	r.next = t0.Add(time.Second)
}

// Tick tells the recorder the time is now, so that what it records next
// belongs to now's second. The engine passes the timestamp it already has (an
// operation's end), so the series costs no extra clock read.
func (r *Recorder) Tick(now time.Time) {
	if r.col == nil || now.Before(r.next) {
		return
	}
	r.advance(now, true)
}

// Idle promises that nothing will be recorded before until, a time that may
// be in the future: an open-loop worker calls it with the intended start of
// its next operation before it waits, so a finished second is handed off
// while the worker sleeps rather than when it wakes. Unlike Tick, it does not
// tell the collector that time has reached until.
func (r *Recorder) Idle(until time.Time) {
	if r.col == nil || until.Before(r.next) {
		return
	}
	r.advance(until, false)
}

func (r *Recorder) advance(now time.Time, real bool) {
	if r.start.IsZero() {
		r.Start(now) // Start was forgotten: count from the first tick
		return
	}
	sec := int64(now.Sub(r.start) / time.Second)
	if sec > r.sec {
		r.col.handoff(r.id, r.sec, &r.iv, r.backlog(), sec, real)
		r.iv.reset()
		r.sec = sec
	}
	r.next = r.start.Add(time.Duration(r.sec+1) * time.Second)
}

// SetSchedule says the worker runs an open-loop schedule with one op every
// interval: its Lag samples then give the per-second backlog.
func (r *Recorder) SetSchedule(interval time.Duration) { r.interval = interval }

// Lag samples how late the worker started its current op: with the
// schedule's interval, it says how many more ops were due but not yet sent
// (lag / interval). The second's last sample goes into Second.Backlog,
// summed over the workers; the division waits for the hand-off, so per op
// this is one field write.
func (r *Recorder) Lag(lag time.Duration) {
	if r.col != nil {
		r.iv.lagNs = int64(lag)
	}
}

// backlog is the ops due but unsent at the interval's last Lag sample.
func (r *Recorder) backlog() int64 {
	if r.interval <= 0 || r.iv.lagNs <= 0 {
		return 0
	}
	return r.iv.lagNs / int64(r.interval)
}

// Record records a successful operation that took d.
func (r *Recorder) Record(d time.Duration) {
	v := r.clamp(d)
	_ = r.hist.RecordValue(v) // cannot fail: v is in range
	r.ops++
	r.sumNs += v
	r.minNs = min(r.minNs, v)
	r.maxNs = max(r.maxNs, v)
	if r.col != nil {
		_ = r.iv.h.RecordValue(v)
		r.iv.ops++
		r.iv.sumNs += v
		r.iv.maxNs = max(r.iv.maxNs, v)
	}
}

// RecordError counts a failed operation by its errclass.Classify class. Its
// latency d does not go into the histogram: a fast failure is not a fast
// operation.
func (r *Recorder) RecordError(err error, d time.Duration) {
	_ = d
	c := errclass.Classify(err)
	r.errs[c.Index()]++
	r.nErrs++
	r.ops++
	if len(r.samples) < maxSamples {
		r.samples = append(r.samples, string(c)+": "+err.Error())
	}
	if r.col != nil {
		r.iv.ops++
		r.iv.errs++
	}
}

func (r *Recorder) clamp(d time.Duration) int64 {
	v := int64(d)
	if v < 0 {
		return 0
	}
	if v > HighestNs {
		r.clamped++
		return HighestNs
	}
	return v
}

// Ops returns the number of operations recorded, failed ones included.
func (r *Recorder) Ops() int64 { return r.ops }

// Errors returns the number of failed operations recorded.
func (r *Recorder) Errors() int64 { return r.nErrs }

// Done hands the last partial second to the collector and tells it this
// worker will record nothing more, so the other workers' seconds can be
// completed without waiting for it. Call it from the owning goroutine when the
// worker stops; Merge calls it too, and it may be called again.
func (r *Recorder) Done() {
	if r.col == nil || (r.done && r.iv.ops == 0) {
		return
	}
	r.done = true
	r.col.handoff(r.id, r.sec, &r.iv, r.backlog(), doneMark, false)
	r.iv.reset()
}

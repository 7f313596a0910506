package load

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/storebench/storebench/internal/metrics"
)

// MaxRate is the highest open-loop rate, in ops/s across workers: far
// above what the engine can drive (each op costs it ~100 ns of a CPU), so a
// higher rate is a typo.
const MaxRate = 1e8

// maxScheduleNs is how far ahead of a span's start an op can be scheduled:
// the largest time.Duration, as a float (2^63 ns, about 292 years).
const maxScheduleNs = float64(math.MaxInt64)

// CheckRate refuses an open-loop rate (ops/s; 0: closed loop) the engine
// cannot run: one that is not a finite number >= 0, or above MaxRate.
func CheckRate(field string, rate float64) error {
	switch {
	case rate < 0 || math.IsNaN(rate) || math.IsInf(rate, 0):
		return fmt.Errorf("%s %v: want a finite number of ops/s, or 0 for a closed loop", field, rate)
	case rate > MaxRate:
		return fmt.Errorf("%s %v ops/s: at most %g, more than the engine can schedule (it spends ~100 ns of a CPU per op)", field, rate, float64(MaxRate))
	}
	return nil
}

// FormatSeconds writes a time span for a message: "1ms", "2h0m0s", or in
// days or years where a time.Duration would be long or could not hold it.
func FormatSeconds(s float64) string {
	const day, year = 24 * 3600, 365.25 * 24 * 3600
	switch {
	case s >= year:
		return fmt.Sprintf("%.3g years", s/year)
	case s >= day:
		return fmt.Sprintf("%.3g days", s/day)
	case s >= 1:
		return time.Duration(s * 1e9).Round(time.Millisecond).String()
	}
	return time.Duration(s * 1e9).String()
}

// workerOverhead is what a worker costs the engine besides its recorders:
// a goroutine's stack, its timer and its runner.
const workerOverhead = 16 << 10

// WorkerBytes estimates the engine's memory per worker of a phase with
// kinds Config.Kinds: its recorder's histograms, one more recorder per
// kind, and its goroutine.
func WorkerBytes(kinds int) int64 {
	return metrics.RecorderBytes(true) + int64(kinds)*metrics.RecorderBytes(false) + workerOverhead
}

// Config says how hard and how long to drive the workers of one phase.
type Config struct {
	Workers   int           // goroutines, one Worker (connection) each
	Ops       int64         // total measured calls of Do across workers (ops when OpsPerCall is 1); 0 = run for Duration
	Duration  time.Duration // measured duration; used when Ops == 0
	Warmup    time.Duration // time-based warm-up before measurement (duration mode)
	WarmupOps int64         // op-based warm-up: the first WarmupOps ops run but are not recorded (ops mode)
	Rate      float64       // open loop: total target ops/s across workers; 0 = closed loop
	Name      string        // phase name for the result
	// OpsPerCall is how many operations one Do carries (a pipeline or
	// multi-get); the phase counts operations, and its latency is per call.
	OpsPerCall int
	// OnSecond, if set, receives each completed second of the series, in
	// order, from a goroutine of the collector, never from a worker.
	OnSecond func(s metrics.Second)
	// Kinds names the kinds of operation of a KindedWorker ("get", "set"),
	// indexed by its Kind; the phase then has figures per kind (ByOp).
	// Workers that are not KindedWorkers ignore it.
	Kinds []string
	// ClientIO is copied to the phase (metrics.Phase.ClientIO).
	ClientIO string
	// Paced: the workers are PacedWorkers, whose ops carry their own
	// intended starts (a replayed trace); the phase runs until they have
	// no more, so Ops, Duration, Rate and the warm-ups stay unset.
	Paced bool
	// NoStore is copied to the phase (metrics.Phase.NoStore).
	NoStore bool
	// MultiCall is copied to the phase (metrics.Phase.MultiCall).
	MultiCall bool
	// Probe, if set, is told when the measured part begins and ends, so it
	// can sample what the engine cannot see, such as a server's CPU and I/O.
	Probe Probe
}

// Probe observes one phase from outside the client: Begin is called once the
// warm-up is over, right before measured ops start; End after the last one,
// with the merged phase to annotate.
type Probe interface {
	Begin()
	End(p *metrics.Phase)
}

// Validate reports every problem with c at once.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("load: "+format, a...)) }
	if c.Workers < 1 {
		bad("workers must be at least 1, got %d", c.Workers)
	}
	notNegative(bad, "ops per call", c.OpsPerCall)
	notNegative(bad, "ops", c.Ops)
	notNegative(bad, "duration", c.Duration)
	notNegative(bad, "warm-up", c.Warmup)
	notNegative(bad, "warm-up ops", c.WarmupOps)
	if err := CheckRate("rate", c.Rate); err != nil {
		bad("%v", err)
	} else if c.Rate > 0 && c.Ops > 0 && float64(c.Ops+max(c.WarmupOps, 0))/c.Rate*1e9 >= maxScheduleNs {
		bad("rate %v ops/s: the engine cannot schedule %d ops that far ahead (one op every %s; a schedule ends within %s)",
			c.Rate, c.Ops+max(c.WarmupOps, 0), FormatSeconds(1/c.Rate), FormatSeconds(maxScheduleNs/1e9))
	}
	if c.Paced {
		if c.Ops > 0 || c.Duration > 0 || c.Rate > 0 || c.Warmup > 0 || c.WarmupOps > 0 {
			bad("a paced phase takes its ops and their starts from its workers: no ops, duration, rate or warm-up")
		}
	}
	switch {
	case c.Paced:
	case c.Ops > 0 && c.Duration > 0:
		bad("give either ops (%d) or duration (%v), not both", c.Ops, c.Duration)
	case c.Ops == 0 && c.Duration == 0:
		bad("give either ops or duration")
	}
	// A timed warm-up would consume an unknown number of seqs in ops mode,
	// and an op-count warm-up has no meaning for a timed phase.
	if c.Warmup > 0 && c.Ops > 0 {
		bad("a timed warm-up (%v) needs duration mode; with ops use warm-up ops", c.Warmup)
	}
	if c.WarmupOps > 0 && c.Duration > 0 {
		bad("warm-up ops (%d) need ops mode; with a duration use a timed warm-up", c.WarmupOps)
	}
	for i, k := range c.Kinds {
		if k == "" || slices.Contains(c.Kinds[:i], k) {
			bad("kinds must be named and distinct, got %q", c.Kinds)
			break
		}
	}
	if c.Ops > 0 && c.WarmupOps > math.MaxInt64-c.Ops {
		bad("ops + warm-up ops overflow")
	}
	return errors.Join(errs...)
}

// notNegative reports a count or a duration of c below zero to bad.
func notNegative[T int | int64 | time.Duration](bad func(format string, a ...any), what string, v T) {
	if v < 0 {
		bad("%s must not be negative, got %v", what, v)
	}
}

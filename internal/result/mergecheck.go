package result

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/storebench/storebench/internal/metrics"
)

// maxPhaseSeconds bounds a phase's duration and its series' seconds in a
// shard: far beyond any run, and small enough that a start offset plus a
// second index (two of them) stays within time.Duration.
const maxPhaseSeconds = 100 * 365 * 24 * 3600

// checkFigures refuses a shard whose figures no run writes, before merge
// adds them up: counts must be non-negative and at most 1/n of their
// type's range (so the n shards' sum cannot overflow), durations and
// latencies within what a run records, and each histogram of storebench's
// geometry (metrics.NewHistogram) holding exactly the successful calls its
// ops stand for, as metrics.Merge writes them: ops = (histogram's count +
// errors) × ops per call.
func checkFigures(r *Result, n int) error {
	for _, c := range r.Cells {
		for _, p := range c.Phases {
			if err := checkPhase(&p, n); err != nil {
				return fmt.Errorf("cell %s phase %s: %v", c.Label(), p.Name, err)
			}
		}
	}
	return nil
}

func checkPhase(p *metrics.Phase, n int) error {
	maxCount := int64(math.MaxInt64 / n)
	count := func(field string, v int64) error {
		if v < 0 {
			return fmt.Errorf("%s %d is negative", field, v)
		}
		if v > maxCount {
			return fmt.Errorf("%s %d is more than %d: the %d shards' sum would overflow", field, v, maxCount, n)
		}
		return nil
	}
	seconds := func(field string, v float64) error {
		if v < 0 || v > maxPhaseSeconds {
			return fmt.Errorf("%s %g is out of range (0 to %d s)", field, v, maxPhaseSeconds)
		}
		return nil
	}
	checks := []error{
		count("workers", int64(p.Workers)),
		count("ops", p.Ops),
		count("ops_per_call", int64(p.OpsPerCall)),
		count("warmup.ops", p.Warmup.Ops),
		seconds("duration_s", p.DurationS),
		seconds("warmup.duration_s", p.Warmup.DurationS),
		seconds("client_cpu_s", p.ClientCPUS),
	}
	if o := p.OpenLoop; o != nil {
		checks = append(checks, count("open_loop.late_ops", o.LateOps), count("open_loop.client_late_ops", o.ClientLateOps),
			count("open_loop.unsent_ops", o.UnsentOps), nonNegative("open_loop.target_ops_s", o.TargetOpsS), seconds("open_loop.wait_spin_s", o.WaitSpinS))
	}
	for i, s := range p.Series {
		field := fmt.Sprintf("series second %d", s.T)
		checks = append(checks, count(field+" ops", s.Ops), count(field+" errors", s.Errors), count(field+" backlog", s.Backlog))
		// Each second once, in order: merge adds one second of each shard
		// into a merged second, which the bound on counts allows for.
		if s.T < 0 || s.T > maxPhaseSeconds || i > 0 && s.T <= p.Series[i-1].T {
			checks = append(checks, fmt.Errorf("%s is out of order or range (0 to %d, each once)", field, maxPhaseSeconds))
		}
	}
	for _, c := range []struct {
		name string
		cost *metrics.ServerCost
	}{{"server", p.Server}, {"companion_server", p.Companion}} {
		if c.cost != nil {
			checks = append(checks, checkCost(c.name, c.cost, n))
		}
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	if err := checkOps("", p.Ops, p.Errors, p.OpsPerCall, p.Histogram, p.LatencyUs, count); err != nil {
		return err
	}
	for kind, f := range p.ByOp {
		if err := checkOps("by_op "+kind+" ", f.Ops, f.Errors, p.OpsPerCall, f.Histogram, f.LatencyUs, count); err != nil {
			return err
		}
	}
	return nil
}

// checkOps checks ops, errors and the histogram of a phase or of one kind
// of its ops: every call is a success in the histogram or an error, and
// ops counts each call's ops.
func checkOps(prefix string, ops int64, errs map[string]int64, opsPerCall int, hist string, lat metrics.Latency, count func(string, int64) error) error {
	if err := count(prefix+"ops", ops); err != nil {
		return err
	}
	perCall := int64(max(opsPerCall, 1))
	if ops%perCall != 0 {
		return fmt.Errorf("%sops %d is not a multiple of ops_per_call %d", prefix, ops, perCall)
	}
	calls := ops / perCall
	successes := calls
	for _, class := range slices.Sorted(maps.Keys(errs)) {
		e := errs[class]
		if err := count(prefix+"errors."+class, e); err != nil {
			return err
		}
		if e > successes {
			return fmt.Errorf("%serrors.%s %d: more errors than the %d calls (ops %d / ops_per_call %d)", prefix, class, e, calls, ops, perCall)
		}
		successes -= e
	}
	if hist == "" {
		if successes != 0 {
			return fmt.Errorf("%shistogram is empty, but ops %d less errors %d are %d successful calls", prefix, ops, calls-successes, successes)
		}
		return nil
	}
	h, err := metrics.DecodeHistogram(hist)
	if err != nil {
		return fmt.Errorf("%shistogram: %v", prefix, err)
	}
	if h.LowestTrackableValue() != metrics.LowestNs || h.HighestTrackableValue() != metrics.HighestNs || h.SignificantFigures() != metrics.Digits {
		return fmt.Errorf("%shistogram tracks %d to %d ns at %d significant digits, not storebench's %d to %d ns at %d",
			prefix, h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures(), metrics.LowestNs, int64(metrics.HighestNs), metrics.Digits)
	}
	if got := h.TotalCount(); got != successes {
		return fmt.Errorf("%shistogram holds %d calls, but ops %d less errors %d are %d successful calls", prefix, got, ops, calls-successes, successes)
	}
	if successes > 0 {
		const maxUs = metrics.HighestNs / 1e3
		for _, v := range []struct {
			name string
			us   float64
		}{{"min", lat.Min}, {"max", lat.Max}, {"mean", lat.Mean}} {
			if v.us < 0 || v.us > maxUs {
				return fmt.Errorf("%slatency_us.%s %g is out of range (0 to %g µs)", prefix, v.name, v.us, float64(maxUs))
			}
		}
	}
	return nil
}

func nonNegative(field string, v float64) error {
	if v < 0 {
		return fmt.Errorf("%s %g is negative", field, v)
	}
	return nil
}

// checkCost checks a managed server's costs, which merge sums.
func checkCost(name string, c *metrics.ServerCost, n int) error {
	maxBytes := uint64(math.MaxUint64 / uint64(n))
	for _, v := range []struct {
		field string
		bytes uint64
	}{{"rss_bytes", c.RSSBytes}, {"peak_rss_bytes", c.PeakRSSBytes}, {"write_bytes", c.WriteBytes}, {"read_bytes", c.ReadBytes}, {"device_write_bytes", c.DeviceWriteBytes}} {
		if v.bytes > maxBytes {
			return fmt.Errorf("%s.%s %d is more than %d: the %d shards' sum would overflow", name, v.field, v.bytes, maxBytes, n)
		}
	}
	if c.Processes < 0 || c.Processes > math.MaxInt32 {
		return fmt.Errorf("%s.processes %d is out of range", name, c.Processes)
	}
	return nonNegative(name+".cpu_s", c.CPUS)
}

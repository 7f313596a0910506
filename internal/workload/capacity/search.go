package capacity

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/storebench/storebench/internal/metrics"
	schema "github.com/storebench/storebench/internal/result/capacity"
)

// Confirmation: a confirmation that fails steps the rate down and confirms
// again, by confirmStepDown the first time and twice as far each time after
// (5%, 10%, 20%, 40%, ...), at most confirmTries times in all. The last
// try the steps allow goes down to the highest rate below that passed a
// step of the search clearly (clearPass), else to the highest that passed,
// if one did: a quick capacity run of Redis at
// p99 ≤ 1 ms passed 2,000 to 32,000 ops/s, missed its confirmations at
// 32,000, 30,400 and 27,360 (its p99 sat on the bound) and so reported
// none, as if 2,000 had missed.
const (
	confirmStepDown = 0.05
	confirmTries    = 5
	// confirmReserve steps of MaxSteps (at most a third of them) are kept
	// for confirming once a rate has passed: a quick run (10 steps) spent
	// 6 on the ramp and 4 on bisection and so confirmed nothing for 11 of
	// 14 store/SLO pairs, where a confirmation at the highest passing rate
	// then stepping down would have reported one.
	confirmReserve = 3
)

type runner struct {
	ctx    context.Context
	d      Drive
	p      Params
	sum    *schema.Summary
	phases []metrics.Phase
}

// measure runs one step at rate for the search of SLO slo: a first phase of
// MinStep, then extensions at the same rate until the step's judgement is
// done or MaxStep is spent. It appends the step and returns its index.
func (r *runner) measure(slo int, stage string, rate float64) (int, error) {
	idx := len(r.sum.Steps)
	m := newMeasured(rate)
	ru := rules{connections: r.p.Connections, slo: r.p.SLOs[slo], ciShare: r.p.CIShare, errorBudget: r.p.ErrorBudget, rtt: r.p.RTT}
	next := r.p.MinStep
	spent := time.Duration(0)
	for part := 1; ; part++ {
		name := fmt.Sprintf("slo%d step%d %s %s ops/s", slo+1, idx+1, stage, rateText(rate))
		if part > 1 {
			name += fmt.Sprintf(" +%d", part-1)
		}
		ph, err := r.d.Step(r.ctx, StepRequest{Name: name, Rate: rate, Duration: next})
		ph.Name = name
		r.phases = append(r.phases, ph)
		r.sum.MeasuredS += ph.DurationS
		if err != nil {
			return idx, fmt.Errorf("capacity: %s: %w", name, err)
		}
		if err := m.add(ph); err != nil {
			return idx, err
		}
		spent += next
		st, done := m.judge(ru)
		st.SLO, st.Stage = slo, stage
		left := r.p.MaxStep - spent
		if done || left < MinStep {
			r.sum.Steps = append(r.sum.Steps, st)
			return idx, nil
		}
		// Width shrinks as 1/√n: ask for the samples the widest interval
		// needs, 10% more for luck, within what the step has left.
		more := time.Duration(float64(spent) * (widest(st, r.p.CIShare)*1.1 - 1))
		next = min(max(more, MinStep), left)
	}
}

// search finds the capacity at SLO slo.
func (r *runner) search(slo int) (schema.Capacity, error) {
	p := r.p
	c := schema.Capacity{SLO: slo, Confirm: -1}
	first := len(r.sum.Steps)
	steps := 0
	step := func(stage string, rate float64) (schema.Step, error) {
		steps++
		i, err := r.measure(slo, stage, rate)
		if err != nil {
			return schema.Step{}, err
		}
		r.placementBound(first, i)
		return r.sum.Steps[i], nil
	}
	var lo, hi float64 // highest passing and lowest failing rate so far
	var bound *schema.Step
	topped := false
	// Once a rate has passed, the ramp and the bisection stop at budget and
	// leave the rest to the confirmation.
	budget := p.MaxSteps - min(confirmReserve, p.MaxSteps/3)
	searching := func() bool { return steps < p.MaxSteps && (lo == 0 || steps < budget) }
	// Ramp: up by Growth while steps pass; down by it while they miss and
	// nothing has passed yet.
	for rate := p.StartRate; searching(); {
		st, err := step(schema.StageRamp, rate)
		if err != nil {
			return c, err
		}
		if st.Passed {
			lo = rate
			if hi > 0 {
				break
			}
			if rate >= p.MaxRate {
				topped = true
				break
			}
			rate = min(rate*p.Growth, p.MaxRate)
			continue
		}
		hi, bound = rate, &st
		if lo > 0 || rate/p.Growth < p.MinRate {
			break
		}
		rate /= p.Growth
	}
	// Bisection between the last good and the first bad rate.
	for lo > 0 && hi > 0 && (hi-lo)/lo > p.Precision && searching() {
		mid := (lo + hi) / 2
		st, err := step(schema.StageBisect, mid)
		if err != nil {
			return c, err
		}
		if st.Passed {
			lo = mid
		} else {
			hi, bound = mid, &st
		}
	}
	// Confirmation: a fresh step at the rate found; stepping down on a miss.
	passed := lo > 0
	highestPassed := lo
	down := confirmStepDown
	for try := 0; lo >= p.MinRate && try < confirmTries && steps < p.MaxSteps; try++ {
		if try > 0 && (try == confirmTries-1 || steps == p.MaxSteps-1) {
			lo = r.highestPassedBelow(first, lo)
		}
		st, err := step(schema.StageConfirm, lo)
		if err != nil {
			return c, err
		}
		if st.Passed {
			c.Found, c.OpsS, c.Confirm = true, lo, len(r.sum.Steps)-1
			break
		}
		bound = &st
		lo *= 1 - down
		down = min(2*down, 0.5)
	}
	c.LowestTriedOpsS = math.Inf(1)
	for _, st := range r.sum.Steps[first:] {
		c.LowestTriedOpsS = min(c.LowestTriedOpsS, st.OfferedOpsS)
	}
	if math.IsInf(c.LowestTriedOpsS, 1) {
		c.LowestTriedOpsS = 0
	}
	if !c.Found {
		c.Reason = fmt.Sprintf("no rate meets the SLO: the lowest rate tried, %s ops/s", rateText(c.LowestTriedOpsS))
		if lowest := r.lowestStep(first); lowest != nil {
			c.Reason += ", " + lowest.Verdict
			c.Limiter = lowest.Limiter
		}
		switch {
		case passed && bound != nil:
			c.Reason = "no rate confirmed: steps passed, but their confirmations missed, the last: " + bound.Verdict
			c.Limiter = bound.Limiter
		case passed:
			// The steps ran out before any confirmation (or any miss).
			c.Reason = "no rate confirmed: steps passed, but the search ran out of steps before confirming one"
		}
		if steps >= p.MaxSteps {
			c.Reason += fmt.Sprintf(" (stopped after %d steps)", steps)
		}
		if passed {
			c.PassedOnceOpsS = highestPassed
		}
		return c, nil
	}
	conf := r.sum.Steps[c.Confirm]
	c.P50Us, c.P99Us = conf.P50Us, conf.P99Us
	c.ClientCPUUs, c.ServerCPUUs = conf.ClientCPUUs, conf.ServerCPUUs
	switch {
	case topped:
		c.AtLeast = true
		c.Reason = fmt.Sprintf("the search's highest rate, %s ops/s, passed", rateText(p.MaxRate))
	case bound != nil:
		c.Reason = fmt.Sprintf("%s ops/s missed: %s", rateText(bound.OfferedOpsS), bound.Verdict)
		c.AtLeast = bound.ClientLimited
		c.Limiter = bound.Limiter
	default:
		c.Reason = fmt.Sprintf("stopped after %d steps", steps)
		c.AtLeast = true
	}
	c.AtLeast = c.AtLeast || conf.ClientLimited
	if conf.ClientLimited {
		c.Limiter = schema.LimiterClientCPU
	}
	if c.AtLeast {
		c.Reason += "; the client, not the store, may have set this bound: capacity is at least this rate"
	}
	if p.Need > 0 {
		c.Cost = cost(p.Need, c.OpsS, conf)
	}
	return c, nil
}

// placementBound names the platform's placement as the limiter of step i
// when it missed while the kernel moved client and server between CPUs,
// it was named the store's or the client's scheduling, and an earlier step of the search
// that began at step first carried as high a rate with each on its own
// CPU: the same load met the SLO when the kernel left the two alone. On a
// 2-vCPU VM three repeats of one search ended at 60,800, 32,000 and 48,000
// ops/s, each bounded by a step where the two were swapped between CPUs.
func (r *runner) placementBound(first, i int) {
	st := &r.sum.Steps[i]
	// Stalls, other load and the network path are causes of their own
	// (the kernel moves threads when other load takes their CPU); the
	// placement replaces only the limiters named for want of one.
	if st.Passed || st.ClientLimited || !st.Moved() || (st.Limiter != schema.LimiterStore && st.Limiter != schema.LimiterClientScheduling) {
		return
	}
	for k := first; k < i; k++ {
		o := r.sum.Steps[k]
		if !o.Passed || !o.StayedPut() || o.OfferedOpsS < st.OfferedOpsS {
			continue
		}
		if st.Limiter != "" && st.Limiter != schema.LimiterClientCPU {
			st.Verdict = strings.TrimSuffix(st.Verdict, "; "+st.Limiter+": "+st.LimiterEvidence)
		}
		st.Limiter = schema.LimiterPlacement
		st.LimiterEvidence = fmt.Sprintf("%s, while at %s ops/s step %d met the SLO with each on one CPU (%.0f%% and %.0f%%): the platform's placement, not the store, set this bound",
			st.MovedText(), rateText(o.OfferedOpsS), k+1, 100*o.ClientMainCPU, 100*o.ServerMainCPU)
		st.Verdict += "; " + st.Limiter + ": " + st.LimiterEvidence
		return
	}
}

// highestPassedBelow is the highest rate at or below rate that a ramp or
// bisection step of the search that began at step first passed clearly,
// else the highest that passed at all; rate itself when none did.
func (r *runner) highestPassedBelow(first int, rate float64) float64 {
	best, clear := 0.0, 0.0
	for _, st := range r.sum.Steps[first:] {
		if st.Passed && st.Stage != schema.StageConfirm && st.OfferedOpsS <= rate {
			best = max(best, st.OfferedOpsS)
			if clearPass(st) {
				clear = max(clear, st.OfferedOpsS)
			}
		}
	}
	switch {
	case clear > 0:
		return clear
	case best > 0:
		return best
	}
	return rate
}

// clearShare is how far within its bound every objective's percentile of
// a passed step must be for the pass to count as clear: the last
// confirmation the steps allow goes to the highest clear pass. On a full
// 2-vCPU machine a quick Redis search at p99 ≤ 10 ms passed 56,000 ops/s
// at p99 7.6 ms, missed its confirmations at 68,000, 64,600 and then
// 56,000 (p99 15.3 ms) and reported none, while 32,000 had passed at
// p99 0.4 ms.
const clearShare = 0.5

// clearPass says every objective's percentile of the step was within
// clearShare of its bound.
func clearPass(st schema.Step) bool {
	for _, pc := range st.Percentiles {
		if pc.ValueUs > clearShare*pc.ObjectiveUs {
			return false
		}
	}
	return len(st.Percentiles) > 0
}

// lowestStep is the step at the lowest rate of the search that began at
// step first.
func (r *runner) lowestStep(first int) *schema.Step {
	var low *schema.Step
	for i := first; i < len(r.sum.Steps); i++ {
		if low == nil || r.sum.Steps[i].OfferedOpsS < low.OfferedOpsS {
			low = &r.sum.Steps[i]
		}
	}
	return low
}

// cost extrapolates the cores a rate of need ops/s takes from the CPU per op
// measured at capacity.
func cost(need, capacity float64, at schema.Step) *schema.Cost {
	c := &schema.Cost{NeedOpsS: need, BeyondCapacity: need > capacity}
	if at.ServerCPUUs >= 0 {
		c.CPUUsPerOp = at.ServerCPUUs + at.ClientCPUUs
		c.Basis = "server + client CPU per op at capacity, both on this machine (managed server; the client's less its engine's spin-wait before each op's start, at most half of it)"
	} else {
		c.CPUUsPerOp = at.ClientCPUUs
		c.Basis = "client process CPU per op at capacity only, less its engine's spin-wait (at most half of it): an in-process store's work is in it, an external server's is not"
	}
	c.CoresNeededExtrapolated = c.CPUUsPerOp * need / 1e6
	return c
}

// rateText writes a rate for a phase name or message: whole ops/s, or
// three significant digits below 10.
func rateText(r float64) string {
	if r >= 10 {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.3g", r)
}

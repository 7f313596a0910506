package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/result/capacity"
)

// unstableShare is how far a capacity's repeats may spread, (highest −
// lowest) ÷ median, before they are called unstable: beyond it the
// machine, not the store, moved the answer as often as not.
const unstableShare = 0.2

// capacitySpread is one cell's capacity at one SLO over the run's repeats.
type capacitySpread struct {
	cell, slo         string
	repeats           []float64 // each repeat's capacity, 0 for none
	median, low, high float64
	spread            float64 // (high − low) ÷ median; +Inf for a median of none
	confidence        float64 // that [low, high] holds the true median: 1 − 2·0.5^n
	bounds            []bounding
}

// bounding is what one repeat's capacity was bounded by: the capacity's
// limiter, and the platform's figures at the step that bounded it (the
// missed step at the lowest rate above the capacity).
type bounding struct {
	repeat  int
	limiter string
	atLeast bool
	step    *capacity.Step // nil when no step missed above the capacity
}

// stallBoundShare is how large the platform's stalls at a bounding step
// must be, as a share of the objective's bound, to count as having limited
// it: the capacity search's own rule (stallShare) for naming them.
const stallBoundShare = 0.5

// otherLoadBound is how many CPUs' worth of other processes at a bounding
// step count as the machine limiting it: the search's own threshold.
const otherLoadBound = 0.5

// platformCauses says, with figures, what the platform did at the steps
// that bounded the repeats: the kernel moving client and server between
// CPUs, stalls half as late as the objective or later, other load; empty
// when none of these was measured at any.
func (s capacitySpread) platformCauses() []string {
	var moved, movedFig, stalled, loaded []string
	for _, b := range s.bounds {
		st := b.step
		if st == nil {
			continue
		}
		rep := "#" + strconv.Itoa(b.repeat)
		if st.Moved() {
			moved = append(moved, rep)
			movedFig = append(movedFig, fmt.Sprintf("%.0f%%/%.0f%%", 100*st.ClientMainCPU, 100*st.ServerMainCPU))
		}
		for _, pc := range st.Percentiles {
			if st.HiccupP99Us > 0 && st.HiccupP99Us >= stallBoundShare*pc.ObjectiveUs {
				stalled = append(stalled, fmt.Sprintf("%s %s beside p%s ≤ %s", rep, stallText(st.HiccupP99Us), strconv.FormatFloat(pc.Percentile, 'f', -1, 64), stallText(pc.ObjectiveUs)))
				break
			}
		}
		if st.OtherLoadCPUs >= otherLoadBound {
			loaded = append(loaded, fmt.Sprintf("%s %.2f CPUs", rep, st.OtherLoadCPUs))
		}
	}
	var out []string
	if len(moved) > 0 {
		out = append(out, fmt.Sprintf("the kernel moved client and server between CPUs at the steps that bounded repeats %s (client/server on the CPU each used most %s of its time; %.0f%% or more when it leaves them alone)",
			strings.Join(moved, ", "), strings.Join(movedFig, ", "), 100*capacity.MovedBelow))
	}
	if len(stalled) > 0 {
		out = append(out, "platform stalls p99 at the bounding steps of "+strings.Join(stalled, ", "))
	}
	if len(loaded) > 0 {
		out = append(out, "other processes kept CPUs busy at the bounding steps of "+strings.Join(loaded, ", "))
	}
	return out
}

// boundingFigure is a platform figure over the repeats' bounding steps:
// the highest of f, or the lowest with low; ok is false when no step had
// one above zero.
func (s capacitySpread) boundingFigure(f func(*capacity.Step) float64, low bool) (v float64, ok bool) {
	for _, b := range s.bounds {
		if b.step == nil || f(b.step) <= 0 {
			continue
		}
		x := f(b.step)
		switch {
		case !ok:
			v = x
		case low:
			v = min(v, x)
		default:
			v = max(v, x)
		}
		ok = true
	}
	return v, ok
}

func stallText(us float64) string {
	switch {
	case us >= 1000:
		return fixed(us/1000, 1) + " ms"
	case us > 0:
		return whole(us) + " µs"
	}
	return "—"
}

func (s capacitySpread) unstable() bool { return s.spread > unstableShare }

// capacitySpreads gathers, for every cell id that ran more than once
// (--repeat), each SLO's capacities and the platform stalls beside the step
// that bounded each.
func capacitySpreads(cells []*result.Cell) []capacitySpread {
	byID := map[string][]*result.Cell{}
	var order []string
	for _, c := range cells {
		if c.Repeat == 0 {
			continue
		}
		if byID[c.ID] == nil {
			order = append(order, c.ID)
		}
		byID[c.ID] = append(byID[c.ID], c)
	}
	var out []capacitySpread
	for _, id := range order {
		reps := byID[id]
		if len(reps) < 2 {
			continue
		}
		first := capacityOf(reps[0])
		for slo := range first.SLOs {
			sp := capacitySpread{cell: id, slo: sloText(first, slo)}
			for _, c := range reps {
				s := capacityOf(c)
				cp, ok := capacityAt(s, slo)
				if !ok {
					continue
				}
				sp.repeats = append(sp.repeats, cp.Value())
				sp.bounds = append(sp.bounds, bounding{repeat: c.Repeat, limiter: cmp.Or(cp.Limiter, "—"), atLeast: cp.AtLeast, step: boundingStep(s, slo, cp)})
			}
			if len(sp.repeats) < 2 {
				continue
			}
			sorted := slices.Sorted(slices.Values(sp.repeats))
			n := len(sorted)
			sp.median = (sorted[(n-1)/2] + sorted[n/2]) / 2
			sp.low, sp.high = sorted[0], sorted[n-1]
			sp.spread = math.Inf(1)
			if sp.median > 0 {
				sp.spread = (sp.high - sp.low) / sp.median
			}
			if sp.high == 0 {
				sp.spread = 0 // none every time: the same answer
			}
			sp.confidence = 1 - 2*math.Pow(0.5, float64(n))
			out = append(out, sp)
		}
	}
	return out
}

func capacityAt(s *capacity.Summary, slo int) (capacity.Capacity, bool) {
	for _, cp := range s.Capacity {
		if cp.SLO == slo {
			return cp, true
		}
	}
	return capacity.Capacity{}, false
}

// boundingStep is the step that bounded a capacity: of the SLO's steps
// that missed, the one at the lowest rate above the capacity (any missed
// step when none was found); nil when none missed.
func boundingStep(s *capacity.Summary, slo int, cp capacity.Capacity) *capacity.Step {
	var bound *capacity.Step
	for i := range s.Steps {
		st := &s.Steps[i]
		if st.SLO != slo || st.Passed || (cp.Found && st.OfferedOpsS <= cp.OpsS) {
			continue
		}
		if bound == nil || st.OfferedOpsS < bound.OfferedOpsS {
			bound = st
		}
	}
	return bound
}

// capacitySpreadTable is each repeated capacity's spread; nil when no cell
// ran more than once.
func capacitySpreadTable(cells []*result.Cell) *table {
	t := newTable("capacity-repeats", "capacity over the repeats (--repeat): its median, range and spread, and whether they agree", true,
		column{head: "cell", left: true}, column{head: "SLO", left: true}, column{head: "repeats", m: "repeats"},
		column{head: "capacities ops/s", left: true}, column{head: "median ops/s", m: "median_ops_s"},
		column{head: "low ops/s", m: "low_ops_s"}, column{head: "high ops/s", m: "high_ops_s"},
		column{head: "spread", m: "spread"}, column{head: "range holds the median", m: "confidence"},
		column{head: "verdict", left: true})
	for _, sp := range capacitySpreads(cells) {
		var caps []string
		for _, v := range sp.repeats {
			c := "none"
			if v > 0 {
				c = whole(v)
			}
			caps = append(caps, c)
		}
		spread := textCell("—")
		if !math.IsInf(sp.spread, 0) {
			spread = figureCell(fixed(100*sp.spread, 1)+"%", sp.spread)
		}
		t.add(textCell(sp.cell), textCell(sp.slo), countCell(int64(len(sp.repeats))), textCell(strings.Join(caps, ", ")),
			figureCell(whole(sp.median), sp.median), figureCell(whole(sp.low), sp.low), figureCell(whole(sp.high), sp.high),
			spread, figureCell(fixed(100*sp.confidence, 0)+"%", sp.confidence), textCell(sp.verdict()))
	}
	return t.orNil()
}

// verdict says whether the repeats agree, and when they do not, what
// bounded each and whether the platform did: the same code on the same
// machine answered differently, so either a platform figure moved with
// the answer or none did, and the verdict says which, with the figures.
func (sp capacitySpread) verdict() string {
	if !sp.unstable() {
		return fmt.Sprintf("stable: within %s%% of the median", strconv.Itoa(int(unstableShare*100)))
	}
	var limiters, stalls []string
	atLeast := true
	for _, b := range sp.bounds {
		limiters = append(limiters, b.limiter)
		atLeast = atLeast && b.atLeast
		if b.step != nil {
			stalls = append(stalls, stallText(b.step.HiccupP99Us))
		} else {
			stalls = append(stalls, "—")
		}
	}
	bounded := strings.Join(limiters, ", ")
	if len(slices.Compact(slices.Clone(limiters))) == 1 {
		bounded = limiters[0] + " every time"
	}
	v := fmt.Sprintf("unstable: the repeats differ by more than %d%% of the median; bounded by %s", int(unstableShare*100), bounded)
	if atLeast {
		v += fmt.Sprintf(" (each a lower bound: the store carried at least %s ops/s)", whole(sp.high))
	}
	if causes := sp.platformCauses(); len(causes) > 0 {
		v += "; the platform limited them: " + strings.Join(causes, "; ")
	} else {
		v += "; no platform figure explains it (no moved threads, stalls under half the bound, no other load at their bounding steps)"
	}
	return v + "; platform stalls p99 beside their bounding steps " + strings.Join(stalls, ", ")
}

package report

import (
	"cmp"
	"fmt"
	"github.com/storebench/storebench/internal/hiccup"
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
	repeat   int
	capacity float64 // the repeat's capacity, 0 for none
	limiter  string
	atLeast  bool
	step     *capacity.Step // nil when no step missed above the capacity
	// ceiling is the most the client carried in any step of the search
	// that the client limited and that fell short of its offered rate:
	// the client's own ceiling on this machine; 0 when none did.
	ceiling float64
}

// stallBoundShare is how large the platform's stalls at a bounding step
// must be, as a share of the objective's bound, to count as having limited
// it: the capacity search's own rule (stallShare) for naming them.
const stallBoundShare = 0.5

// otherLoadBound is how many CPUs' worth of other processes at a bounding
// step count as the machine limiting it: the search's own threshold.
const otherLoadBound = 0.5

// platformCauses says, with figures, what the platform did at the steps
// that bounded the repeats and the search named as its doing: the kernel
// moving client and server between CPUs (the platform placement limiter:
// a rate the same search carried with each on one CPU), stalls half as
// late as the objective or later, other load; empty when none was. A move
// alone is not a cause: on the quiet 2-vCPU VM steps at 64,000 ops/s
// passed and missed with the two swapped alike.
func (s capacitySpread) platformCauses() []string {
	var moved, movedFig, stalled, loaded, full []string
	for _, b := range s.bounds {
		st := b.step
		if st == nil {
			continue
		}
		rep := "#" + strconv.Itoa(b.repeat)
		if st.Moved() && st.Limiter == capacity.LimiterPlacement {
			moved = append(moved, rep)
			movedFig = append(movedFig, fmt.Sprintf("%.0f%%/%.0f%%", 100*st.ClientMainCPU, 100*st.ServerMainCPU))
		}
		named := false
		for _, pc := range st.Percentiles {
			if st.HiccupP99Us > 0 && st.HiccupP99Us >= stallBoundShare*pc.ObjectiveUs {
				stalled = append(stalled, fmt.Sprintf("%s %s beside %s ≤ %s", rep, stallText(st.HiccupP99Us), pctName(pc.Percentile), stallText(pc.ObjectiveUs)))
				named = true
				break
			}
		}
		if !named && st.Limiter == capacity.LimiterPlatform {
			// The search named one long stall (its max), rare for the p99,
			// or a cluster of short ones.
			if st.HiccupBurstMs*1e3 > st.HiccupMaxUs {
				stalled = append(stalled, fmt.Sprintf("%s %s within %d ms (max %s)", rep, stallText(st.HiccupBurstMs*1e3), hiccup.BurstWindow.Milliseconds(), stallText(st.HiccupMaxUs)))
			} else {
				stalled = append(stalled, fmt.Sprintf("%s one of %s (max)", rep, stallText(st.HiccupMaxUs)))
			}
		}
		if st.OtherLoadCPUs >= otherLoadBound {
			loaded = append(loaded, fmt.Sprintf("%s %.2f CPUs", rep, st.OtherLoadCPUs))
		}
		if st.MachineFull() {
			full = append(full, rep+" "+stepCPUsText(st))
		}
	}
	var out []string
	if sp := s.speedCause(); sp != "" {
		out = append(out, sp)
	}
	if len(moved) > 0 {
		out = append(out, fmt.Sprintf("the kernel moved client and server between CPUs at the steps that bounded repeats %s (client/server on the CPU each used most %s of its time) where a step with each on one CPU carried as much",
			strings.Join(moved, ", "), strings.Join(movedFig, ", ")))
	}
	if len(stalled) > 0 {
		out = append(out, "platform stalls p99 at the bounding steps of "+strings.Join(stalled, ", "))
	}
	if len(loaded) > 0 {
		out = append(out, "other processes kept CPUs busy at the bounding steps of "+strings.Join(loaded, ", "))
	}
	if len(full) > 0 {
		where := "at the bounding steps of "
		if len(full) == len(s.bounds) {
			where = "at every bounding step: "
		}
		out = append(out, fmt.Sprintf("the machine's CPUs were full (%.0f%% or more busy) %s%s; on it client and server cannot both have more, and the same rate passes or misses by chance: the spread is the machine's, not the store's",
			100*capacity.MachineFullShare, where, strings.Join(full, "; ")))
	}
	return out
}

// speedCause says when the CPUs ran at speeds apart by speedDiffers or
// more at the repeats' bounding steps (the hiccup probes' speed loop) and
// the repeat bounded on the slowest CPUs found the lower capacity: the
// same search on a slower machine; "" otherwise.
func (s capacitySpread) speedCause() string {
	var fast, slow *bounding
	for i := range s.bounds {
		b := &s.bounds[i]
		if b.step == nil || !speedKnown(b.step.HiccupSpeedNs) {
			continue
		}
		if fast == nil || b.step.HiccupSpeedNs < fast.step.HiccupSpeedNs {
			fast = b
		}
		if slow == nil || b.step.HiccupSpeedNs > slow.step.HiccupSpeedNs {
			slow = b
		}
	}
	if fast == nil || slow.step.HiccupSpeedNs < speedDiffers*fast.step.HiccupSpeedNs || slow.capacity >= fast.capacity {
		return ""
	}
	var figs []string
	for _, b := range s.bounds {
		if b.step != nil && speedKnown(b.step.HiccupSpeedNs) {
			figs = append(figs, fmt.Sprintf("#%d %.0f ns", b.repeat, b.step.HiccupSpeedNs))
		}
	}
	return fmt.Sprintf("the CPUs ran at other speeds at the bounding steps (the hiccup probes' speed loop %s: #%d's %.2f× slower than #%d's, and it found less)",
		strings.Join(figs, ", "), slow.repeat, slow.step.HiccupSpeedNs/fast.step.HiccupSpeedNs, fast.repeat)
}

// clientCeiling is the most any repeat's client carried in a step it
// limited; 0 when none fell short.
func (s capacitySpread) clientCeiling() float64 {
	var most float64
	for _, b := range s.bounds {
		most = max(most, b.ceiling)
	}
	return most
}

// movedOnly lists the bounding steps where the kernel moved the two sides
// without the search naming it the cause: a figure beside the verdict.
func (s capacitySpread) movedOnly() []string {
	var out []string
	for _, b := range s.bounds {
		if st := b.step; st != nil && st.Moved() && st.Limiter != capacity.LimiterPlacement {
			out = append(out, fmt.Sprintf("#%d %.0f%%/%.0f%%", b.repeat, 100*st.ClientMainCPU, 100*st.ServerMainCPU))
		}
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

// machineBusyText is how busy the run's CPUs were over a step: "1.78 of 2".
func machineBusyText(st *capacity.Step) string {
	return fixed(st.MachineBusyCPUs, 2) + " of " + whole(float64(st.MachineCPUs))
}

// stepCPUsText says how busy the run's CPUs were over a step, and whose.
func stepCPUsText(st *capacity.Step) string {
	return fmt.Sprintf("%s CPUs busy (%s%%: client %s, server %s, rest %s)", machineBusyText(st), fixed(100*st.MachineBusyCPUs/float64(st.MachineCPUs), 0),
		fixed(st.ClientBusyCPUs, 2), fixed(st.ServerBusyCPUs, 2), fixed(max(0, st.MachineBusyCPUs-st.ClientBusyCPUs-st.ServerBusyCPUs), 2))
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
				sp.bounds = append(sp.bounds, bounding{repeat: c.Repeat, capacity: cp.Value(), limiter: cmp.Or(cp.Limiter, "—"), atLeast: cp.AtLeast, step: boundingStep(s, slo, cp), ceiling: clientCeiling(s, slo)})
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

// clientCeiling is the highest rate a client-limited step of SLO slo's
// search achieved while short of its offered rate: what the client could
// send here at most; 0 when no such step ran.
func clientCeiling(s *capacity.Summary, slo int) float64 {
	var most float64
	for _, st := range s.Steps {
		if st.SLO == slo && st.ClientLimited && !st.Sustained && st.AchievedOpsS < st.OfferedOpsS {
			most = max(most, st.AchievedOpsS)
		}
	}
	return most
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
		if ceiling := sp.clientCeiling(); ceiling > 0 {
			v += fmt.Sprintf("; the client's own ceiling here: %s ops/s at most (the most a client-limited step carried when offered more); the repeats stopped at %.0f%%–%.0f%% of it, each at a step the client limited",
				whole(ceiling), 100*sp.low/ceiling, 100*sp.high/ceiling)
		}
	}
	if causes := sp.platformCauses(); len(causes) > 0 {
		v += "; the platform limited them: " + strings.Join(causes, "; ")
	} else {
		v += "; no platform figure explains it (stalls under half the bound, no other load, CPUs not full, no step with the two on one CPU each that carried more at their bounding steps)"
	}
	if moved := sp.movedOnly(); len(moved) > 0 {
		v += "; the kernel also moved client and server between CPUs at the bounding steps of " + strings.Join(moved, ", ") + " (client/server on their main CPU), as at steps that passed"
	}
	return v + "; platform stalls p99 beside their bounding steps " + strings.Join(stalls, ", ")
}

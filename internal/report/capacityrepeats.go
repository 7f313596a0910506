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
	stalls            []float64
	limiters          []string
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
				sp.stalls = append(sp.stalls, boundingStall(s, slo, cp))
				sp.limiters = append(sp.limiters, cmp.Or(cp.Limiter, "—"))
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

// boundingStall is the hiccup meter's p99 beside the step that bounded a
// capacity: of the SLO's steps that missed, the one at the lowest rate
// above the capacity (any missed step when none was found); 0 when not
// measured.
func boundingStall(s *capacity.Summary, slo int, cp capacity.Capacity) float64 {
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
	if bound == nil {
		return 0
	}
	return bound.HiccupP99Us
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

// verdict says whether the repeats agree, and when they do not, what the
// platform did beside the steps that bounded each.
func (sp capacitySpread) verdict() string {
	if !sp.unstable() {
		return fmt.Sprintf("stable: within %s%% of the median", strconv.Itoa(int(unstableShare*100)))
	}
	var stalls []string
	for _, v := range sp.stalls {
		switch {
		case v >= 1000:
			stalls = append(stalls, fixed(v/1000, 1)+" ms")
		case v > 0:
			stalls = append(stalls, whole(v)+" µs")
		default:
			stalls = append(stalls, "—")
		}
	}
	bounded := strings.Join(sp.limiters, ", ")
	if len(slices.Compact(slices.Clone(sp.limiters))) == 1 {
		bounded = sp.limiters[0] + " every time"
	}
	return fmt.Sprintf("unstable: the repeats differ by more than %d%% of the median; bounded by %s; platform stalls p99 beside their bounding steps %s",
		int(unstableShare*100), bounded, strings.Join(stalls, ", "))
}

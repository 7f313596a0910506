package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/result/capacity"
)

// repeatedCapacity is one cell's capacity search run three times at one
// SLO, with the capacities caps (0: none) and the hiccup meter's p99
// beside the step that bounded each.
func repeatedCapacity(caps, stalls []float64) *result.Result {
	r := &result.Result{Schema: result.Schema, Status: result.StatusComplete}
	for i, v := range caps {
		s := &capacity.Summary{SLOs: []capacity.SLO{{Text: "p99<=10ms"}}}
		bound := capacity.Step{OfferedOpsS: v*1.1 + 100, Verdict: "p99 12ms > 10ms", HiccupP99Us: stalls[i]}
		s.Steps = []capacity.Step{{OfferedOpsS: v, Passed: true, Verdict: "meets the SLO, sustained"}, bound}
		s.Capacity = []capacity.Capacity{{Found: v > 0, OpsS: v, Limiter: capacity.LimiterPlatform, Confirm: 0}}
		r.Cells = append(r.Cells, result.Cell{ID: "redis/capacity", Target: "redis", Workload: "capacity", Repeat: i + 1, Status: result.CellOK, Capacity: s})
	}
	return r
}

// Three repeats within 20% of their median are stable; three that differ
// by 10× are unstable, and the verdict names what bounded each and the
// platform stalls beside their bounding steps, in every format.
func TestCapacityRepeatsSpread(t *testing.T) {
	stable := capacitySpreads(cellsWith(repeatedCapacity([]float64{9000, 10000, 10500}, []float64{300, 400, 350}), capacityOf))
	if len(stable) != 1 || stable[0].median != 10000 || stable[0].low != 9000 || stable[0].high != 10500 || stable[0].unstable() || stable[0].confidence != 0.75 {
		t.Fatalf("stable spread %+v", stable)
	}
	r := repeatedCapacity([]float64{48000, 1969, 30000}, []float64{400, 9800, 600})
	sp := capacitySpreads(cellsWith(r, capacityOf))
	if len(sp) != 1 || !sp[0].unstable() || sp[0].median != 30000 {
		t.Fatalf("unstable spread %+v", sp)
	}
	out := renderAll(t, r)
	for f, text := range out {
		want := "9.8 ms"
		if f == "csv" {
			want = "capacity_unstable_at_p99<=10ms,1,bool"
		}
		if !strings.Contains(text, want) {
			t.Errorf("%s: no %q in\n%s", f, want, text)
		}
	}
	if !strings.Contains(out["text"], "unstable: the repeats differ by more than 20% of the median; bounded by platform stalls") {
		t.Errorf("text:\n%s", out["text"])
	}
	var b bytes.Buffer
	if err := CSV(&b, repeatedCapacity([]float64{0, 0}, []float64{0, 0})); err != nil || !strings.Contains(b.String(), "capacity_unstable_at_p99<=10ms,0,bool") {
		t.Errorf("none twice is the same answer: %v\n%s", err, b.String())
	}
	if text := renderAll(t, repeatedCapacity([]float64{0, 0}, []float64{0, 0}))["text"]; !strings.Contains(text, "none, none") {
		t.Errorf("repeats that found none are not written so:\n%s", text)
	}
}

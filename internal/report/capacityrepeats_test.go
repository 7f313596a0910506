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
		bound := capacity.Step{OfferedOpsS: v*1.1 + 100, Verdict: "p99 12ms > 10ms", HiccupP99Us: stalls[i],
			Percentiles: []capacity.Percentile{{Percentile: 99, ValueUs: 12000, ObjectiveUs: 10000}}, ClientMainCPU: 0.99, ServerMainCPU: 1}
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
	if !strings.Contains(out["text"], "unstable: the repeats differ by more than 20% of the median; bounded by platform stalls every time; the platform limited them: platform stalls p99 at the bounding steps of #2 9.8 ms beside p99 ≤ 10.0 ms") {
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

// Three repeats that disagree because the search named the platform's
// placement at the steps that bounded two (the kernel swapped client and
// server between CPUs where a step with each on one CPU carried as much):
// the verdict says the platform limited them, with the main-CPU shares, in
// every format. Client-limited repeats whose bounding steps the kernel
// moved as well as steps that passed are not the platform's: the verdict
// says each is a lower bound, the client's own ceiling, and that no
// platform figure explains the spread, with the moves as a figure.
func TestCapacityRepeatsNameThePlatformsPlacement(t *testing.T) {
	r := repeatedCapacity([]float64{60800, 32000, 48000}, []float64{708, 765, 409})
	mains := [][2]float64{{0.99, 1}, {0.56, 0.59}, {0.59, 0.6}}
	for i := range r.Cells {
		s := r.Cells[i].Capacity
		s.Capacity[0].Limiter = capacity.LimiterPlacement
		s.Steps[1].ClientMainCPU, s.Steps[1].ServerMainCPU = mains[i][0], mains[i][1]
		if i > 0 {
			s.Steps[1].Limiter = capacity.LimiterPlacement
		}
	}
	out := renderAll(t, r)
	for f, text := range out {
		wants := []string{"the platform limited them: the kernel moved client and server between CPUs at the steps that bounded repeats", "3 (client/server on the CPU each used most 56%/59%, 59%/60% of its time) where a step with each on one CPU carried as much"}
		if f == "csv" {
			wants = []string{"capacity_platform_limited_at_p99<=10ms,1,bool", "capacity_bounding_main_cpu_min_at_p99<=10ms,0.56,fraction"}
		}
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("%s: no %q in\n%s", f, want, text)
			}
		}
	}
	for i := range r.Cells {
		s := r.Cells[i].Capacity
		s.Capacity[0].Limiter, s.Capacity[0].AtLeast = capacity.LimiterClientCPU, true
		s.Steps[1].Limiter, s.Steps[1].ClientLimited = capacity.LimiterClientCPU, true
		// The client's ceiling: offered 128,000, it sent 67,032.
		s.Steps = append(s.Steps, capacity.Step{OfferedOpsS: 128000, AchievedOpsS: 67032, ClientLimited: true, Verdict: "achieved 52.4% of the offered rate"})
	}
	out = renderAll(t, r)
	for f, text := range out {
		wants := []string{"(each a lower bound: the store carried at least 60,800 ops/s); the client", "s own ceiling here: 67,032 ops/s at most (the most a client-limited step carried when offered more); the repeats stopped at 48%–91% of it, each at a step the client limited",
			"; no platform figure explains it", "the kernel also moved client and server between CPUs at the bounding steps of", "2 56%/59%, "}
		if f == "csv" {
			wants = []string{"capacity_platform_limited_at_p99<=10ms,0,bool", "capacity_client_ceiling_ops_s_at_p99<=10ms,67032,ops/s"}
		}
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("client-limited, %s: no %q in\n%s", f, want, text)
			}
		}
	}
}

// Repeats that disagree where the CPUs ran the hiccup probes' speed loop
// 2× slower at the bounding step of the one that found less: the platform
// limited them, said with each repeat's figure in every format; the same
// speeds beside a slower repeat that found more explain nothing.
func TestCapacityRepeatsNameTheCPUsSpeed(t *testing.T) {
	withSpeeds := func(caps, speeds []float64) *result.Result {
		r := repeatedCapacity(caps, []float64{400, 420, 410})
		for i := range r.Cells {
			s := r.Cells[i].Capacity
			s.Capacity[0].Limiter = capacity.LimiterStore
			s.Steps[1].HiccupSpeedNs = speeds[i]
		}
		return r
	}
	out := renderAll(t, withSpeeds([]float64{60000, 30000, 58000}, []float64{380, 760, 400}))
	for f, text := range out {
		// (markdown escapes "#", html "'")
		wants := []string{"the platform limited them: the CPUs ran at other speeds at the bounding steps (the hiccup probes", "1 380 ns, ", "2 760 ns, ", "3 400 ns: ", "2.00× slower than ", "and it found less)"}
		if f == "csv" {
			wants = []string{"capacity_platform_limited_at_p99<=10ms,1,bool", "capacity_bounding_speed_ns_max_at_p99<=10ms,760,ns"}
		}
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("%s: no %q in\n%s", f, want, text)
			}
		}
	}
	text := renderAll(t, withSpeeds([]float64{30000, 60000, 58000}, []float64{380, 760, 400}))["text"]
	if strings.Contains(text, "other speeds") || !strings.Contains(text, "no platform figure explains it") {
		t.Errorf("the slower CPUs found more, yet they are named the cause:\n%s", text)
	}
}

// Client-limited repeats that disagree where the run's CPUs were full at
// every bounding step (the 2-vCPU VM at 44,000–56,000 ops/s against Redis:
// client 1.00 and server 0.81–0.95 of 2 CPUs): the platform limited them,
// said with each step's CPUs in every format, and the knee curve shows
// each step's; a step with CPUs to spare names nothing.
func TestCapacityRepeatsNameAFullMachine(t *testing.T) {
	withBusy := func(busy [3][3]float64) *result.Result {
		r := repeatedCapacity([]float64{56000, 44000, 44000}, []float64{312, 1100, 567})
		for i := range r.Cells {
			s := r.Cells[i].Capacity
			s.Capacity[0].Limiter, s.Capacity[0].AtLeast = capacity.LimiterClientCPU, true
			st := &s.Steps[1]
			st.Limiter, st.ClientLimited = capacity.LimiterClientCPU, true
			st.MachineBusyCPUs, st.ClientBusyCPUs, st.ServerBusyCPUs, st.MachineCPUs = busy[i][0], busy[i][1], busy[i][2], 2
		}
		return r
	}
	out := renderAll(t, withBusy([3][3]float64{{1.79, 0.98, 0.81}, {1.84, 0.95, 0.86}, {1.79, 0.96, 0.83}}))
	for f, text := range out {
		wants := []string{"the platform limited them: the machine", "s CPUs were full (80% or more busy) at every bounding step: ", "1 1.79 of 2 CPUs busy (90%: client 0.98, server 0.81, rest 0.00)", "1.84 of 2"}
		if f == "csv" {
			wants = []string{"capacity_platform_limited_at_p99<=10ms,1,bool", "capacity_bounding_machine_busy_min_at_p99<=10ms,1.79,cores", "capacity_step2_machine_busy_cpus,1.84,cores"}
		}
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("%s: no %q in\n%s", f, want, text)
			}
		}
	}
	text := renderAll(t, withBusy([3][3]float64{{1.2, 0.6, 0.5}, {1.3, 0.7, 0.5}, {1.1, 0.6, 0.4}}))["text"]
	if strings.Contains(text, "were full") || !strings.Contains(text, "no platform figure explains it") {
		t.Errorf("CPUs to spare, yet a full machine is named:\n%s", text)
	}
}

// A repeat whose bounding step the search named platform stalls for one
// long stall (the hiccup meter's max, rare for its p99) counts as the
// platform's doing, with that stall.
func TestCapacityRepeatsNameOneLongStall(t *testing.T) {
	r := repeatedCapacity([]float64{44000, 7063, 44000}, []float64{400, 380, 410})
	st := &r.Cells[1].Capacity.Steps[1]
	st.Limiter, st.HiccupMaxUs = capacity.LimiterPlatform, 32000
	text := renderAll(t, r)["text"]
	if !strings.Contains(text, "the platform limited them: platform stalls p99 at the bounding steps of #2 one of 32.0 ms (max)") {
		t.Errorf("the long stall is not named:\n%s", text)
	}
	// A cluster of short stalls is named by its sum within 50 ms.
	st.HiccupMaxUs, st.HiccupBurstMs = 3700, 24.5
	out := renderAll(t, r)
	if !strings.Contains(out["text"], "the platform limited them: platform stalls p99 at the bounding steps of #2 24.5 ms within 50 ms (max 3.7 ms)") {
		t.Errorf("the cluster of stalls is not named:\n%s", out["text"])
	}
	if !strings.Contains(out["csv"], "capacity_bounding_stall_burst_max_ms_at_p99<=10ms,24.5,ms") {
		t.Errorf("the CSV lacks the bounding steps' worst 50 ms:\n%s", out["csv"])
	}
}

package report

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/result/capacity"
)

// capacityResult has a capacity the store bounded, one the client may have
// (≥), and an SLO no rate met; a USL fit; a needed rate beyond capacity.
func capacityResult() *result.Result {
	slos := []capacity.SLO{{Text: "p99<=1ms", Objectives: []capacity.Objective{{Percentile: 99, MaxUs: 1000}}},
		{Text: "p99.9<=200µs", Objectives: []capacity.Objective{{Percentile: 99.9, MaxUs: 200}}}}
	step := func(slo int, stage string, rate, p99 float64, passed bool, verdict string) capacity.Step {
		return capacity.Step{SLO: slo, Stage: stage, OfferedOpsS: rate, AchievedOpsS: rate * 0.999, DurationS: 2, Ops: int64(2 * rate),
			P50Us: p99 / 3, P99Us: p99, MaxUs: p99 * 2, Passed: passed, MeetsSLO: passed, Sustained: passed, Verdict: verdict,
			Percentiles: []capacity.Percentile{{Percentile: slos[slo].Objectives[0].Percentile, ValueUs: p99 * 1.2, LowUs: p99 * 1.1, HighUs: p99 * 1.3,
				WidthShare: 0.2 * p99 / slos[slo].Objectives[0].MaxUs, ObjectiveUs: slos[slo].Objectives[0].MaxUs}}}
	}
	redis := &capacity.Summary{SLOs: slos[:1], Steps: []capacity.Step{
		step(0, "ramp", 1000, 300, true, "meets the SLO, sustained"),
		step(0, "ramp", 2000, 4000, false, "p99 4ms > 1ms; backlog grows 150 ops/s (noise 2)"),
		step(0, "bisect", 1500, 700, true, "meets the SLO, sustained"),
		step(0, "confirm", 1500, 720, true, "meets the SLO, sustained"),
	}, Capacity: []capacity.Capacity{{SLO: 0, Found: true, OpsS: 1500, LowestTriedOpsS: 1000, Reason: "2000 ops/s missed: p99 4ms > 1ms", Confirm: 3,
		P50Us: 240, P99Us: 720, ClientCPUUs: 12.5, ServerCPUUs: 7.5,
		Cost: &capacity.Cost{NeedOpsS: 50000, CPUUsPerOp: 20, Basis: "server + client CPU per op at capacity, both on this machine (managed server)", CoresNeededExtrapolated: 1, BeyondCapacity: true}}},
		USL: &capacity.USLFit{Points: []capacity.USLPoint{{Clients: 1, OpsS: 900}, {Clients: 2, OpsS: 1600}, {Clients: 4, OpsS: 2100}},
			Lambda: 910, Sigma: 0.1, Kappa: 0.01, PeakClients: 9.49, PeakOpsS: 2500, RMSE: 12}}
	memory := &capacity.Summary{SLOs: slos, Steps: []capacity.Step{
		step(0, "ramp", 1000, 50, true, "meets the SLO, sustained; client-limited"),
		step(0, "confirm", 1000, 50, true, "meets the SLO, sustained; client-limited"),
		step(1, "ramp", 1000, 500, false, "p99.9 600µs > 200µs"),
	}, Capacity: []capacity.Capacity{
		{SLO: 0, Found: true, AtLeast: true, OpsS: 1000, LowestTriedOpsS: 1000, Confirm: 1, P50Us: 16, P99Us: 50, ClientCPUUs: 3, ServerCPUUs: -1,
			Reason: "the client, not the store, may have set this bound: capacity is at least this rate"},
		{SLO: 1, LowestTriedOpsS: 1000, Confirm: -1, Reason: "no rate meets the SLO: the lowest rate tried, 1000 ops/s, p99.9 600µs > 200µs"},
	}}
	return &result.Result{Schema: result.Schema, Status: result.StatusComplete, Cells: []result.Cell{
		{ID: "redis/capacity", Target: "redis", Workload: "capacity", Status: result.CellOK, Capacity: redis},
		{ID: "memory/capacity", Target: "memory", Workload: "capacity", Status: result.CellOK, Capacity: memory},
	}}
}

func TestCapacityText(t *testing.T) {
	var none bytes.Buffer
	CapacityText(&none, &result.Result{Cells: []result.Cell{{Target: "redis", Workload: "kv"}}})
	if none.Len() != 0 {
		t.Errorf("a result without capacity cells printed %q", none.String())
	}
	var b bytes.Buffer
	CapacityText(&b, capacityResult())
	out := b.String()
	for _, want := range []string{
		"capacity: the highest offered rate",
		"redis/capacity", "1,500", "240", "720", "12.5", "7.50", "50,000", "1.00",
		"≥ 1,000", "capacity is at least this rate",
		"none (lowest tried 1,000)", "no rate meets the SLO: the lowest rate tried, 1000 ops/s",
		"extrapolated", "the need exceeds the capacity",
		"a fit, not a measurement", "0.1000", "0.010000", "9.49", "2,500",
		"knee curve, redis/capacity: every step", "p99 4ms > 1ms; backlog grows 150 ops/s", "confirm",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	t.Log("\n" + out)
}

// A search whose steps passed but whose confirmations all missed says so:
// "none (lowest tried 2,000)" read as if 2,000 ops/s had missed.
func TestCapacityUnconfirmedSaysWhatPassed(t *testing.T) {
	cp := capacity.Capacity{LowestTriedOpsS: 2000, PassedOnceOpsS: 32000, Confirm: -1, Reason: "no rate confirmed: steps passed, but their confirmations missed"}
	r := &result.Result{Schema: result.Schema, Status: result.StatusComplete, Cells: []result.Cell{
		{ID: "redis/capacity", Target: "redis", Workload: "capacity", Status: result.CellFailed, Capacity: &capacity.Summary{Capacity: []capacity.Capacity{cp}, SLOs: []capacity.SLO{{Text: "p99<=1ms"}}}},
	}}
	var b bytes.Buffer
	CapacityText(&b, r)
	if out := b.String(); !strings.Contains(out, "none confirmed (32,000 passed once)") || strings.Contains(out, "lowest tried") {
		t.Errorf("output:\n%s", out)
	}
}

// The HTML report draws each capacity cell's knee curve with the SLO bound
// and the capacity as reference lines, and its steps in the figure's table;
// Markdown has the same figures in tables.
func TestCapacityChartAndMarkdown(t *testing.T) {
	r := capacityResult()
	var page, md bytes.Buffer
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(&page)
	if err != nil {
		t.Fatal(err)
	}
	var redisFig *html.Node
	for _, f := range findAll(doc, tag("figure")) {
		if idOf(f) == "chart-capacity-redis-capacity-fig" {
			redisFig = f
		}
	}
	if redisFig == nil {
		t.Fatal("no knee chart for redis/capacity")
	}
	series := map[string]bool{}
	for _, g := range findAll(redisFig, tag("g")) {
		if v, ok := attr(g, "data-series"); ok {
			series[v] = true
		}
	}
	for _, want := range []string{"p50", "p99", "SLO p99 ≤ 1 ms", "capacity 1,500 ops/s at p99<=1ms"} {
		if !series[want] {
			t.Errorf("knee chart lacks series %q; has %v", want, series)
		}
	}
	if tb := sectionTable(t, doc, "capacity", "capacity"); tb == nil {
		t.Fatal("no capacity table")
	}
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Capacity at a latency budget", "| redis/capacity | p99&lt;=1ms | 1,500 |", "≥ 1,000", "Cost at capacity (an extrapolation)", "Scalability fit (USL, a fit)", "Knee curve: memory/capacity"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}

// TestCapacityGolden: the capacity section of a real capacity result in
// every format. testdata/capacity-result.json.gz holds two searches made with
// capacity.Run and EngineStep on a 2-CPU machine at a load of ~12 (before
// the capacity workload had a command): Redis behind the delaying proxy at
// 2 ms with 4 connections (two SLOs, a USL fit over 1-16 clients, a need of
// 5k ops/s) and the memory store with 2 connections; the envelope is the
// durability sample's.
func TestCapacityGolden(t *testing.T) {
	r := readSuiteSample(t, "capacity")
	var txt, md, page bytes.Buffer
	Text(&txt, r)
	golden(t, "capacity.txt.golden", txt.Bytes())
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "capacity.md.golden", md.Bytes())
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	htmlGolden(t, "capacity.html.golden", page.Bytes())
	var csv bytes.Buffer
	if err := CSV(&csv, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "capacity.csv.golden", csv.Bytes())
}

// TestCapacityCSV: each SLO's capacity, its figures and cost, and the USL
// fit are cell-level rows of the CSV, as every other format shows them
// (the CSV had none of them).
func TestCapacityCSV(t *testing.T) {
	var b bytes.Buffer
	if err := CSV(&b, capacityResult()); err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{} // cell id and metric -> the value and unit
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n")[1:] {
		f := strings.Split(line, ",")
		if f[8] == "" {
			rows[f[1]+" "+f[9]] = f[10:]
		}
	}
	for key, want := range map[string]string{
		"redis/capacity capacity_found_at_p99<=1ms":                     "1 bool",
		"redis/capacity capacity_ops_s_at_p99<=1ms":                     "1500 ops/s",
		"redis/capacity capacity_at_least_at_p99<=1ms":                  "0 bool",
		"redis/capacity capacity_p50_us_at_p99<=1ms":                    "240 us",
		"redis/capacity capacity_p99_us_at_p99<=1ms":                    "720 us",
		"redis/capacity capacity_client_cpu_us_per_op_at_p99<=1ms":      "12.5 us/op",
		"redis/capacity capacity_server_cpu_us_per_op_at_p99<=1ms":      "7.5 us/op",
		"redis/capacity capacity_need_ops_s_at_p99<=1ms":                "50000 ops/s",
		"redis/capacity capacity_cores_needed_extrapolated_at_p99<=1ms": "1 cores",
		"redis/capacity capacity_need_beyond_capacity_at_p99<=1ms":      "1 bool",
		"redis/capacity usl_lambda_ops_s":                               "910 ops/s",
		"redis/capacity usl_sigma":                                      "0.1 fraction",
		"redis/capacity usl_kappa":                                      "0.01 fraction",
		"redis/capacity usl_peak_clients":                               "9.49 count",
		"redis/capacity usl_peak_ops_s":                                 "2500 ops/s",
		"redis/capacity usl_rmse_ops_s":                                 "12 ops/s",
		"memory/capacity capacity_ops_s_at_p99<=1ms":                    "1000 ops/s",
		"memory/capacity capacity_at_least_at_p99<=1ms":                 "1 bool",
		"memory/capacity capacity_found_at_p99.9<=200µs":                "0 bool",
		"memory/capacity capacity_lowest_tried_ops_s_at_p99.9<=200µs":   "1000 ops/s",
	} {
		if got := strings.Join(rows[key], " "); got != want {
			t.Errorf("%s: %q, want %q", key, got, want)
		}
	}
	for _, absent := range []string{
		"memory/capacity capacity_server_cpu_us_per_op_at_p99<=1ms", // not measured (in-process)
		"memory/capacity capacity_ops_s_at_p99.9<=200µs",            // none found
		"memory/capacity usl_lambda_ops_s",                          // no fit
	} {
		if v, ok := rows[absent]; ok {
			t.Errorf("%s: %v, want no row", absent, v)
		}
	}
}

// The knee curve of a real capacity result lays out in Chromium, in light
// and dark mode and printed, like every other chart.
func TestCapacityInChromium(t *testing.T) {
	browserPage(t, readSuiteSample(t, "capacity"), screenshotDir(t))
}

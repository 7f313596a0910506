package report

import (
	"bytes"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/net/html"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
)

// stallPhase is a get phase of fast ops and some slow ones, in µs.
func stallPhase(t *testing.T, workers int, rate float64, fast, slow int, slowUs float64, notes ...string) metrics.Phase {
	t.Helper()
	h := metrics.NewHistogram()
	for i := range fast + slow {
		v := 50e3
		if i >= fast {
			v = slowUs * 1e3
		}
		if err := h.RecordValue(int64(v)); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	q := func(p float64) float64 { return float64(h.ValueAtQuantile(p)) / 1e3 }
	p := metrics.Phase{Name: "get", Workers: workers, Ops: int64(fast + slow), DurationS: 3, ThroughputOpsS: float64(fast+slow) / 3,
		LatencyUs: metrics.Latency{P50: q(50), P90: q(90), P99: q(99), P999: q(99.9), Max: float64(h.Max()) / 1e3},
		Histogram: string(enc), HistogramUnit: "ns", Notes: notes}
	if rate > 0 {
		p.OpenLoop = &metrics.OpenLoop{TargetOpsS: rate}
	}
	return p
}

func coordinatedRun(t *testing.T) *result.Result {
	cell := func(name string, stall bool, p metrics.Phase) result.Cell {
		params := map[string]any{"clients": float64(4)}
		if stall {
			params["stall_after"], params["stall_for"] = "1s", "500ms"
		}
		return result.Cell{ID: "redis:none/" + name, Target: "redis:none", Workload: "hotkey", Name: name, Params: params, Status: result.CellOK, Phases: []metrics.Phase{p}}
	}
	const note = "stall: SIGSTOP to redis pid 42 (no child processes) 1.000 s into the measured phase, SIGCONT 500.1ms later"
	return &result.Result{Cells: []result.Cell{
		cell("open-loop-stall", true, stallPhase(t, 4, 2000, 5000, 900, 300e3, note)),
		cell("closed-loop-stall", true, stallPhase(t, 4, 0, 100000, 4, 500e3, note)),
		cell("open-loop", false, stallPhase(t, 4, 2000, 6000, 0, 0)),
		cell("closed-loop", false, stallPhase(t, 4, 0, 120000, 0, 0)),
		{ID: "memory/kv/keys=10", Target: "memory", Workload: "kv", Status: result.CellOK, Phases: []metrics.Phase{stallPhase(t, 1, 0, 10, 0, 0)}},
	}}
}

func TestCoordinatedOmissionText(t *testing.T) {
	r := coordinatedRun(t)
	var b bytes.Buffer
	CoordinatedOmissionText(&b, r)
	out := b.String()
	for _, want := range []string{
		"coordinated omission: the server stopped (SIGSTOP) for a while, open loop vs closed loop",
		"slow = ops slower than 100ms",
		"redis:none/open-loop-stall    get  open, 2,000/s        4  500ms at 1s    5,900   1,967  50.0  300,155  300,155  300,155   900",
		"redis:none/closed-loop-stall    get         closed        4  500ms at 1s  100,004  33,335  50.0     50.0     50.0  500,171     4",
		"redis:none/open-loop    get  open, 2,000/s        4            —    6,000   2,000  50.0     50.0     50.0     50.0     0",
		"A closed loop records a stall once per client in flight",
		"Here, stalled for 500ms: the open loop (open-loop-stall) recorded 900 of its 5,900 ops slower than 100ms, p99 300,155 µs; the closed loop (closed-loop-stall, 4 clients) 4 of 100,004, p99 50.0 µs, though its max (500,171 µs) shows the stall too.",
		"redis:none/closed-loop-stall get: stall: SIGSTOP to redis pid 42",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "memory/kv") {
		t.Errorf("a cell of another target and workload is in the table:\n%s", out)
	}

	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "## Coordinated omission") || !strings.Contains(md.String(), "| redis:none/closed-loop-stall | get | closed | 4 | 500ms at 1s | 100,004 |") {
		t.Errorf("markdown lacks the table:\n%s", md.String())
	}

	doc := htmlDoc(t, r)
	sec := findAll(doc, func(n *html.Node) bool {
		v, _ := attr(n, "id")
		return n.Data == "section" && v == "coordinated-omission"
	})
	if len(sec) != 1 {
		t.Fatalf("%d coordinated-omission sections", len(sec))
	}
	slow := map[string]string{}
	for _, tr := range findAll(sec[0], tag("tr")) {
		for _, td := range findAll(tr, withAttr("data-m")) {
			if m, _ := attr(td, "data-m"); m == "slow" {
				c, _ := attr(tr, "data-cell")
				slow[c], _ = attr(td, "data-v")
			}
		}
	}
	if slow["redis:none/open-loop-stall"] != "900" || slow["redis:none/closed-loop-stall"] != "4" || len(slow) != 4 {
		t.Errorf("slow ops in the HTML table: %v", slow)
	}
	if n := len(findAll(sec[0], func(n *html.Node) bool { k, _ := attr(n, "data-chart"); return k == "spectrum" })); n != 1 {
		t.Errorf("%d spectrum charts in the section, want 1", n)
	}

	// A run without a stall has no such section.
	b.Reset()
	r.Cells = r.Cells[2:]
	CoordinatedOmissionText(&b, r)
	if b.Len() != 0 {
		t.Errorf("a run without a stall prints %q", b.String())
	}
}

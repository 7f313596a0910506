package report

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
)

// historyCase is one run of historyFiles: how it differs from the sample.
type historyCase struct {
	day         int     // start: 2026-11-<day>
	factor      float64 // every phase's ops/s and p99 times this
	cpu         string
	commit      string
	redis       string // redis's version
	appendfsync string
	failed      string // a cell id that failed in this run
	extra       string // a cell id only this run has
	assertions  []result.Assertion
}

var p99Gate = result.Assertion{Expr: "redis/kv/keys=1000 read p99 <= 200", Metric: "p99", Op: "<=", Value: 200,
	Target: "redis", Cell: "redis/kv/keys=1000", Phase: "read", Pass: true}

// historyCases are given in this order, which is not their start order:
// #1 is the second (day 22), #2 the third, #3 the first.
var historyCases = []historyCase{
	{day: 24, factor: 3, cpu: "AMD EPYC", commit: "unknown", redis: "7.2.4", appendfsync: "always", extra: "memory/kv/keys=5",
		assertions: []result.Assertion{p99Gate, {Expr: "ops_s >= 1000", Metric: "ops_s", Op: ">=", Value: 1000, Target: "redis", Cell: "redis/kv/keys=1000", Phase: "read", Pass: true}}},
	{day: 22, factor: 1, cpu: "Intel(R) Xeon(R) Processor", commit: "unknown", redis: "7.0.15", appendfsync: "everysec"},
	{day: 23, factor: 2, cpu: "Intel(R) Xeon(R) Processor", commit: "abc1234", redis: "7.0.15", appendfsync: "always", failed: "files/kv/keys=1000",
		assertions: []result.Assertion{p99Gate}},
}

// historyOrder is historyCases' start order.
var historyOrder = []int{1, 2, 0}

// historyFiles writes historyCases as result files (the last gzipped) in
// t.TempDir() and reads them back as storebench history does.
func historyFiles(t *testing.T) []HistoryRun {
	t.Helper()
	dir := t.TempDir()
	var runs []HistoryRun
	for i, hc := range historyCases {
		r, err := result.Read("testdata/sample-result.json")
		if err != nil {
			t.Fatal(err)
		}
		r.ID = "run" + strconv.Itoa(i)
		r.StartedAt = time.Date(2026, 11, hc.day, 2, 0, 0, 0, time.UTC)
		r.Environment.CPUModel, r.Storebench.Commit, r.Assertions = hc.cpu, hc.commit, hc.assertions
		for j := range r.Targets {
			if tg := &r.Targets[j]; tg.Name == "redis" {
				tg.Version, tg.Settings["appendfsync"] = hc.redis, hc.appendfsync
			}
		}
		for j := range r.Cells {
			c := &r.Cells[j]
			for k := range c.Phases {
				c.Phases[k].ThroughputOpsS *= hc.factor
				c.Phases[k].LatencyUs.P99 *= hc.factor
			}
			if c.ID == hc.failed {
				c.Status, c.Error = result.CellFailed, "it broke"
			}
		}
		if hc.extra != "" {
			c := r.Cells[0]
			c.ID = hc.extra
			r.Cells = append(r.Cells, c)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, r.ID, "result.json")
		if i == len(historyCases)-1 {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write(b)
			zw.Close()
			b, path = z.Bytes(), path+".gz"
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		back, err := result.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, HistoryRun{Path: path, R: back})
	}
	return runs
}

// historyExpect is a matched phase's figures in start order.
type historyExpect struct {
	cell, target, phase string
	runs                []int // run numbers (1-based, start order) that have it
	opsS, p99           []float64
}

// historyExpected reads what every matched phase should show from the
// sample and historyCases, not from the history.
func historyExpected(t *testing.T) []historyExpect {
	t.Helper()
	r, err := result.Read("testdata/sample-result.json")
	if err != nil {
		t.Fatal(err)
	}
	var out []historyExpect
	for _, c := range r.Cells {
		for _, p := range c.Phases {
			e := historyExpect{cell: c.ID, target: c.Target, phase: p.Name}
			for n, i := range historyOrder {
				if historyCases[i].failed == c.ID {
					continue
				}
				e.runs = append(e.runs, n+1)
				e.opsS = append(e.opsS, p.ThroughputOpsS*historyCases[i].factor)
				e.p99 = append(e.p99, p.LatencyUs.P99*historyCases[i].factor)
			}
			out = append(out, e)
		}
	}
	return out
}

func renderHistory(t *testing.T, h *History) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, f := range historyFormats {
		var b bytes.Buffer
		if err := f(&b, h); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = b.String()
	}
	return out
}

// The changes historyCases make, where they make them.
const (
	storebenchAt2 = "storebench changed: dev unknown → dev abc1234"
	settingsAt2   = "redis settings changed: appendfsync everysec → always"
	machineAt3    = "machine changed: Intel(R) Xeon(R) Processor → AMD EPYC"
	versionAt3    = "redis version changed: 7.0.15 → 7.2.4"
)

// TestHistoryInEveryFormat: three results given out of start order make a
// page whose every matched cell has a point per run in start order (HTML:
// its chart's points; Markdown, text, CSV: its rows), whose changes are
// marked where they happen and only on the charts they concern, and whose
// thresholds are drawn where the runs had them.
func TestHistoryInEveryFormat(t *testing.T) {
	h, err := NewHistory(historyFiles(t))
	if err != nil {
		t.Fatal(err)
	}
	out := renderHistory(t, h)
	want := historyExpected(t)

	doc, err := html.Parse(strings.NewReader(out["html"]))
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]*html.Node{} // plot id + series key -> its group
	marks := map[string][]string{}    // plot id -> its marks' texts at their x
	for _, svg := range findAll(doc, func(n *html.Node) bool { return n.Data == "svg" && hasClass(n, "plot") }) {
		id, _ := attr(svg, "id")
		if fig := ancestor(svg, "figure"); fig == nil || len(findAll(fig, tag("table"))) != 1 {
			t.Errorf("%s: not in a figure with one table", id)
		}
		for _, g := range findAll(svg, withAttr("data-series")) {
			k, _ := attr(g, "data-series")
			series[id+"|"+k] = g
		}
		for _, g := range findAll(svg, func(n *html.Node) bool { return n.Data == "g" && hasClass(n, "mark") }) {
			x, _ := attr(g, "data-x")
			m, _ := attr(g, "data-mark")
			marks[id] = append(marks[id], x+" "+m)
		}
	}
	for _, e := range want {
		for _, metric := range []struct {
			key  string
			want []float64
		}{{"ops_s", e.opsS}, {"p99", e.p99}} {
			chart := "history-" + idUnsafe.ReplaceAllString(e.cell+"-"+e.phase, "-") + "-" + metric.key
			g := series[chart+"|"+e.cell+" "+e.phase]
			if g == nil {
				t.Errorf("%s: no series %s %s", chart, e.cell, e.phase)
				continue
			}
			pts := findAll(g, func(n *html.Node) bool { return hasClass(n, "pt") })
			if len(pts) != len(e.runs) {
				t.Errorf("%s %s: %d points, want %d", chart, e.phase, len(pts), len(e.runs))
				continue
			}
			for i, pt := range pts {
				x, _ := attr(pt, "data-x")
				y, _ := attr(pt, "data-y")
				if x != strconv.Itoa(e.runs[i]-1) || y != exact(metric.want[i]) {
					t.Errorf("%s %s point %d: x %s y %s, want x %d y %s", chart, e.phase, i, x, y, e.runs[i]-1, exact(metric.want[i]))
				}
			}
		}
		// Every chart marks the machine and storebench; only redis's its
		// settings and version.
		ms := strings.Join(marks["history-"+idUnsafe.ReplaceAllString(e.cell+"-"+e.phase, "-")+"-p99"], "\n")
		for _, m := range []string{"0.5 #2: " + storebenchAt2, "1.5 #3: " + machineAt3} {
			if !strings.Contains(ms, m) {
				t.Errorf("%s: no mark %q in\n%s", e.cell, m, ms)
			}
		}
		if redis := e.target == "redis"; strings.Contains(ms, settingsAt2) != redis || strings.Contains(ms, versionAt3) != redis {
			t.Errorf("%s: the redis marks are there %v, want %v:\n%s", e.cell, !redis, redis, ms)
		}
	}

	// The p99 threshold: a dashed line at 200 over runs #2 and #3, which had it.
	g := series["history-redis-kv-keys-1000-read-p99|redis/kv/keys=1000 read p99 µs threshold <= 200"]
	if g == nil {
		t.Fatalf("no p99 threshold line; series: %v", keys(series))
	}
	if v, _ := attr(g, "data-threshold"); v != "<= 200" {
		t.Errorf("threshold data %q", v)
	}
	var xs []string
	for _, pt := range findAll(g, func(n *html.Node) bool { return hasClass(n, "pt") }) {
		x, _ := attr(pt, "data-x")
		y, _ := attr(pt, "data-y")
		if y != "200" {
			t.Errorf("threshold point at y %s", y)
		}
		xs = append(xs, x)
	}
	if strings.Join(xs, " ") != "0.5 1.5 1.5 2" {
		t.Errorf("threshold points at x %v, want from run #2 (less half a run) to #3", xs)
	}
	if series["history-redis-kv-keys-1000-read-ops_s|redis/kv/keys=1000 read ops/s threshold >= 1,000"] == nil {
		t.Errorf("no ops/s threshold line")
	}

	// Markdown and text: a table per matched phase, a row per run that has it.
	for _, f := range []string{"md", "text"} {
		esc := func(s string) string { return s }
		if f == "md" {
			esc = mdText
		}
		for _, e := range want {
			rows := historyRows(out[f], e.cell+" "+e.phase+": ops/s and p99 per run")
			if len(rows) != len(e.runs) {
				t.Errorf("%s: %s %s: %d rows, want %d:\n%s", f, e.cell, e.phase, len(rows), len(e.runs), strings.Join(rows, "\n"))
				continue
			}
			for i, row := range rows {
				if !strings.Contains(row, esc("#"+strconv.Itoa(e.runs[i]))) || !strings.Contains(row, num(e.opsS[i])) || !strings.Contains(row, us(e.p99[i])) {
					t.Errorf("%s: %s %s row %d: %q, want run #%d, %s ops/s, %s µs", f, e.cell, e.phase, i, row, e.runs[i], num(e.opsS[i]), us(e.p99[i]))
				}
			}
		}
		for _, c := range []string{storebenchAt2, settingsAt2, machineAt3, versionAt3,
			"files/kv/keys=1000: failed in run #2", "memory/kv/keys=5: finished in 1 of the 3 runs, not charted"} {
			if !strings.Contains(out[f], esc(c)) {
				t.Errorf("%s lacks %q", f, c)
			}
		}
		rows := historyRows(out[f], "redis/kv/keys=1000 read: ops/s and p99 per run")
		if len(rows) != 3 || strings.Contains(rows[0], esc("<= 200")) || !strings.Contains(rows[1], esc("<= 200 pass")) || !strings.Contains(rows[2], esc(">= 1,000 pass")) {
			t.Errorf("%s: redis read rows lack their thresholds:\n%s", f, strings.Join(rows, "\n"))
		}
	}

	// CSV: a row per run × matched phase × figure, and the thresholds.
	recs, err := csv.NewReader(strings.NewReader(out["csv"])).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, rec := range recs[1:] {
		got[rec[2]+"|"+rec[3]+"|"+rec[4]+"|"+rec[5]]++
	}
	for _, e := range want {
		for i := range e.runs {
			if got[e.cell+"|"+e.phase+"|throughput_ops_s|"+exact(e.opsS[i])] != 1 || got[e.cell+"|"+e.phase+"|latency_p99_us|"+exact(e.p99[i])] != 1 {
				t.Errorf("csv: %s %s run #%d missing", e.cell, e.phase, e.runs[i])
			}
		}
	}
	if got["redis/kv/keys=1000|read|threshold_latency_p99_us|200"] != 2 || !strings.Contains(out["csv"], ","+machineAt3+"\n") {
		t.Errorf("csv: thresholds or changes missing:\n%s", out["csv"][:min(len(out["csv"]), 2000)])
	}
}

func keys[V any](m map[string]V) []string { return sortedKeys(m) }

// historyRows are the rows of the table under title in the text or
// Markdown page (the header and Markdown's rule left out).
func historyRows(page, title string) []string {
	_, rest, ok := strings.Cut(page, title)
	if !ok {
		return nil
	}
	lines := strings.Split(strings.TrimLeft(rest, ":\n"), "\n")
	var rows []string
	for _, l := range lines[1:] { // the header
		if strings.TrimSpace(l) == "" {
			break
		}
		if strings.HasPrefix(l, "|:-") || strings.HasPrefix(l, "|--") {
			continue
		}
		rows = append(rows, l)
	}
	return rows
}

// TestHistoryRefuses: fewer than two results, or none sharing a cell, is
// an error of one line.
func TestHistoryRefuses(t *testing.T) {
	runs := historyFiles(t)
	if _, err := NewHistory(runs[:1]); err == nil || !strings.Contains(err.Error(), "at least 2 results, found 1") {
		t.Errorf("one run: %v", err)
	}
	if _, err := NewHistory([]HistoryRun{runs[0], runs[0]}); err == nil || !strings.Contains(err.Error(), "found 1") {
		t.Errorf("one run twice: %v", err)
	}
	other := *runs[1].R
	other.ID, other.Cells = "other", []result.Cell{{ID: "nothing/kv/keys=1", Target: "nothing", Status: result.CellOK}}
	_, err := NewHistory([]HistoryRun{runs[0], {Path: "other", R: &other}})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "no cell finished in two of the results") {
		t.Errorf("no shared cell: %v", err)
	}
}

// TestHistoryRepeats: a run that repeated a cell is one point, its
// repeats' median, as compare takes it.
func TestHistoryRepeats(t *testing.T) {
	ph := func(opsS, p99 float64) metrics.Phase {
		return metrics.Phase{Name: "read", ThroughputOpsS: opsS, LatencyUs: metrics.Latency{P99: p99}}
	}
	a := synthRun("a", synthCell("redis/kv/keys=10", ph(100, 50)))
	b := synthRun("b", synthCell("redis/kv/keys=10", ph(10, 9)), synthCell("redis/kv/keys=10", ph(30, 1)), synthCell("redis/kv/keys=10", ph(20, 5)))
	b.StartedAt = a.StartedAt.Add(time.Hour)
	h, err := NewHistory([]HistoryRun{{Path: "b", R: b}, {Path: "a", R: a}})
	if err != nil {
		t.Fatal(err)
	}
	pts := h.cells[0].phases[0].points
	if len(pts) != 2 || pts[0].opsS != 100 || pts[1].opsS != 20 || pts[1].p99 != 5 {
		t.Errorf("points %+v, want run a's, then b's median (20 ops/s, 5 µs)", pts)
	}
}

// TestHistoryInChromium: the history page passes the report's checks in
// Chromium (light, dark, printed; every plot laid out readable, one table
// per figure, no console error or request).
func TestHistoryInChromium(t *testing.T) {
	h, err := NewHistory(historyFiles(t))
	if err != nil {
		t.Fatal(err)
	}
	browserHTML(t, func(w io.Writer) error { return HistoryHTML(w, h) }, screenshotDir(t))
}

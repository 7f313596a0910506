package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/suites"
)

// suiteSamples are real results of every suite but quick (whose sample is
// sample-result.json), made with `storebench run SUITE --quick` (payments
// on postgres and sqlite, sessions and network on postgres and redis,
// redis-persistence and cache-vs-db with --repeat 1; the others as the
// suite has them), each in testdata/SUITE-result.json.gz (gzip: result.Read
// reads either; kept small, as the results of every run can be).
var suiteSamples = []string{"payments", "sessions", "durability", "network", "coordinated-omission", "files-vs-cache", "redis-persistence", "cache-vs-db"}

func readSuiteSample(t *testing.T, suite string) *result.Result {
	t.Helper()
	r, err := result.Read("testdata/" + suite + "-result.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSuiteTextGolden: every suite's terminal summary of its sample result,
// byte for byte as it was before the reports shared one model (the goldens
// were written by the binary of that commit, 8272c79).
func TestSuiteTextGolden(t *testing.T) {
	for _, suite := range suiteSamples {
		t.Run(suite, func(t *testing.T) {
			var b bytes.Buffer
			Text(&b, readSuiteSample(t, suite))
			golden(t, suite+".txt.golden", b.Bytes())
		})
	}
}

// TestSuiteHTMLGolden: every suite's HTML page of its sample result.
func TestSuiteHTMLGolden(t *testing.T) {
	for _, suite := range append([]string{"sample"}, suiteSamples...) {
		t.Run(suite, func(t *testing.T) {
			r := readSample(t)
			if suite != "sample" {
				r = readSuiteSample(t, suite)
			}
			var b bytes.Buffer
			if err := HTML(&b, r); err != nil {
				t.Fatal(err)
			}
			htmlGolden(t, suite+".html.golden", b.Bytes())
		})
	}
}

// TestSuiteMarkdownGolden: every suite's Markdown report of its sample result.
func TestSuiteMarkdownGolden(t *testing.T) {
	for _, suite := range suiteSamples {
		t.Run(suite, func(t *testing.T) {
			var b bytes.Buffer
			if err := Markdown(&b, readSuiteSample(t, suite)); err != nil {
				t.Fatal(err)
			}
			golden(t, suite+".md.golden", b.Bytes())
		})
	}
}

// sectionTable is the HTML table of that data-table inside the section of
// that id; it fails the test when there is none.
func sectionTable(t *testing.T, doc *html.Node, section, name string) *html.Node {
	t.Helper()
	for _, s := range findAll(doc, tag("section")) {
		if idOf(s) != section {
			continue
		}
		for _, tb := range findAll(s, tag("table")) {
			if v, _ := attr(tb, "data-table"); v == name {
				return tb
			}
		}
	}
	t.Fatalf("no table %q in section #%s", name, section)
	return nil
}

// rowOf is the table's row whose first cell reads first.
func rowOf(t *testing.T, tb *html.Node, first string) *html.Node {
	t.Helper()
	for _, tr := range findAll(tb, tag("tr")) {
		if th := findAll(tr, tag("th")); len(th) > 0 && text(th[0]) == first && ancestor(tr, "thead") == nil {
			return tr
		}
	}
	t.Fatalf("no row %q in table", first)
	return nil
}

// figureIn is the data-v of the row's cell of metric m.
func figureIn(t *testing.T, tr *html.Node, m string) float64 {
	t.Helper()
	for _, td := range findAll(tr, tag("td")) {
		if v, _ := attr(td, "data-m"); v == m {
			return floatAttr(t, td, "data-v")
		}
	}
	t.Fatalf("no figure %q in row", m)
	return 0
}

// modelTablesIn checks that every table of the result's workload sections
// is in the Markdown report, cell by cell, as the shared model has it.
func modelTablesIn(t *testing.T, r *result.Result, md string) {
	t.Helper()
	var b strings.Builder
	recorder := tableRecorder{&b}
	for _, s := range sections(r, nil) {
		s.model.render(recorder)
	}
	for _, want := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks the model's row %q", want)
		}
	}
}

// tableRecorder writes each table row as Markdown would, and nothing else.
type tableRecorder struct{ b *strings.Builder }

func (d tableRecorder) heading(string, string) {}
func (d tableRecorder) para(string)            {}
func (d tableRecorder) list(items []string) {
	for _, s := range items {
		d.b.WriteString("- " + mdText(s) + "\n")
	}
}
func (d tableRecorder) table(tb *table) {
	for _, row := range tb.rows {
		d.b.WriteString("|")
		for _, c := range row {
			d.b.WriteString(" " + mdText(c.text) + " |")
		}
		d.b.WriteString("\n")
	}
}
func (d tableRecorder) lineChart(c *lineChartSpec) { d.table(c.table) }
func (d tableRecorder) end()                       {}

func markdownOf(t *testing.T, r *result.Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := Markdown(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestPaymentsInEveryFormat: a payments result's HTML and Markdown show
// the invariants verdict and each check, the declines by reason, the
// retries, the deletes and committed transfers over time, with the result's
// figures.
func TestPaymentsInEveryFormat(t *testing.T) {
	r := readSuiteSample(t, "payments")
	// The sample declined nothing: give one cell declines, as a run with
	// faults (frozen cards, insufficient funds) has them.
	pc := r.Cells[0].Payments
	pc.DeclinedBy, pc.Declined = map[string]int64{"insufficient_funds": 7, "card_frozen": 2}, 9
	doc, md := htmlDoc(t, r), markdownOf(t, r)
	for i := range r.Cells {
		c := &r.Cells[i]
		s := c.Payments
		row := rowOf(t, sectionTable(t, doc, "payments", "payments"), c.Label())
		for m, want := range map[string]float64{"committed": float64(s.Committed), "declined": float64(s.Declined), "retries": float64(s.Retries),
			"deletes": float64(s.Deletes), "committed_per_s": s.CommittedPerS} {
			if got := figureIn(t, row, m); got != want {
				t.Errorf("%s %s: page says %v, result %v", c.Label(), m, got, want)
			}
		}
		if !strings.Contains(text(row), map[bool]string{true: "ok", false: "VIOLATED"}[s.Invariants.OK]) {
			t.Errorf("%s: the invariants verdict is not in its row: %s", c.Label(), text(row))
		}
		checks := text(sectionTable(t, doc, "payments", "payments-invariants"))
		for _, k := range s.Invariants.Checks {
			if !strings.Contains(checks, k.Detail) || !strings.Contains(md, mdText(k.Detail)) {
				t.Errorf("%s: check %q is not in both formats", c.Label(), k.Name)
			}
		}
		for _, sample := range s.RetrySamples {
			if !strings.Contains(text(doc), sample) || !strings.Contains(md, mdText(sample)) {
				t.Errorf("%s: retried error %q is not in both formats", c.Label(), sample)
			}
		}
		for _, b := range s.Per10s {
			if b.Seconds >= 1 && !hasPoint(doc, "payments-over-time", b.StartS, b.CommittedPerS) {
				t.Errorf("%s: no point at %d s of %v transfers/s in the chart over time", c.Label(), b.StartS, b.CommittedPerS)
			}
		}
	}
	declines := rowOf(t, sectionTable(t, doc, "payments", "payments-declines"), r.Cells[0].Label())
	if figureIn(t, declines, "declined_insufficient_funds") != 7 || figureIn(t, declines, "declined_card_frozen") != 2 {
		t.Errorf("declines by reason: %s", text(declines))
	}
	markdownHas(t, md, "## Payments", "### Invariants", "### Declines and retries by reason", "| card\\_frozen | insufficient\\_funds |", "### Transfers over time")
	modelTablesIn(t, r, md)
}

// hasPoint says whether the chart of that kind has a point in the bucket
// starting at start (x is the bucket's middle) at rate y.
func hasPoint(doc *html.Node, chart string, start int64, y float64) bool {
	for _, fig := range findAll(doc, withAttr("data-chart")) {
		if v, _ := attr(fig, "data-chart"); v != chart {
			continue
		}
		for _, pt := range findAll(fig, withAttr("data-y")) {
			xs, _ := attr(pt, "data-x")
			ys, _ := attr(pt, "data-y")
			x, _ := strconv.ParseFloat(xs, 64)
			if ys == exact(y) && x > float64(start) && x < float64(start)+60 {
				return true
			}
		}
	}
	return false
}

// rowWith is the table's row whose first two cells read first and second.
func rowWith(t *testing.T, tb *html.Node, first, second string) *html.Node {
	t.Helper()
	for _, tr := range findAll(tb, tag("tr")) {
		th, td := findAll(tr, tag("th")), findAll(tr, tag("td"))
		if len(th) > 0 && len(td) > 0 && text(th[0]) == first && text(td[0]) == second && ancestor(tr, "thead") == nil {
			return tr
		}
	}
	t.Fatalf("no row %q, %q in table", first, second)
	return nil
}

// TestSessionsInEveryFormat: a sessions result's HTML and Markdown show
// phase A beside the article, the designs knob by knob, and the phase B
// table (HOT share, dead tuples, autovacuum runs, stale and lost sessions,
// linger) with the result's figures.
func TestSessionsInEveryFormat(t *testing.T) {
	r := readSuiteSample(t, "sessions")
	doc, md := htmlDoc(t, r), markdownOf(t, r)
	churn := sectionTable(t, doc, "sessions", "sessions-churn")
	insert := sectionTable(t, doc, "sessions", "sessions-insert")
	knobs := text(sectionTable(t, doc, "sessions", "sessions-knobs"))
	for i := range r.Cells {
		c := &r.Cells[i]
		s := c.Sessions
		if s.Phase == "insert" {
			row := rowWith(t, insert, c.Target, s.Variant)
			p, _ := c.Phase("insert")
			if got := figureIn(t, row, "mean_ms"); got != p.LatencyUs.Mean/1000 {
				t.Errorf("%s: mean ms %v, result %v", c.Label(), got, p.LatencyUs.Mean/1000)
			}
			continue
		}
		row := rowWith(t, churn, c.Target, s.Design)
		k, f := s.Counters, s.Figures
		want := map[string]float64{"stale": float64(k.Stale), "lost": float64(k.Lost), "end_rows": float64(f.EndRows)}
		if f.HOTRatio != nil {
			want["hot_ratio"], want["peak_dead_tuples"] = *f.HOTRatio, float64(*f.PeakDeadTuples)
		}
		if k.Reaps > 0 {
			want["linger_max_s"] = f.LingerMaxS
		}
		for m, v := range want {
			if got := figureIn(t, row, m); got != v {
				t.Errorf("%s %s: page says %v, result %v", c.Label(), m, got, v)
			}
		}
		if f.AutovacuumRuns != nil {
			runs := fmt.Sprintf("autovacuum runs %d", *f.AutovacuumRuns)
			if !strings.Contains(text(doc), runs) || !strings.Contains(md, runs) {
				t.Errorf("%s: %q is not in both formats", c.Label(), runs)
			}
		}
		if !strings.Contains(knobs, c.Target+" "+s.Design) {
			t.Errorf("the knob table has no column for %s %s", c.Target, s.Design)
		}
	}
	for _, want := range []string{"naive", "tuned", "persistence", "fillfactor"} {
		if !strings.Contains(knobs, want) {
			t.Errorf("the knob table lacks %q", want)
		}
	}
	markdownHas(t, md, "## Sessions", "### Sessions phase A", "### Sessions phase B", "### Designs, knob by knob", "| target | design | creates/s |", "FOR UPDATE SKIP LOCKED")
	modelTablesIn(t, r, md)
}

// TestDurabilityInEveryFormat: a durability result's HTML and Markdown
// show the lost-writes table, per target with its window and recovery
// time, and what each configuration loses.
func TestDurabilityInEveryFormat(t *testing.T) {
	r := readSuiteSample(t, "durability")
	doc, md := htmlDoc(t, r), markdownOf(t, r)
	lost := sectionTable(t, doc, "durability", "durability")
	windows := 0
	for i := range r.Cells {
		c := &r.Cells[i]
		s := c.Durability
		row := rowOf(t, lost, c.Target)
		for m, v := range map[string]float64{"acked": float64(s.Acked), "lost_max": float64(s.LostMax), "recovery_mean_s": s.RecoveryMeanS, "recovery_max_s": s.RecoveryMaxS} {
			if got := figureIn(t, row, m); got != v {
				t.Errorf("%s %s: page says %v, result %v", c.Label(), m, got, v)
			}
		}
		if s.LossTrials > 0 {
			windows++
			window := fmt.Sprintf("%s s, %s writes", durSecs(s.WindowMaxS), thousands(s.WindowMaxWrites))
			if !strings.Contains(text(row), window) || !strings.Contains(md, window) {
				t.Errorf("%s: window %q is not in both formats", c.Label(), window)
			}
		}
		if !strings.Contains(text(doc), s.Verdict) || !strings.Contains(md, mdText(s.Verdict)) {
			t.Errorf("%s: verdict %q is not in both formats", c.Label(), s.Verdict)
		}
	}
	if windows == 0 {
		t.Error("the sample lost no write: it cannot show a loss window")
	}
	markdownHas(t, md, "## Durability: acknowledged writes lost", "| target | trials | acked | lost max |", "A process crash is not a power loss")
	modelTablesIn(t, r, md)
}

// TestNetworkInEveryFormat: a network result's HTML shows, per workload
// and phase, latency against RTT as a chart (a point per target and RTT,
// at the cell's p50) with its table; Markdown the same tables.
func TestNetworkInEveryFormat(t *testing.T) {
	r := readSuiteSample(t, "network")
	doc, md := htmlDoc(t, r), markdownOf(t, r)
	var charts []*html.Node
	for _, fig := range findAll(doc, withAttr("data-chart")) {
		if v, _ := attr(fig, "data-chart"); v == "network" && ancestor(fig, "section") != nil && idOf(ancestor(fig, "section")) == "network" {
			charts = append(charts, fig)
		}
	}
	if len(charts) != 3 { // throughput set, throughput get, sessions read
		t.Fatalf("%d latency-against-RTT charts, want 3", len(charts))
	}
	points := 0
	for i := range r.Cells {
		c := &r.Cells[i]
		rtt, ok := c.Params["rtt_ms"].(float64)
		if !ok {
			continue
		}
		for _, p := range c.Phases {
			if c.Workload == "sessions" && p.Name != "read" {
				continue
			}
			found := false
			for _, fig := range charts {
				for _, s := range findAll(fig, withAttr("data-series")) {
					if v, _ := attr(s, "data-series"); v != c.Target || !strings.Contains(text(fig.FirstChild), c.Workload+" "+p.Name) {
						continue
					}
					for _, pt := range findAll(s, withAttr("data-x")) {
						x, _ := attr(pt, "data-x")
						y, _ := attr(pt, "data-y")
						found = found || x == exact(rtt) && y == exact(p.LatencyUs.P50)
					}
				}
			}
			if !found {
				t.Errorf("%s %s: no point at rtt %v ms, p50 %v µs", c.Label(), p.Name, rtt, p.LatencyUs.P50)
			}
			points++
		}
	}
	if points == 0 {
		t.Fatal("the sample has no cell with an rtt")
	}
	markdownHas(t, md, "## Network: latency against round-trip time", "| rtt | measured ms | postgres | redis | spread µs | spread/rtt |", "network mechanism:")
	modelTablesIn(t, r, md)
}

// TestSectionsInCSV: the CSV has the workload sections' table figures as
// cell-level metrics (phase empty), equal to the result's.
func TestSectionsInCSV(t *testing.T) {
	for _, suite := range []string{"payments", "sessions", "durability"} {
		t.Run(suite, func(t *testing.T) {
			r := readSuiteSample(t, suite)
			rows := csvRows(t, r)
			got := map[string]string{} // cell id + metric -> value, cell-level rows only
			for _, row := range rows[1:] {
				if row[8] == "" {
					got[row[1]+" "+row[9]] = row[10]
				}
			}
			checked := 0
			for i := range r.Cells {
				c := &r.Cells[i]
				want := map[string]float64{}
				if s := c.Payments; s != nil {
					want["payments_committed"], want["payments_retries"], want["payments_deletes"] = float64(s.Committed), float64(s.Retries), float64(s.Deletes)
					want["payments_invariants_ok"] = map[bool]float64{true: 1}[s.Invariants.OK]
				}
				if s := c.Durability; s != nil {
					want["durability_acked"], want["durability_lost_max"], want["durability_window_max_s"] = float64(s.Acked), float64(s.LostMax), s.WindowMaxS
				}
				if s := c.Sessions; s != nil && s.Counters != nil && s.Figures != nil {
					want["sessions_stale"], want["sessions_lost"] = float64(s.Counters.Stale), float64(s.Counters.Lost)
					if s.Figures.HOTRatio != nil {
						want["sessions_hot_ratio"] = *s.Figures.HOTRatio
					}
				}
				for m, v := range want {
					if g, ok := got[c.ID+" "+m]; !ok || g != exact(v) {
						t.Errorf("%s %s: CSV has %q, result %v", c.ID, m, g, v)
					}
					checked++
				}
			}
			if checked == 0 {
				t.Error("no figure checked")
			}
		})
	}
}

// markdownHas fails the test for each of wants that md lacks.
func markdownHas(t *testing.T, md string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
}

// csvRows is r's CSV report, read back, header included.
func csvRows(t *testing.T, r *result.Result) [][]string {
	t.Helper()
	var b bytes.Buffer
	if err := CSV(&b, r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestSuiteArticlesMatchSamples: a suite's article figures travel in its
// file into result.json, so each sample result carries exactly the article
// its suite file states today (sessions' × unlogged ratios included).
func TestSuiteArticlesMatchSamples(t *testing.T) {
	for _, suite := range suiteSamples {
		t.Run(suite, func(t *testing.T) {
			src, ok := suites.Open(suite)
			if !ok {
				t.Fatalf("no built-in suite %s", suite)
			}
			s, err := scenario.Parse(suite+".yaml", bytes.NewReader(src))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := readSuiteSample(t, suite).Article, s.Article; !reflect.DeepEqual(got, want) {
				t.Errorf("the sample's article differs from suites/%s.yaml's:\n got %+v\nwant %+v", suite, got, want)
			}
		})
	}
}

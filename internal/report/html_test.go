package report

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/net/html"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
)

// ---- a small DOM toolkit over golang.org/x/net/html ----------------------------

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func hasClass(n *html.Node, class string) bool {
	v, _ := attr(n, "class")
	for _, c := range strings.Fields(v) {
		if c == class {
			return true
		}
	}
	return false
}

// findAll returns the element nodes under n (n included) that match.
func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func tag(name string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Data == name }
}

func withAttr(key string) func(*html.Node) bool {
	return func(n *html.Node) bool { _, ok := attr(n, key); return ok }
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.TrimSpace(b.String())
}

// ancestor returns the nearest ancestor of n with the tag name.
func ancestor(n *html.Node, name string) *html.Node {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && p.Data == name {
			return p
		}
	}
	return nil
}

// htmlDoc is the HTML report of r, parsed.
func htmlDoc(t *testing.T, r *result.Result) *html.Node {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(&b)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func renderSample(t *testing.T) (*result.Result, []byte, *html.Node) {
	t.Helper()
	r := readSample(t)
	var b bytes.Buffer
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return r, b.Bytes(), doc
}

// ---- no network -------------------------------------------------------------

var (
	cssURL    = regexp.MustCompile(`(?i)url\(\s*['"]?\s*([^'")\s]*)`)
	cssImport = regexp.MustCompile(`(?i)@import`)
	// urlAttrs are the attributes through which a page can load something.
	urlAttrs = map[string]bool{"src": true, "href": true, "xlink:href": true, "srcset": true, "action": true, "formaction": true,
		"poster": true, "data": true, "background": true, "manifest": true, "ping": true, "codebase": true, "cite": true}
)

// externalRefs lists every reference of the page to anything but itself:
// URL attributes that are not in-page fragments, CSS url() that is not a
// fragment, @import, and elements that load content.
func externalRefs(doc *html.Node) []string {
	var out []string
	for _, n := range findAll(doc, func(*html.Node) bool { return true }) {
		switch n.Data {
		case "link", "iframe", "object", "embed", "img", "video", "audio", "source", "base", "image", "use":
			if n.Data != "use" {
				out = append(out, "<"+n.Data+"> element")
			}
		}
		for _, a := range n.Attr {
			key := strings.ToLower(a.Key)
			if a.Namespace != "" {
				key = a.Namespace + ":" + key
			}
			if urlAttrs[key] || strings.HasSuffix(key, ":href") {
				if !strings.HasPrefix(strings.TrimSpace(a.Val), "#") {
					out = append(out, fmt.Sprintf("<%s %s=%q>", n.Data, a.Key, a.Val))
				}
			}
			if key == "style" {
				out = append(out, cssRefs(a.Val)...)
			}
		}
		if n.Data == "style" {
			out = append(out, cssRefs(text(n))...)
		}
		if n.Data == "script" {
			s := text(n)
			for _, bad := range []string{"fetch(", "XMLHttpRequest", "import(", "WebSocket", "EventSource", "http://", "https://"} {
				if strings.Contains(s, bad) {
					out = append(out, "script uses "+bad)
				}
			}
		}
	}
	return out
}

func cssRefs(css string) []string {
	var out []string
	for _, m := range cssURL.FindAllStringSubmatch(css, -1) {
		if !strings.HasPrefix(m[1], "#") {
			out = append(out, "css url("+m[1]+")")
		}
	}
	if cssImport.MatchString(css) {
		out = append(out, "css @import")
	}
	return out
}

func TestHTMLLoadsNothing(t *testing.T) {
	_, page, doc := renderSample(t)
	for _, ref := range externalRefs(doc) {
		t.Errorf("the page references something outside itself: %s", ref)
	}
	if bytes.Contains(page, []byte("https://")) {
		i := bytes.Index(page, []byte("https://"))
		t.Errorf("the page contains an https URL: …%s…", page[max(0, i-60):min(len(page), i+60)])
	}
	// The check itself must catch each way of loading something.
	for _, bad := range []string{
		`<img src="https://example.com/x.png">`,
		`<script src="http://cdn.example.com/lib.js"></script>`,
		`<link rel="stylesheet" href="//fonts.example.com/a.css">`,
		`<style>@import url(https://fonts.example.com/a.css);</style>`,
		`<div style="background: url('http://example.com/bg.png')"></div>`,
		`<svg><image href="https://example.com/x.svg"/></svg>`,
		`<script>fetch("/x")</script>`,
	} {
		d, err := html.Parse(strings.NewReader(strings.Replace(string(page), "</body>", bad+"</body>", 1)))
		if err != nil {
			t.Fatal(err)
		}
		if len(externalRefs(d)) == 0 {
			t.Errorf("the check misses %s", bad)
		}
	}
}

// ---- every chart, with its data --------------------------------------------

// figureOf finds the chart figure of a kind for a workload and phase.
func figureOf(t *testing.T, doc *html.Node, kind, workload, phase string) *html.Node {
	t.Helper()
	for _, f := range findAll(doc, tag("figure")) {
		k, _ := attr(f, "data-chart")
		w, _ := attr(f, "data-workload")
		p, _ := attr(f, "data-phase")
		if k == kind && w == workload && p == phase {
			return f
		}
	}
	t.Errorf("no %s chart for %s %s", kind, workload, phase)
	return nil
}

func floatAttr(t *testing.T, n *html.Node, key string) float64 {
	t.Helper()
	v, ok := attr(n, key)
	if !ok {
		t.Fatalf("<%s> has no %s", n.Data, key)
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("<%s %s=%q>: %v", n.Data, key, v, err)
	}
	return f
}

// checkSVG checks that a figure has an accessible SVG drawing.
func checkSVG(t *testing.T, fig *html.Node) *html.Node {
	t.Helper()
	svgs := findAll(fig, func(n *html.Node) bool { return n.Data == "svg" && hasClass(n, "plot") })
	if len(svgs) != 1 {
		t.Fatalf("figure %s: %d charts, want 1", idOf(fig), len(svgs))
	}
	svg := svgs[0]
	if role, _ := attr(svg, "role"); role != "img" {
		t.Errorf("figure %s: svg role %q, want img", idOf(fig), role)
	}
	for _, want := range []string{"title", "desc"} {
		els := findAll(svg, tag(want))
		if len(els) == 0 || els[0].Parent != svg || text(els[0]) == "" {
			t.Errorf("figure %s: svg has no %s of its own", idOf(fig), want)
		}
	}
	return svg
}

func idOf(n *html.Node) string { v, _ := attr(n, "id"); return v }

// phaseOfJSON finds the cell's phase in the result.
func phaseOfJSON(t *testing.T, r *result.Result, cellID, phase string) *metrics.Phase {
	t.Helper()
	for i := range r.Cells {
		if r.Cells[i].ID == cellID {
			for j := range r.Cells[i].Phases {
				if r.Cells[i].Phases[j].Name == phase {
					return &r.Cells[i].Phases[j]
				}
			}
		}
	}
	t.Fatalf("no phase %s of cell %s in the result", phase, cellID)
	return nil
}

func latencyField(l metrics.Latency, m string) (float64, bool) {
	switch m {
	case "p50":
		return l.P50, true
	case "p90":
		return l.P90, true
	case "p99":
		return l.P99, true
	case "p999":
		return l.P999, true
	case "max":
		return l.Max, true
	case "mean":
		return l.Mean, true
	case "stddev":
		return l.Stddev, true
	}
	return 0, false
}

// phaseField is what a data-m names in the result file.
func phaseField(p *metrics.Phase, m string) (float64, bool) {
	if v, ok := latencyField(p.LatencyUs, m); ok {
		return v, true
	}
	var errs int64
	for _, n := range p.Errors {
		errs += n
	}
	switch m {
	case "ops":
		return float64(p.Ops), true
	case "errors":
		return float64(errs), true
	case "ops_s":
		return p.ThroughputOpsS, true
	case "duration_ms":
		return p.DurationS * 1000, true
	case "client_cpu_us_per_op":
		return p.ClientCPUUsPerOp, true
	}
	if p.Server != nil {
		switch m {
		case "server_cpu_us_per_op":
			return p.Server.CPUUsPerOp, true
		case "server_write_bytes_per_op":
			return p.Server.WritePerOp, true
		case "server_peak_rss_mib":
			return float64(p.Server.PeakRSSBytes) / (1 << 20), true
		}
	}
	return 0, false
}

func decode(t *testing.T, p *metrics.Phase) *hdr.Histogram {
	t.Helper()
	h, err := hdr.Decode([]byte(p.Histogram))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// secondRate is ops in a second over the second's length (the last is partial).
func secondRate(p *metrics.Phase, s metrics.Second) float64 {
	length := 1.0
	if rest := p.DurationS - float64(s.T); rest > 0 && rest < 1 {
		length = rest
	}
	return float64(s.Ops) / length
}

// TestHTMLCharts checks that every chart the result calls for is there, as
// an accessible SVG whose data points are the result's numbers.
func TestHTMLCharts(t *testing.T) {
	r, _, doc := renderSample(t)
	charts := 0

	// The kv sweep: one line per target, one point per key count.
	for _, phase := range []string{"write", "read"} {
		fig := figureOf(t, doc, "sweep", "kv", phase)
		if fig == nil {
			continue
		}
		charts++
		svg := checkSVG(t, fig)
		want := map[string]map[float64]float64{}
		for _, c := range r.Cells {
			if p, ok := c.Phase(phase); ok && c.Workload == "kv" {
				if want[c.Target] == nil {
					want[c.Target] = map[float64]float64{}
				}
				want[c.Target][c.Params["keys"].(float64)] = p.DurationS * 1000
			}
		}
		series := findAll(svg, func(n *html.Node) bool { return hasClass(n, "series") })
		if len(series) != len(want) {
			t.Errorf("sweep %s: %d lines, want one per target: %d", phase, len(series), len(want))
		}
		for _, s := range series {
			target, _ := attr(s, "data-series")
			pts := findAll(s, withAttr("data-x"))
			if len(pts) != len(want[target]) {
				t.Errorf("sweep %s %s: %d points, want %d", phase, target, len(pts), len(want[target]))
			}
			for _, pt := range pts {
				x, y := floatAttr(t, pt, "data-x"), floatAttr(t, pt, "data-y")
				if w, ok := want[target][x]; !ok || w != y {
					t.Errorf("sweep %s %s at %v keys: %v ms, the result says %v", phase, target, x, y, w)
				}
			}
		}
	}

	for _, phase := range []string{"write", "read"} {
		var cells []string
		var long []string
		for _, c := range r.Cells {
			if p, ok := c.Phase(phase); ok {
				cells = append(cells, c.ID)
				if p.DurationS >= 3 && len(p.Series) >= 3 {
					long = append(long, c.ID)
				}
			}
		}

		// Latency percentiles: a marker per cell and percentile.
		if fig := figureOf(t, doc, "latency", "kv", phase); fig != nil {
			charts++
			svg := checkSVG(t, fig)
			seen := map[string]int{}
			for _, pt := range findAll(svg, withAttr("data-m")) {
				cell, _ := attr(pt, "data-cell")
				m, _ := attr(pt, "data-m")
				want, ok := latencyField(phaseOfJSON(t, r, cell, phase).LatencyUs, m)
				if got := floatAttr(t, pt, "data-v"); !ok || got != want {
					t.Errorf("latency %s %s %s: %v, the result says %v", phase, cell, m, got, want)
				}
				seen[cell]++
			}
			for _, c := range cells {
				if seen[c] != 5 {
					t.Errorf("latency %s: %d markers for %s, want p50 p90 p99 p99.9 max", phase, seen[c], c)
				}
			}
		}

		// Throughput: a bar per cell.
		if fig := figureOf(t, doc, "throughput", "kv", phase); fig != nil {
			charts++
			svg := checkSVG(t, fig)
			bars := findAll(svg, func(n *html.Node) bool { return n.Data == "rect" && hasClass(n, "bar") })
			if len(bars) != len(cells) {
				t.Errorf("throughput %s: %d bars, want %d", phase, len(bars), len(cells))
			}
			for _, b := range bars {
				cell, _ := attr(b, "data-cell")
				if got, want := floatAttr(t, b, "data-v"), phaseOfJSON(t, r, cell, phase).ThroughputOpsS; got != want {
					t.Errorf("throughput %s %s: %v, the result says %v", phase, cell, got, want)
				}
			}
		}

		// Percentile spectrum: a line per cell, from the decoded histogram.
		if fig := figureOf(t, doc, "spectrum", "kv", phase); fig != nil {
			charts++
			svg := checkSVG(t, fig)
			series := findAll(svg, func(n *html.Node) bool { return hasClass(n, "series") })
			if len(series) != len(cells) {
				t.Errorf("spectrum %s: %d lines, want %d", phase, len(series), len(cells))
			}
			for _, s := range series {
				cell, _ := attr(s, "data-series")
				p := phaseOfJSON(t, r, cell, phase)
				h := decode(t, p)
				pts := findAll(s, withAttr("data-x"))
				if len(pts) < 20 {
					t.Errorf("spectrum %s %s: %d points", phase, cell, len(pts))
				}
				for _, pt := range pts {
					x, y, q := floatAttr(t, pt, "data-x"), floatAttr(t, pt, "data-y"), floatAttr(t, pt, "data-q")
					if want := float64(h.ValueAtPercentile(math.Max(q, 1e-9))) / 1e3; y != want {
						t.Errorf("spectrum %s %s at %.4g%%: %v µs, the histogram says %v", phase, cell, q, y, want)
					}
					if q < 100 && math.Abs(-math.Log10(1-q/100)-x) > 1e-9 {
						t.Errorf("spectrum %s %s: %v%% drawn at %v nines", phase, cell, q, x)
					}
				}
				// A line runs to the sample's largest value, or to 99.999%.
				if q := floatAttr(t, pts[len(pts)-1], "data-q"); q != 100 && q < 99.999 {
					t.Errorf("spectrum %s %s ends at %v%%", phase, cell, q)
				}
				if y := floatAttr(t, pts[len(pts)-1], "data-y"); h.TotalCount() < 50000 && y != float64(h.ValueAtPercentile(100))/1e3 {
					t.Errorf("spectrum %s %s ends at %v µs, not at the histogram's max %v", phase, cell, y, float64(h.ValueAtPercentile(100))/1e3)
				}
			}
		}

		// Over time: only cells whose phase has 3 seconds or more.
		if len(long) > 0 {
			fig := figureOf(t, doc, "time", "kv", phase)
			if fig == nil {
				continue
			}
			charts++
			svg := checkSVG(t, fig)
			got := map[string]int{}
			for _, s := range findAll(svg, func(n *html.Node) bool { return hasClass(n, "series") }) {
				cell, _ := attr(s, "data-series")
				m, _ := attr(s, "data-m")
				p := phaseOfJSON(t, r, cell, phase)
				pts := findAll(s, withAttr("data-x"))
				if len(pts) != len(p.Series) {
					t.Errorf("time %s %s %s: %d points, want %d seconds", phase, cell, m, len(pts), len(p.Series))
					continue
				}
				for i, pt := range pts {
					sec := p.Series[i]
					want := sec.P99
					if m == "ops_s" {
						want = secondRate(p, sec)
					}
					if x, y := floatAttr(t, pt, "data-x"), floatAttr(t, pt, "data-y"); x != float64(sec.T)+0.5 || y != want {
						t.Errorf("time %s %s %s second %d: (%v, %v), the result says (%v, %v)", phase, cell, m, sec.T, x, y, float64(sec.T)+0.5, want)
					}
				}
				got[cell]++
			}
			for _, c := range long {
				if got[c] != 2 {
					t.Errorf("time %s: %s has %d lines, want ops/s and p99", phase, c, got[c])
				}
			}
			if len(got) != len(long) {
				t.Errorf("time %s: lines for %d cells, want the %d with 3 s or more", phase, len(got), len(long))
			}
		} else if findAllCharts(doc, "time", phase) > 0 {
			t.Errorf("time %s: a chart although no phase ran 3 s", phase)
		}
	}
	if all := findAll(doc, func(n *html.Node) bool { return n.Data == "figure" && hasClass(n, "chart") }); len(all) != charts {
		t.Errorf("%d charts on the page, %d checked", len(all), charts)
	}
	if charts < 9 {
		t.Errorf("only %d charts", charts)
	}
}

func findAllCharts(doc *html.Node, kind, phase string) int {
	n := 0
	for _, f := range findAll(doc, tag("figure")) {
		k, _ := attr(f, "data-chart")
		p, _ := attr(f, "data-phase")
		if k == kind && p == phase {
			n++
		}
	}
	return n
}

// ---- the tables under the charts ---------------------------------------------

var displayNumber = regexp.MustCompile(`^-?[0-9][0-9,]*(\.[0-9]+)?`)

// checkShown checks that a cell's text shows its data-v to the precision printed.
func checkShown(t *testing.T, where string, td *html.Node, v float64) {
	t.Helper()
	s := text(td)
	m := displayNumber.FindString(s)
	if m == "" {
		t.Errorf("%s: %q is not a number", where, s)
		return
	}
	shown, err := strconv.ParseFloat(strings.ReplaceAll(m, ",", ""), 64)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(shown-v) > 0.005*math.Abs(v)+1e-9 && math.Abs(shown-v) > 0.5 {
		t.Errorf("%s: shows %q for %v", where, s, v)
	}
}

// TestHTMLTables checks every number in every table of the page against the
// result file: each figure's table, the cells table.
func TestHTMLTables(t *testing.T) {
	r, _, doc := renderSample(t)
	checked := 0
	for _, table := range findAll(doc, withAttr("data-table")) {
		kind, _ := attr(table, "data-table")
		if len(findAll(table, tag("thead"))) == 0 && kind != "environment" {
			t.Errorf("table %s has no header row", kind)
		}
		if kind == "environment" || kind == "settings" {
			continue
		}
		fig := ancestor(table, "figure")
		phase := ""
		if fig != nil {
			phase, _ = attr(fig, "data-phase")
		} else if kind != "cells" {
			t.Errorf("table %s is not under a chart", kind)
		}
		for _, tr := range findAll(table, tag("tr")) {
			if ancestor(tr, "thead") != nil {
				continue
			}
			if len(findAll(tr, func(n *html.Node) bool { return n.Data == "th" })) == 0 {
				t.Errorf("table %s: a row has no header cell", kind)
			}
			cell, _ := attr(tr, "data-cell")
			if kind == "cells" {
				phase, _ = attr(tr, "data-phase")
			}
			for _, td := range findAll(tr, withAttr("data-v")) {
				got := floatAttr(t, td, "data-v")
				m, _ := attr(td, "data-m")
				where := fmt.Sprintf("table %s %s %s %s", kind, cell, phase, m)
				var want float64
				var ok bool
				switch kind {
				case "sweep":
					target, _ := attr(tr, "data-target")
					if k, has := attr(td, "data-keys"); has {
						where = fmt.Sprintf("table sweep %s %s keys=%s", phase, target, k)
						want = phaseOfJSON(t, r, target+"/kv/keys="+k, phase).DurationS * 1000
						ok = true
					} else if m == "ops_s" {
						// ops/s at the largest key count of the target.
						var best float64
						for _, c := range r.Cells {
							if c.Target == target && c.Workload == "kv" && c.Params["keys"].(float64) >= best {
								best = c.Params["keys"].(float64)
								p, _ := c.Phase(phase)
								want, ok = p.ThroughputOpsS, true
							}
						}
					}
				case "spectrum":
					h := decode(t, phaseOfJSON(t, r, cell, phase))
					qs := map[string]float64{"p50": 50, "p90": 90, "p99": 99, "p999": 99.9, "p9999": 99.99, "p99999": 99.999, "p100": 100}
					if m == "count" {
						want, ok = float64(h.TotalCount()), true
					} else if q, has := qs[m]; has {
						want, ok = float64(h.ValueAtPercentile(q))/1e3, true
						// The histogram's percentiles are the run's own.
						if jv, has := latencyField(phaseOfJSON(t, r, cell, phase).LatencyUs, m); has && jv != want {
							t.Errorf("%s: histogram gives %v, latency_us says %v", where, want, jv)
						}
					}
				case "time":
					p := phaseOfJSON(t, r, cell, phase)
					sec, _ := attr(tr, "data-t")
					i, _ := strconv.Atoi(sec)
					s := p.Series[i]
					where += " second " + sec
					switch m {
					case "t":
						want, ok = float64(s.T), true
					case "ops":
						want, ok = float64(s.Ops), true
					case "ops_s":
						want, ok = secondRate(p, s), true
					case "errors":
						want, ok = float64(s.Errors), true
					case "p50":
						want, ok = s.P50, true
					case "p99":
						want, ok = s.P99, true
					case "max":
						want, ok = s.Max, true
					}
				default: // latency, throughput, cells
					want, ok = phaseField(phaseOfJSON(t, r, cell, phase), m)
				}
				if !ok {
					t.Errorf("%s: unknown figure", where)
					continue
				}
				if got != want {
					t.Errorf("%s: %v, the result says %v", where, got, want)
				}
				if m != "errors" || kind == "time" {
					checkShown(t, where, td, want)
				}
				checked++
			}
		}
	}
	// 12 cells × 2 phases: latency 7 + throughput 4 + spectrum 8 + cells 13(+3 server) figures each.
	if checked < 24*30 {
		t.Errorf("only %d numbers checked", checked)
	}
}

// TestHTMLSetup checks the collapsible environment and settings: every
// target's version, durability and every effective setting is on the page.
func TestHTMLSetup(t *testing.T) {
	r, _, doc := renderSample(t)
	details := findAll(doc, tag("details"))
	if len(details) < len(r.Targets)+1 {
		t.Fatalf("%d <details>, want environment + %d targets", len(details), len(r.Targets))
	}
	env := text(details[0])
	for _, want := range []string{r.Environment.CPUModel, r.Environment.OS, r.Environment.Kernel, r.Storebench.Version, r.ID} {
		if !strings.Contains(env, want) {
			t.Errorf("environment section does not say %q", want)
		}
	}
	for _, tg := range r.Targets {
		var d *html.Node
		for _, n := range details {
			if v, _ := attr(n, "data-target"); v == tg.Name {
				d = n
			}
		}
		if d == nil {
			t.Errorf("no settings section for %s", tg.Name)
			continue
		}
		body := text(d)
		for _, want := range []string{tg.Version, tg.Durability} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: section does not say %q", tg.Name, want)
			}
		}
		for k, v := range tg.Settings {
			if !strings.Contains(body, k) || !strings.Contains(body, v) {
				t.Errorf("%s: setting %s = %q missing", tg.Name, k, v)
			}
		}
	}
	// The durability of every target is also visible without opening anything.
	summary := text(findAll(doc, func(n *html.Node) bool { return n.Data == "table" && hasClass(n, "targets") })[0])
	for _, tg := range r.Targets {
		if !strings.Contains(summary, tg.Durability) {
			t.Errorf("targets table does not say %s's durability", tg.Name)
		}
	}
}

// withArticleAndServerTime is the sample with what newer results carry: the
// article a suite reproduces, and the server's own time for two phases.
func withArticleAndServerTime(t *testing.T) *result.Result {
	t.Helper()
	r := readSample(t)
	v := func(f float64) *float64 { return &f }
	r.Article = &result.Article{
		Title: "PostgreSQL vs Redis vs Memcached <performance>", URL: "https://www.example.com/article", Setup: "a laptop",
		Differences: []string{"their client is Python"},
		Tables: []result.ArticleTable{{
			Title: "Write operation", Metric: "total_ms", Unit: "ms", Workload: "kv", Phase: "write", Param: "keys",
			Columns: []string{"1000", "10000"},
			Rows: []result.ArticleRow{
				{Label: "Redis (v3.0.7)", Target: "redis", Values: []*float64{v(34), v(214)}},
				{Label: "PostgreSQL (v13.3)", Target: "postgres", Values: []*float64{v(29.6), nil}},
			},
		}},
	}
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Target == "postgres" || c.Target == "redis" {
			p := &c.Phases[0]
			p.ServerTime = &metrics.ServerTimeSummary{Source: c.Target + " counters", Calls: p.Ops, MeanUs: p.LatencyUs.Mean / 3,
				PerCallUs: p.LatencyUs.Mean / 3, ClientOverheadUs: p.LatencyUs.Mean * 2 / 3}
		}
	}
	return r
}

// TestHTMLArticleAndServerTime: the article's figures beside ours, and the
// client vs server time, each as a chart over the table of its numbers.
func TestHTMLArticleAndServerTime(t *testing.T) {
	r := withArticleAndServerTime(t)
	doc := htmlDoc(t, r)
	for _, ref := range externalRefs(doc) {
		t.Errorf("the page references something outside itself: %s", ref)
	}
	// The article: its figures as given, ours from the cells.
	fig := figureOf(t, doc, "article", "", "")
	if fig == nil {
		t.FailNow()
	}
	checkSVG(t, fig)
	if n := len(findAll(fig, func(n *html.Node) bool { return hasClass(n, "series") })); n != 4 {
		t.Errorf("article chart: %d lines, want 4 (2 rows × article, ours) less the empty", n)
	}
	got := 0
	for _, td := range findAll(fig, withAttr("data-v")) {
		tr := ancestor(td, "tr")
		target, _ := attr(tr, "data-target")
		col, _ := attr(td, "data-col")
		src, _ := attr(td, "data-source")
		var want float64
		if src == "ours" {
			want = phaseOfJSON(t, r, target+"/kv/keys="+col, "write").DurationS * 1000
		} else {
			for _, row := range r.Article.Tables[0].Rows {
				for j, c := range r.Article.Tables[0].Columns {
					if row.Target == target && c == col {
						want = *row.Values[j]
					}
				}
			}
		}
		if v := floatAttr(t, td, "data-v"); v != want {
			t.Errorf("article %s %s %s: %v, want %v", target, col, src, v, want)
		}
		checkShown(t, "article", td, want)
		got++
	}
	if got != 7 {
		t.Errorf("article table: %d figures, want 7 (one article figure is null)", got)
	}
	if !strings.Contains(text(doc), "PostgreSQL vs Redis vs Memcached <performance>") || !strings.Contains(text(doc), "their client is Python") {
		t.Error("the article's title or differences are missing")
	}
	// Server time.
	fig = figureOf(t, doc, "servertime", "kv", "write")
	if fig == nil {
		t.FailNow()
	}
	checkSVG(t, fig)
	rows := 0
	for _, tr := range findAll(fig, withAttr("data-cell")) {
		if tr.Data != "tr" {
			continue
		}
		cell, _ := attr(tr, "data-cell")
		p := phaseOfJSON(t, r, cell, "write")
		for _, td := range findAll(tr, withAttr("data-v")) {
			m, _ := attr(td, "data-m")
			want := map[string]float64{"server_calls": float64(p.ServerTime.Calls), "mean": p.LatencyUs.Mean,
				"server_per_call": p.ServerTime.PerCallUs, "client_overhead": p.ServerTime.ClientOverheadUs}[m]
			if v := floatAttr(t, td, "data-v"); v != want {
				t.Errorf("server time %s %s: %v, want %v", cell, m, v, want)
			}
		}
		rows++
	}
	if rows != 4 {
		t.Errorf("server time table: %d rows, want 4", rows)
	}
	if findAllCharts(doc, "servertime", "read") != 0 {
		t.Error("a server time chart for a phase without server time")
	}
}

// TestReportsOfABadRun: a run with a failed cell, a phase with only errors
// and no environment renders in every format, and says what failed.
func TestReportsOfABadRun(t *testing.T) {
	r := &result.Result{Schema: result.Schema, ID: "bad", Status: result.StatusFailed, Cells: []result.Cell{
		{ID: "redis/kv/keys=10", Target: "redis", Workload: "kv", Status: result.CellFailed, Error: "connection refused"},
		{ID: "files/kv/keys=10", Target: "files", Workload: "kv", Status: result.CellFailed, Error: "3 reads did not return what was written",
			Params: map[string]any{"keys": float64(10)},
			Phases: []metrics.Phase{{Name: "read", Ops: 10, DurationS: 0.001, ThroughputOpsS: 10000, Errors: map[string]int64{"mismatch": 3, "other": 7},
				ErrorSamples: []string{"key k1: wrong value"}}}},
	}}
	for name, render := range map[string]func(*bytes.Buffer) error{
		"html": func(b *bytes.Buffer) error { return HTML(b, r) },
		"md":   func(b *bytes.Buffer) error { return Markdown(b, r) },
		"csv":  func(b *bytes.Buffer) error { return CSV(b, r) },
		"text": func(b *bytes.Buffer) error { Text(b, r); return nil },
	} {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, want := range []string{"redis/kv/keys=10", "files/kv/keys=10", "failed"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s does not say %q", name, want)
			}
		}
		if name != "csv" && !strings.Contains(b.String(), "connection refused") {
			t.Errorf("%s does not give the cell's error", name)
		}
		if name == "html" {
			doc, err := html.Parse(&b)
			if err != nil {
				t.Fatal(err)
			}
			if refs := externalRefs(doc); len(refs) > 0 {
				t.Errorf("html refers outside: %v", refs)
			}
			if !strings.Contains(text(doc), "key k1: wrong value") {
				t.Error("html lacks the error sample")
			}
		}
	}
}

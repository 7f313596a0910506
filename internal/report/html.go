package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
)

//go:embed assets/report.css
var reportCSS string

//go:embed assets/report.js
var reportJS string

// HTML writes the result as one self-contained page: inline SVG charts, each
// followed by the table of its numbers, then every cell, then the
// environment and each target's version, effective settings and durability.
// The page loads nothing: no script, style, font or image from anywhere.
//
// Charts are drawn per workload and phase from the cells' phases, so any
// workload gets latency percentiles, throughput, the percentile spectrum and
// (for phases of 3 s or more) throughput and p99 over time; kv results also
// get the key-count sweep.
//
// Every chart is a <figure class="chart" data-chart=KIND> holding an
// <svg> with <title> and <desc> and a <table>; data points and table cells
// carry their exact value in data-v (data-x/data-y for line points), so the
// page can be checked against the result file.
func HTML(w io.Writer, r *result.Result) error {
	p := &page{m: newModel(r)}
	p.render()
	_, err := io.WriteString(w, p.b.String())
	return err
}

type page struct {
	b strings.Builder
	m *model
}

func (p *page) f(format string, a ...any) { fmt.Fprintf(&p.b, format, a...) }
func (p *page) s(s string)                { p.b.WriteString(s) }

func (p *page) render() {
	r := p.m.r
	p.s("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	p.s(`<meta name="viewport" content="width=device-width, initial-scale=1">` + "\n")
	p.s(`<meta name="color-scheme" content="light dark">` + "\n")
	p.f("<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n", esc(p.title()), reportCSS)
	p.header()
	p.s("<main>\n")
	p.targetsSummary()
	p.articleSection()
	p.coordinatedSection()
	for _, s := range p.m.sections {
		s.write(htmlOut{p})
	}
	for _, s := range kvSweeps(r, "write", "read") {
		p.sweepSection(s)
	}
	for i := range p.m.groups {
		p.groupSection(&p.m.groups[i])
	}
	p.cellsSection()
	p.byOpSection()
	p.setupSection()
	p.s("</main>\n")
	p.f("<footer>Rendered by storebench from result.json (%s, run %s). Every figure on this page comes from that file; the page loads nothing from the network.</footer>\n",
		esc(r.Schema), esc(r.ID))
	p.f("<script>\n%s</script>\n</body>\n</html>\n", reportJS)
}

func (p *page) title() string { return p.m.title() }

// scenarioName reads the scenario's name from the result's copy of it.
func scenarioName(r *result.Result) string {
	if m, ok := r.Scenario.(map[string]any); ok {
		if s, ok := m["name"].(string); ok {
			return s
		}
	}
	return ""
}

func (p *page) header() {
	r := p.m.r
	p.s("<header>\n")
	p.f("<h1>%s</h1>\n", esc(p.title()))
	took := ""
	if r.FinishedAt != nil {
		took = " · took <b>" + esc(durationText(r.FinishedAt.Sub(r.StartedAt).Seconds())) + "</b>"
	}
	p.f(`<p class="meta">status <b class="status-%s">%s</b> · started %s%s · %d cells · seed %d</p>`+"\n",
		esc(r.Status), esc(r.Status), esc(r.StartedAt.UTC().Format("2006-01-02 15:04:05 MST")), took, len(r.Cells), r.Seed)
	p.f("<p class=\"meta\">%s</p>\n", esc(strings.Join(environmentLine(r), " · ")))
	if len(r.Command) > 0 {
		p.f("<p class=\"meta\"><code>%s</code></p>\n", esc(strings.Join(r.Command, " ")))
	}
	if n := RepeatNote(r); n != "" {
		p.f("<p class=\"meta\">%s</p>\n", esc(n))
	}
	p.s(`<nav class="toc" aria-label="sections">`)
	p.s(`<a href="#targets">targets</a>`)
	if r.Article != nil {
		p.s(`<a href="#article">the article</a>`)
	}
	if rows, _ := coordinated(r); len(rows) > 0 {
		p.f(`<a href="#%s">coordinated omission</a>`, coordinatedID)
	}
	for _, s := range p.m.sections {
		p.f(`<a href="#%s">%s</a>`, esc(s.id), esc(s.nav))
	}
	for _, s := range kvSweeps(r, "write", "read") {
		p.f(`<a href="#%s">%s sweep</a>`, esc(sweepID(s)), esc(s.name))
	}
	for _, g := range p.m.groups {
		p.f(`<a href="#%s">%s</a>`, esc(groupID(&g)), esc(g.workload+" · "+g.phase))
	}
	p.s(`<a href="#cells">all cells</a>`)
	if len(byOpRows(r)) > 0 {
		p.s(`<a href="#by-op">by operation</a>`)
	}
	p.s(`<a href="#setup">environment and settings</a></nav>` + "\n")
	p.s("</header>\n")
}

func plural(n int, word string) string {
	if n == 0 {
		return ""
	}
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func memText(b uint64) string {
	if b == 0 {
		return ""
	}
	return bytesIEC(b) + " memory"
}

// targetsSummary is always visible: what each store is and what a crash loses.
func (p *page) targetsSummary() {
	r := p.m.r
	p.s(`<section id="targets"><h2>Targets</h2>` + "\n")
	p.s(`<p class="lede">Compare like with like: the durability column says what a crash of each target would lose. Effective settings are under <a href="#setup">environment and settings</a>.</p>` + "\n")
	p.s(`<div class="table-wrap"><table class="targets"><thead><tr><th scope="col">target</th><th scope="col" class="l">version</th><th scope="col" class="l">where</th><th scope="col" class="l">durability (what a crash loses)</th></tr></thead><tbody>` + "\n")
	for _, t := range r.Targets {
		p.f(`<tr><th scope="row"><span class="swatch-dot c%d"></span>%s</th><td class="l">%s</td><td class="l wrap">%s</td><td class="l wrap">%s</td></tr>`+"\n",
			p.m.colorOf[t.Name]%paletteSize, esc(t.Name), esc(t.Version), esc(where(t)), esc(t.Durability))
	}
	p.s("</tbody></table></div>\n")
	if len(r.Skipped) > 0 {
		p.s(`<ul class="notes">`)
		for _, s := range r.Skipped {
			p.f("<li>skipped <b>%s</b>: %s</li>", esc(s.Target), esc(s.Reason))
		}
		p.s("</ul>\n")
	}
	if len(r.Notes) > 0 {
		p.s(`<ul class="notes">`)
		for _, n := range r.Notes {
			p.f("<li>%s</li>", esc(n))
		}
		p.s("</ul>\n")
	}
	p.s("</section>\n")
}

func where(t result.Target) string {
	switch {
	case t.ServerPID != 0:
		return "managed: " + t.Location
	case !t.Managed:
		return "external: " + t.Location
	}
	return t.Location
}

var idUnsafe = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

func groupID(g *phaseGroup) string {
	return idUnsafe.ReplaceAllString(g.workload+"-"+g.phase, "-")
}

// ---- kv sweep ---------------------------------------------------------------

func sweepID(s *sweep) string { return idUnsafe.ReplaceAllString(s.name, "-") + "-sweep" }

func (p *page) sweepSection(s *sweep) {
	p.f(`<section id="%s"><h2>%s: keys vs total time</h2>`+"\n", esc(sweepID(s)), esc(s.name))
	experiment := "The article's experiment: write N keys one by one, then read each back"
	if s.batch > 0 {
		experiment = "The article's experiment with bulk writes: write N keys in bulk, " + thousands(s.batch) + " per call (each store's fastest way: COPY for PostgreSQL, pipelines for Redis and Memcached), then read each back one by one"
	}
	p.f(`<p class="lede">%s, over one connection per client. Total time of each phase (warm-up excluded) against the key count, both axes logarithmic: a straight line of slope 1 means a constant cost per key.</p>`+"\n", esc(experiment))
	p.s(`<div class="charts">` + "\n")
	for _, ph := range []string{"write", "read"} {
		if s.ms[ph] != nil {
			p.sweepChart(s, ph)
		}
	}
	p.s("</div></section>\n")
}

func (p *page) sweepChart(s *sweep, phase string) {
	id := "chart-" + sweepID(s) + "-" + phase
	lo, hi := math.Inf(1), 0.0
	for _, t := range s.targets {
		for _, v := range s.ms[phase][t] {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	c := newChart(id, 600, 340, 64, 20, 28, 40)
	x := newLogScale(float64(s.keys[0]), float64(s.keys[len(s.keys)-1]), c.left, c.right, countLabel)
	var at []float64
	for _, k := range s.keys {
		at = append(at, float64(k))
	}
	x.at = at
	y := newLogScale(lo, hi, c.bottom, c.top, msLabel)
	var ls []line
	for _, t := range s.targets {
		l := line{key: t, color: p.m.colorOf[t], markers: true}
		for _, k := range s.keys {
			if v, ok := s.ms[phase][t][k]; ok {
				l.points = append(l.points, point{x: float64(k), y: v, title: fmt.Sprintf("%s: %s keys %s in %s ms", t, thousands(k), phase, num(v))})
			}
		}
		ls = append(ls, l)
	}
	p.f(`<figure class="chart" id="%s-fig" data-chart="sweep" data-workload="%s" data-phase="%s">`, esc(id), esc(s.name), esc(phase))
	p.f(`<figcaption><strong>%s %s: keys vs total ms</strong><span class="sub">time to %s, log–log; one line per target</span></figcaption>`, esc(s.name), esc(phase), esc(s.what(phase)))
	c.open(fmt.Sprintf("%s %s: total time against key count, one line per target", s.name, phase),
		fmt.Sprintf("Log-log line chart of the milliseconds needed to %s %s to %s keys, for %d targets. The table below has the numbers.",
			phase, thousands(s.keys[0]), thousands(s.keys[len(s.keys)-1]), len(s.targets)))
	c.grid(x, y, "keys", "total ms")
	c.lines(x, y, ls, "plot")
	p.s(c.close())
	p.legend(ls, true)
	// The table: one row per target, one column per key count.
	p.f(`<div class="table-wrap"><table data-table="sweep"><caption>%s</caption><thead><tr><th scope="col">target</th>`, esc(s.title(phase)))
	for _, k := range s.keys {
		p.f(`<th scope="col" data-keys="%d">%s</th>`, k, thousands(k))
	}
	p.s(`<th scope="col">ops/s at max N</th></tr></thead><tbody>`)
	for _, t := range s.targets {
		p.f(`<tr data-target="%s"><th scope="row"><span class="swatch-dot c%d"></span>%s</th>`, esc(t), p.m.colorOf[t]%paletteSize, esc(t))
		for _, k := range s.keys {
			if v, ok := s.ms[phase][t][k]; ok {
				p.f(`<td data-keys="%d" data-v="%s">%s</td>`, k, exact(v), num(v))
			} else {
				p.s(`<td>—</td>`)
			}
		}
		if ph, ok := s.atLargest(phase, t); ok {
			p.f(`<td data-m="ops_s" data-v="%s">%s</td>`, exact(ph.ThroughputOpsS), num(ph.ThroughputOpsS))
		} else {
			p.s(`<td>—</td>`)
		}
		p.s("</tr>")
	}
	p.s("</tbody></table></div></figure>\n")
}

// legend writes the buttons that show or hide each series of a figure.
func (p *page) legend(ls []line, markers bool) {
	p.s(`<ul class="legend" aria-label="series: click to show or hide">`)
	for _, l := range ls {
		label := l.key
		if l.attrs != "" {
			label = legendLabel(l.attrs, l.key)
		}
		p.f(`<li><button type="button" data-series="%s" aria-pressed="true">%s%s</button></li>`, esc(l.key), swatch(l.color, l.variant, markers), esc(label))
	}
	p.s("</ul>")
}

// legendLabel reads data-label from a series' attributes.
func legendLabel(attrs, fallback string) string {
	if _, rest, ok := strings.Cut(attrs, `data-label="`); ok {
		if v, _, ok := strings.Cut(rest, `"`); ok {
			return htmlUnescape(v)
		}
	}
	return fallback
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&#34;", `"`, "&#39;", "'").Replace(s)
}

// ---- one section per workload × phase ----------------------------------------

func (p *page) groupSection(g *phaseGroup) {
	id := groupID(g)
	p.f(`<section id="%s"><h2>%s · %s</h2>`+"\n", esc(id), esc(g.workload), esc(g.phase))
	p.f(`<p class="lede">%s</p>`+"\n", esc(groupLede(g)))
	p.s(`<div class="charts">` + "\n")
	p.latencyChart(g)
	p.latencyByOpChart(g)
	p.throughputChart(g)
	p.spectrumChart(g)
	p.serverTimeChart(g)
	p.timeChart(g)
	p.s("</div></section>\n")
}

func groupLede(g *phaseGroup) string {
	workers := map[int]bool{}
	for _, e := range g.entries {
		workers[e.phase.Workers] = true
	}
	w := ""
	if len(workers) == 1 {
		for n := range workers {
			w = fmt.Sprintf(", %s each", plural(n, "client connection"))
		}
	}
	return fmt.Sprintf("The %s phase of the %s workload in %s%s. Latency is client-side, per operation, from merged HdrHistograms (successful operations only); warm-up is excluded.",
		g.phase, g.workload, plural(len(g.entries), "cell"), w)
}

// percentile columns of the latency chart and table.
var latencyMetrics = []struct {
	key, name string
	get       func(l metrics.Latency) float64
}{
	{"p50", "p50", func(l metrics.Latency) float64 { return l.P50 }},
	{"p90", "p90", func(l metrics.Latency) float64 { return l.P90 }},
	{"p99", "p99", func(l metrics.Latency) float64 { return l.P99 }},
	{"p999", "p99.9", func(l metrics.Latency) float64 { return l.P999 }},
	{"max", "max", func(l metrics.Latency) float64 { return l.Max }},
}

// rowLayout places one row per entry, with a gap where the target changes.
type rowLayout struct {
	y      []float64
	height float64
	top    float64
}

func layoutRows(entries []entry, top float64) rowLayout {
	const rowH, gap = 20.0, 8.0
	l := rowLayout{top: top}
	y := top
	for i, e := range entries {
		if i > 0 && e.cell.Target != entries[i-1].cell.Target {
			y += gap
		}
		l.y = append(l.y, y+rowH/2)
		y += rowH
	}
	l.height = y - top
	return l
}

func labelMargin(entries []entry) float64 {
	w := 60.0
	for _, e := range entries {
		w = math.Max(w, labelWidth(e.label)+14)
	}
	return math.Min(w, 240)
}

// rowChart opens the figure of a chart of kind (data-chart) with a row per
// entry on a log x axis from lo to hi, leaving right for values past the
// bars: the chart, its rows and its axis.
func (p *page) rowChart(g *phaseGroup, kind string, entries []entry, right, lo, hi float64, format func(float64) string) (*chart, rowLayout, *logScale) {
	id := "chart-" + groupID(g) + "-" + kind
	rows := layoutRows(entries, 30)
	c := newChart(id, 600, 30+rows.height+42, labelMargin(entries), right, 30, 42)
	x := newLogScale(lo, hi, c.left, c.right, format)
	p.f(`<figure class="chart" id="%s-fig" data-chart="%s" data-workload="%s" data-phase="%s">`, esc(id), esc(kind), esc(g.workload), esc(g.phase))
	return c, rows, x
}

func (p *page) latencyChart(g *phaseGroup) {
	p.latencyDots(g, g.entries, "latency", "Latency percentiles", "per cell")
}

// latencyByOpChart draws the percentiles of each kind of operation of a
// mixed phase (Phase.ByOp), one row per cell and kind, if g has any.
func (p *page) latencyByOpChart(g *phaseGroup) {
	var entries []entry
	for _, e := range g.entries {
		for _, op := range sortedKeys(e.phase.ByOp) {
			f := e.phase.ByOp[op]
			ph := &metrics.Phase{Name: e.phase.Name, Ops: f.Ops, LatencyUs: f.LatencyUs}
			entries = append(entries, entry{cell: e.cell, phase: ph, label: e.label + " · " + op, color: e.color, variant: e.variant, op: op})
		}
	}
	p.latencyDots(g, entries, "latency-by-op", "Latency by operation", "per cell and kind of operation")
}

// latencyDots draws a dot plot of each entry's percentiles, with its table;
// kind names the chart and the table (data-chart, data-table).
func (p *page) latencyDots(g *phaseGroup, all []entry, kind, title, per string) {
	var entries []entry
	lo, hi := math.Inf(1), 0.0
	for _, e := range all {
		l := e.phase.LatencyUs
		if l.P50 <= 0 {
			continue // no successful operation
		}
		entries = append(entries, e)
		lo, hi = math.Min(lo, l.P50), math.Max(hi, l.Max)
	}
	if len(entries) == 0 {
		return
	}
	c, rows, x := p.rowChart(g, kind, entries, 20, lo, hi, usLabel)
	p.f(`<figcaption><strong>%s</strong><span class="sub">%s %s, %s: p50 · p90 · p99 · p99.9 · max, log scale</span></figcaption>`, esc(title), esc(g.workload), esc(g.phase), esc(per))
	c.open(fmt.Sprintf("%s %s %s %s", g.workload, g.phase, strings.ToLower(title), per),
		fmt.Sprintf("Dot plot on a logarithmic axis from %s to %s: for each of %d rows, markers at p50, p90, p99, p99.9 and max latency joined by a line. The table below has the numbers.",
			usLabel(x.lo), usLabel(x.hi), len(entries)))
	c.grid(x, nil, "latency per operation (µs, log scale)", "")
	for i, e := range entries {
		y := rows.y[i]
		if i%2 == 0 {
			fmt.Fprintf(&c.b, `<rect class="band" x="%s" y="%s" width="%s" height="20"/>`, f1(c.left), f1(y-10), f1(c.right-c.left))
		}
		fmt.Fprintf(&c.b, `<text class="row-label" x="%s" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`, f1(c.left-8), f1(y), esc(e.label))
		l := e.phase.LatencyUs
		fmt.Fprintf(&c.b, `<g class="c%d" data-cell="%s">`, e.color%paletteSize, esc(e.cell.Label()))
		fmt.Fprintf(&c.b, `<line class="range" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(x.pos(l.P50)), f1(y), f1(x.pos(l.Max)), f1(y))
		for k, lm := range latencyMetrics {
			v := lm.get(l)
			fmt.Fprintf(&c.b, `<g class="pt" data-series="%s" data-cell="%s" data-m="%s" data-v="%s">%s<title>%s %s: %s µs</title></g>`,
				lm.key, esc(e.cell.Label()), lm.key, exact(v), marker(k, x.pos(v), y, 4), esc(e.label), lm.name, num(v))
		}
		c.b.WriteString(`</g>`)
	}
	p.s(c.close())
	// Legend: the percentile shapes.
	p.s(`<ul class="legend" aria-label="percentiles: click to show or hide">`)
	for k, lm := range latencyMetrics {
		p.f(`<li><button type="button" data-series="%s" aria-pressed="true"><svg class="swatch" width="14" height="12" viewBox="0 0 14 12" aria-hidden="true">%s</svg>%s</button></li>`,
			lm.key, strings.Replace(marker(k, 7, 6, 4), "currentColor", "var(--muted)", 2), lm.name)
	}
	p.s("</ul>")
	rowHead := "cell"
	if entries[0].op != "" {
		rowHead = "cell · operation"
	}
	p.f(`<div class="table-wrap"><table data-table="%s"><caption>latency in µs</caption><thead><tr><th scope="col">%s</th>`, esc(kind), rowHead)
	for _, lm := range latencyMetrics {
		p.f(`<th scope="col">%s</th>`, lm.name)
	}
	p.s(`<th scope="col">mean</th><th scope="col">stddev</th></tr></thead><tbody>`)
	for i, e := range entries {
		p.rowStart(entries, i)
		l := e.phase.LatencyUs
		for _, lm := range latencyMetrics {
			v := lm.get(l)
			p.f(`<td data-m="%s" data-v="%s">%s</td>`, lm.key, exact(v), num(v))
		}
		p.f(`<td data-m="mean" data-v="%s">%s</td><td data-m="stddev" data-v="%s">%s</td></tr>`, exact(l.Mean), num(l.Mean), exact(l.Stddev), num(l.Stddev))
	}
	p.s("</tbody></table></div></figure>\n")
}

// rowStart opens a table row for entry i, marking where the target changes.
func (p *page) rowStart(entries []entry, i int) {
	e := entries[i]
	cls := ""
	if i > 0 && e.cell.Target != entries[i-1].cell.Target {
		cls = ` class="group-start"`
	}
	status := ""
	if e.cell.Status != result.CellOK {
		status = ` <span class="bad">(` + esc(e.cell.Status) + `)</span>`
	}
	op := ""
	if e.op != "" {
		op = ` data-op="` + esc(e.op) + `"`
	}
	p.f(`<tr%s data-cell="%s"%s><th scope="row"><span class="swatch-dot c%d"></span>%s%s</th>`, cls, esc(e.cell.Label()), op, e.color%paletteSize, esc(e.label), status)
}

func (p *page) throughputChart(g *phaseGroup) {
	var entries []entry
	lo, hi := math.Inf(1), 0.0
	for _, e := range g.entries {
		if v := e.phase.ThroughputOpsS; v > 0 {
			entries = append(entries, e)
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if len(entries) == 0 {
		return
	}
	c, rows, x := p.rowChart(g, "throughput", entries, 64, lo, hi, countLabel)
	p.f(`<figcaption><strong>Throughput</strong><span class="sub">%s %s, operations per second over the measured time, log scale</span></figcaption>`, esc(g.workload), esc(g.phase))
	c.open(fmt.Sprintf("%s %s throughput per cell", g.workload, g.phase),
		fmt.Sprintf("Horizontal bars on a logarithmic axis from %s to %s operations per second, one per cell, %d cells. The table below has the numbers.",
			countLabel(x.lo), countLabel(x.hi), len(entries)))
	c.grid(x, nil, "operations per second (log scale)", "")
	for i, e := range entries {
		y := rows.y[i]
		v := e.phase.ThroughputOpsS
		fmt.Fprintf(&c.b, `<text class="row-label" x="%s" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`, f1(c.left-8), f1(y), esc(e.label))
		fmt.Fprintf(&c.b, `<g class="c%d" data-series="%s"><rect class="bar" data-cell="%s" data-m="ops_s" data-v="%s" x="%s" y="%s" width="%s" height="13" rx="2"><title>%s: %s ops/s</title></rect>`,
			e.color%paletteSize, esc(e.cell.Label()), esc(e.cell.Label()), exact(v), f1(c.left), f1(y-6.5), f1(math.Max(1, x.pos(v)-c.left)), esc(e.label), num(v))
		fmt.Fprintf(&c.b, `<text class="value" x="%s" y="%s" dominant-baseline="middle">%s</text></g>`, f1(x.pos(v)+5), f1(y), esc(num(v)))
	}
	p.s(c.close())
	p.s(`<div class="table-wrap"><table data-table="throughput"><caption>ops/s = ops ÷ measured time (warm-up excluded)</caption><thead><tr><th scope="col">cell</th><th scope="col">ops/s</th><th scope="col">ops</th><th scope="col">errors</th><th scope="col">ms</th></tr></thead><tbody>`)
	for i, e := range entries {
		p.rowStart(entries, i)
		ph := e.phase
		p.f(`<td data-m="ops_s" data-v="%s">%s</td><td data-m="ops" data-v="%d">%s</td><td data-m="errors" data-v="%d">%s</td><td data-m="duration_ms" data-v="%s">%s</td></tr>`,
			exact(ph.ThroughputOpsS), num(ph.ThroughputOpsS), ph.Ops, thousands(ph.Ops), errorCount(ph), thousands(errorCount(ph)),
			exact(ph.DurationS*1000), num(ph.DurationS*1000))
	}
	p.s("</tbody></table></div></figure>\n")
}

// spectrumPercentiles are the table columns of the percentile spectrum.
var spectrumPercentiles = []struct {
	q     float64
	nines float64
	name  string
}{
	{50, 0.30103, "p50"}, {90, 1, "p90"}, {99, 2, "p99"}, {99.9, 3, "p99.9"}, {99.99, 4, "p99.99"}, {99.999, 5, "p99.999"},
}

// maxNines is the right end of the spectrum's axis: 99.999%.
const maxNines = 5

// ninesOf is how far along the nines axis a histogram of n values goes: to
// the percentile whose rank is the last value, 1/(1-q) = 2n.
func ninesOf(n int64) float64 {
	if n < 1 {
		return 1
	}
	return math.Min(maxNines, math.Log10(2*float64(n)))
}

// spectrumSample is one entry's histogram in the percentile spectrum, and
// how far along the nines axis it goes.
type spectrumSample struct {
	e     entry
	h     *hdr.Histogram
	nines float64
}

func (p *page) spectrumChart(g *phaseGroup) {
	var specs []spectrumSample
	var undecoded []string
	lo, hi, xmax, tableNines := math.Inf(1), 0.0, 2.0, 2.0
	for _, e := range g.entries {
		if e.phase.Histogram == "" {
			continue
		}
		h, err := metrics.DecodeHistogram(e.phase.Histogram)
		if err != nil || h.TotalCount() == 0 {
			undecoded = append(undecoded, e.cell.Label())
			continue
		}
		n := ninesOf(h.TotalCount())
		specs = append(specs, spectrumSample{e: e, h: h, nines: n})
		lo = math.Min(lo, spectrumValue(h, 0))
		hi = math.Max(hi, float64(h.ValueAtPercentile(100))/1e3)
		xmax = math.Max(xmax, math.Ceil(n-1e-9))
		// Table columns go as far as the largest sample resolves: 99.99% needs 10,000 values.
		tableNines = math.Max(tableNines, math.Log10(float64(h.TotalCount()))+1e-9)
	}
	if len(specs) == 0 {
		return
	}
	id := "chart-" + groupID(g) + "-spectrum"
	c := newChart(id, 600, 360, 64, 20, 28, 40)
	x := newLinScale(0, xmax, c.left, c.right, ninesLabel)
	x.step = 1
	x.hi = xmax
	y := newLogScale(lo, hi, c.bottom, c.top, usLabel)
	var ls []line
	for _, s := range specs {
		l := line{key: s.e.cell.Label(), color: s.e.color, variant: s.e.variant, attrs: ` data-label="` + esc(s.e.label) + `"`}
		for i := 0; ; i++ {
			xv := math.Min(float64(i)*0.05, s.nines)
			q := 100 * (1 - math.Pow(10, -xv))
			if xv >= s.nines && s.nines < maxNines {
				q = 100 // the sample's end: its largest value
			}
			v := spectrumValue(s.h, q)
			l.points = append(l.points, point{x: xv, y: v, attrs: ` data-q="` + exact(q) + `"`,
				title: fmt.Sprintf("%s: %s%% ≤ %s µs", s.e.label, exact(roundTo(q, 4)), num(v))})
			if xv >= s.nines {
				break
			}
		}
		ls = append(ls, l)
	}
	p.f(`<figure class="chart" id="%s-fig" data-chart="spectrum" data-workload="%s" data-phase="%s">`, esc(id), esc(g.workload), esc(g.phase))
	p.f(`<figcaption><strong>Latency percentile spectrum</strong><span class="sub">%s %s, from the HdrHistograms: latency (log) at each percentile, on a “nines” axis; each line ends where its sample runs out</span></figcaption>`, esc(g.workload), esc(g.phase))
	c.open(fmt.Sprintf("%s %s latency by percentile, one line per cell", g.workload, g.phase),
		fmt.Sprintf("Percentile distribution plot of %d cells: x is the percentile from 0%% to %s on a logarithmic nines axis, y the latency from %s to %s on a logarithmic axis. The table below has the values at the labelled percentiles.",
			len(specs), ninesLabel(xmax), usLabel(y.lo), usLabel(y.hi)))
	c.grid(x, y, "percentile", "latency")
	c.lines(x, y, ls, "plot")
	p.s(c.close())
	p.legend(ls, false)
	if len(undecoded) > 0 {
		p.f(`<p class="meta">histogram not readable for %s</p>`, esc(strings.Join(undecoded, ", ")))
	}
	p.spectrumTable(specs, tableNines)
	p.s("</figure>\n")
}

// spectrumTable is the spectrum's numbers: each sample's count and its
// latency at the percentiles up to tableNines, and its largest.
func (p *page) spectrumTable(specs []spectrumSample, tableNines float64) {
	p.s(`<div class="table-wrap"><table data-table="spectrum"><caption>latency in µs at each percentile, from the histograms</caption><thead><tr><th scope="col">cell</th><th scope="col">count</th>`)
	for _, sp := range spectrumPercentiles {
		if sp.nines <= tableNines {
			p.f(`<th scope="col">%s</th>`, sp.name)
		}
	}
	p.s(`<th scope="col">p100</th></tr></thead><tbody>`)
	var es []entry
	for _, s := range specs {
		es = append(es, s.e)
	}
	for i, s := range specs {
		p.rowStart(es, i)
		p.f(`<td data-m="count" data-v="%d">%s</td>`, s.h.TotalCount(), thousands(s.h.TotalCount()))
		for _, sp := range spectrumPercentiles {
			if sp.nines > tableNines {
				continue
			}
			v := float64(s.h.ValueAtPercentile(sp.q)) / 1e3
			p.f(`<td data-m="%s" data-v="%s">%s</td>`, strings.ReplaceAll(sp.name, ".", ""), exact(v), num(v))
		}
		v := float64(s.h.ValueAtPercentile(100)) / 1e3
		p.f(`<td data-m="p100" data-v="%s">%s</td></tr>`, exact(v), num(v))
	}
	p.s("</tbody></table></div>")
}

// spectrumValue is the latency in µs at percentile q: HdrHistogram's value
// (the highest equivalent value of the bucket), also at q = 0, where the
// library would give the bucket's lowest value, which is 0 below 1 µs.
func spectrumValue(h *hdr.Histogram, q float64) float64 {
	return float64(h.ValueAtPercentile(math.Max(q, 1e-9))) / 1e3
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

func roundTo(v float64, digits int) float64 {
	f := math.Pow(10, float64(digits))
	return math.Round(v*f) / f
}

func (p *page) timeChart(g *phaseGroup) {
	var entries []entry
	var rates [][]float64
	rlo, rhi, plo, phi, tmax := math.Inf(1), 0.0, math.Inf(1), 0.0, 0.0
	for _, e := range g.entries {
		if e.phase.DurationS < seriesMinSeconds || len(e.phase.Series) < seriesMinSeconds {
			continue
		}
		rs := seriesRates(e.phase)
		entries = append(entries, e)
		rates = append(rates, rs)
		for i, s := range e.phase.Series {
			if rs[i] > 0 {
				rlo, rhi = math.Min(rlo, rs[i]), math.Max(rhi, rs[i])
			}
			if s.P99 > 0 {
				plo, phi = math.Min(plo, s.P99), math.Max(phi, s.P99)
			}
			tmax = math.Max(tmax, float64(s.T+1))
		}
	}
	if len(entries) == 0 {
		return
	}
	id := "chart-" + groupID(g) + "-time"
	const panelH, gapH = 150.0, 44.0
	c := newChart(id, 600, 28+panelH+gapH+panelH+40, 64, 20, 28, 40)
	top := &chart{id: id, w: c.w, h: c.h, left: c.left, right: c.right, top: c.top, bottom: c.top + panelH}
	bot := &chart{id: id, w: c.w, h: c.h, left: c.left, right: c.right, top: top.bottom + gapH, bottom: c.bottom}
	x := newLinScale(0, tmax, c.left, c.right, func(v float64) string { return trimNum(v) + " s" })
	var yr scale
	if rhi/rlo > 20 {
		yr = newLogScale(rlo, rhi, top.bottom, top.top, countLabel)
	} else {
		yr = newLinScale(0, rhi, top.bottom, top.top, countLabel)
	}
	yp := newLogScale(plo, phi, bot.bottom, bot.top, usLabel)
	var lr, lp []line
	for i, e := range entries {
		a := line{key: e.cell.Label(), color: e.color, variant: e.variant, markers: len(e.phase.Series) <= 60, attrs: ` data-m="ops_s" data-label="` + esc(e.label) + `"`}
		b := line{key: e.cell.Label(), color: e.color, variant: e.variant, markers: len(e.phase.Series) <= 60, attrs: ` data-m="p99" data-label="` + esc(e.label) + `"`}
		for k, s := range e.phase.Series {
			// Each second is drawn at its middle.
			mid := float64(s.T) + 0.5
			a.points = append(a.points, point{x: mid, y: rates[i][k], title: fmt.Sprintf("%s, second %d: %s ops/s", e.label, s.T, num(rates[i][k]))})
			if s.P99 > 0 {
				b.points = append(b.points, point{x: mid, y: s.P99, title: fmt.Sprintf("%s, second %d: p99 %s µs", e.label, s.T, num(s.P99))})
			}
		}
		lr, lp = append(lr, a), append(lp, b)
	}
	p.f(`<figure class="chart" id="%s-fig" data-chart="time" data-workload="%s" data-phase="%s">`, esc(id), esc(g.workload), esc(g.phase))
	p.f(`<figcaption><strong>Throughput and p99 over time</strong><span class="sub">%s %s, per second, for cells whose phase ran %d s or more; the last second is usually partial and its rate is over its real length</span></figcaption>`, esc(g.workload), esc(g.phase), seriesMinSeconds)
	c.open(fmt.Sprintf("%s %s throughput and p99 latency per second", g.workload, g.phase),
		fmt.Sprintf("Two line charts sharing a time axis of %s seconds for %s: above, operations per second; below, the 99th percentile latency of each second on a logarithmic axis. The table below has the numbers.",
			trimNum(tmax), plural(len(entries), "cell")))
	top.grid(x, yr, "", "ops/s")
	top.lines(x, yr, lr, "rate")
	c.b.WriteString(top.b.String())
	bot.grid(x, yp, "seconds since the phase started", "p99 latency")
	bot.lines(x, yp, lp, "p99")
	c.b.WriteString(bot.b.String())
	p.s(c.close())
	p.legend(lr, true)
	p.timeTable(entries, rates)
	p.s("</figure>\n")
}

// timeTable is the time chart's numbers: a row per cell and second,
// collapsed when long.
func (p *page) timeTable(entries []entry, rates [][]float64) {
	rowsN := 0
	for _, e := range entries {
		rowsN += len(e.phase.Series)
	}
	if rowsN > 24 {
		p.f(`<details class="table-details"><summary>the table: <span class="sub">%d seconds</span></summary>`, rowsN)
	}
	p.s(`<div class="table-wrap"><table data-table="time"><caption>per second (the last second of a phase is partial)</caption><thead><tr><th scope="col">cell</th><th scope="col">second</th><th scope="col">ops</th><th scope="col">ops/s</th><th scope="col">errors</th><th scope="col">p50 µs</th><th scope="col">p99 µs</th><th scope="col">max µs</th></tr></thead><tbody>`)
	for i, e := range entries {
		for k, s := range e.phase.Series {
			cls := ""
			if k == 0 && i > 0 {
				cls = ` class="group-start"`
			}
			p.f(`<tr%s data-cell="%s" data-t="%d"><th scope="row"><span class="swatch-dot c%d"></span>%s</th><td data-m="t" data-v="%d">%d</td><td data-m="ops" data-v="%d">%s</td><td data-m="ops_s" data-v="%s">%s</td><td data-m="errors" data-v="%d">%d</td><td data-m="p50" data-v="%s">%s</td><td data-m="p99" data-v="%s">%s</td><td data-m="max" data-v="%s">%s</td></tr>`,
				cls, esc(e.cell.Label()), s.T, e.color%paletteSize, esc(e.label), s.T, s.T, s.Ops, thousands(s.Ops), exact(rates[i][k]), num(rates[i][k]), s.Errors, s.Errors,
				exact(s.P50), num(s.P50), exact(s.P99), num(s.P99), exact(s.Max), num(s.Max))
		}
	}
	p.s("</tbody></table></div>")
	if rowsN > 24 {
		p.s("</details>")
	}
}

// ---- every cell ---------------------------------------------------------------

func (p *page) cellsSection() {
	r := p.m.r
	p.s(`<section id="cells"><h2>All cells</h2>` + "\n")
	p.s(`<p class="lede">Every cell and phase of the run. Latency in µs, client-side, per operation; CPU in µs per operation: the whole client process, and a managed server's processes; disk is what a managed server wrote, per operation; same CPU is the share of the time client and server ran on the same CPU (a loopback round trip costs several times more across CPUs).</p>` + "\n")
	p.s(`<div class="table-wrap"><table data-table="cells"><thead><tr><th scope="col">cell</th><th scope="col" class="l">phase</th><th scope="col">ops</th><th scope="col">errors</th><th scope="col">ms</th><th scope="col">ops/s</th><th scope="col">p50</th><th scope="col">p90</th><th scope="col">p99</th><th scope="col">p99.9</th><th scope="col">max</th><th scope="col">mean</th><th scope="col">client CPU</th><th scope="col">server CPU</th><th scope="col">disk B/op</th><th scope="col">peak RSS MiB</th><th scope="col">same CPU</th><th scope="col" class="l">status</th></tr></thead><tbody>` + "\n")
	for i, c := range cellsInOrder(r) {
		color := p.m.colorOf[c.Target] % paletteSize
		if len(c.Phases) == 0 {
			p.f(`<tr data-cell="%s"><th scope="row"><span class="swatch-dot c%d"></span>%s</th><td class="l">—</td>%s<td class="l bad">%s</td></tr>`+"\n",
				esc(c.Label()), color, esc(c.Label()), strings.Repeat("<td></td>", 15), esc(c.Status))
			continue
		}
		for j := range c.Phases {
			p.cellPhaseRow(c, j, i > 0 && j == 0, color)
		}
	}
	p.s("</tbody></table></div>\n")
	// Errors, samples and warnings, where there are any.
	var notes []string
	for _, n := range cellNotes(r, true) {
		notes = append(notes, "<b>"+esc(n.cell)+"</b>"+esc(n.rest))
	}
	if len(notes) > 0 {
		p.s(`<ul class="notes">`)
		for _, n := range notes {
			p.f("<li>%s</li>", n)
		}
		p.s("</ul>\n")
	}
	p.s("</section>\n")
}

// cellPhaseRow is the cells table's row of a cell's phase j; groupStart
// marks the first row of a cell after another.
func (p *page) cellPhaseRow(c *result.Cell, j int, groupStart bool, color int) {
	ph := &c.Phases[j]
	l := ph.LatencyUs
	cls := ""
	if groupStart {
		cls = ` class="group-start"`
	}
	p.f(`<tr%s data-cell="%s" data-phase="%s"><th scope="row"><span class="swatch-dot c%d"></span>%s</th><td class="l">%s</td>`, cls, esc(c.Label()), esc(ph.Name), color, esc(c.Label()), esc(ph.Name))
	p.f(`<td data-m="ops" data-v="%d">%s</td>`, ph.Ops, thousands(ph.Ops))
	p.f(`<td data-m="errors" data-v="%d"%s>%s</td>`, errorCount(ph), map[bool]string{true: ` class="bad"`}[errorCount(ph) > 0], esc(errorSummary(ph.Errors)))
	for _, v := range []struct {
		m string
		v float64
	}{{"duration_ms", ph.DurationS * 1000}, {"ops_s", ph.ThroughputOpsS}, {"p50", l.P50}, {"p90", l.P90}, {"p99", l.P99}, {"p999", l.P999}, {"max", l.Max}, {"mean", l.Mean}, {"client_cpu_us_per_op", ph.ClientCPUUsPerOp}} {
		title := ""
		if v.m == "client_cpu_us_per_op" && ph.ClientIO != "" {
			title = ` title="client I/O: ` + esc(ph.ClientIO) + `"`
		}
		p.f(`<td data-m="%s" data-v="%s"%s>%s</td>`, v.m, exact(v.v), title, num(v.v))
	}
	if s := ph.Server; s != nil {
		p.f(`<td data-m="server_cpu_us_per_op" data-v="%s">%s</td><td data-m="server_write_bytes_per_op" data-v="%s">%s</td><td data-m="server_peak_rss_mib" data-v="%s">%s</td>`,
			exact(s.CPUUsPerOp), num(s.CPUUsPerOp), exact(s.WritePerOp), num(s.WritePerOp), exact(mib(s.PeakRSSBytes)), num(mib(s.PeakRSSBytes)))
	} else {
		p.s(`<td>—</td><td>—</td><td>—</td>`)
	}
	if pl := ph.Placement; pl != nil {
		p.f(`<td data-m="same_cpu" data-v="%s">%s</td>`, exact(pl.SameCPU), sameCPUText(ph))
	} else {
		p.s(`<td>—</td>`)
	}
	statusCls := "l"
	if c.Status != result.CellOK {
		statusCls = "l bad"
	}
	p.f(`<td class="%s">%s</td></tr>`+"\n", statusCls, esc(c.Status))
}

// ---- environment and settings ------------------------------------------------

func (p *page) setupSection() {
	r := p.m.r
	p.s(`<section id="setup"><h2>Environment and settings</h2>` + "\n")
	p.s(`<details><summary>Environment <span class="sub">— the machine, the binary, the run</span></summary><div class="table-wrap"><table data-table="environment"><tbody>`)
	kv := func(k, v string) {
		if v != "" {
			p.f(`<tr><th scope="row">%s</th><td class="l wrap">%s</td></tr>`, esc(k), esc(v))
		}
	}
	for _, row := range environmentRows(r, true) {
		kv(row[0], row[1])
	}
	p.s("</tbody></table></div>")
	if r.Scenario != nil {
		if b, err := json.MarshalIndent(r.Scenario, "", "  "); err == nil {
			p.f(`<h3>Scenario</h3><pre>%s</pre>`, esc(string(b)))
		}
	}
	p.s("</details>\n")
	for _, t := range r.Targets {
		p.f(`<details data-target="%s"><summary><span class="swatch-dot c%d"></span>%s <span class="sub">— %s · %s · %s</span></summary>`,
			esc(t.Name), p.m.colorOf[t.Name]%paletteSize, esc(t.Name), esc(t.Version), esc(t.Durability), plural(len(t.Settings), "effective setting"))
		p.s(`<div class="table-wrap"><table><tbody>`)
		kv("store", t.Store)
		kv("profile", t.Profile)
		kv("kind", t.Kind)
		kv("version", t.Version)
		kv("where", where(t))
		kv("durability", t.Durability)
		kv("namespace", t.Namespace)
		if t.ServerPID != 0 {
			kv("server pid", fmt.Sprint(t.ServerPID))
		}
		for _, k := range sortedKeys(t.Options) {
			kv("option "+k, t.Options[k])
		}
		p.s("</tbody></table></div>")
		if len(t.Settings) > 0 {
			p.s(`<div class="table-wrap"><table data-table="settings"><caption>effective settings, as read back from the store</caption><thead><tr><th scope="col">setting</th><th scope="col" class="l">value</th></tr></thead><tbody>`)
			for _, k := range sortedKeys(t.Settings) {
				p.f(`<tr><th scope="row" class="mono">%s</th><td class="l wrap mono">%s</td></tr>`, esc(k), esc(t.Settings[k]))
			}
			p.s("</tbody></table></div>")
		}
		p.s("</details>\n")
	}
	p.s("</section>\n")
}

// ---- the article a suite reproduces --------------------------------------------

// articleSection prints the published figures beside ours: per table, a
// chart (for tables whose columns are key counts) and the table itself.
func (p *page) articleSection() {
	r := p.m.r
	a := r.Article
	if a == nil {
		return
	}
	p.f(`<section id="article"><h2>The article: %s</h2>`+"\n", esc(a.Title))
	if a.URL != "" {
		// Printed, not linked: the page refers to nothing outside itself.
		p.f(`<p class="meta">%s</p>`, esc(a.URL))
	}
	p.f(`<p class="lede"><b>Its setup:</b> %s<br><b>Ours:</b> %s, %s, %s%s</p>`+"\n",
		esc(a.Setup), esc(r.Environment.CPUModel), esc(plural(r.Environment.Cores, "core")), esc(r.Environment.OS), esc(quickNote(r)))
	p.s(`<div class="charts">` + "\n")
	for i, t := range a.Tables {
		p.articleTable(i, t)
	}
	p.s("</div>\n")
	if len(a.Differences) > 0 {
		p.s(`<h3>How the article's method differs from this run</h3><ul class="notes">`)
		for _, d := range a.Differences {
			p.f("<li>%s</li>", esc(d))
		}
		p.s("</ul>\n")
	}
	p.s("</section>\n")
}

func unitLabel(unit string) func(float64) string {
	switch unit {
	case "ms":
		return msLabel
	case "µs", "us":
		return usLabel
	}
	return func(v float64) string { return countLabel(v) + " " + unit }
}

func (p *page) articleTable(i int, t result.ArticleTable) {
	figs := ArticleTableFigures(p.m.r, t)
	id := fmt.Sprintf("chart-article-%d", i+1)
	numeric := t.Param != "" && len(t.Columns) >= 2
	var xs []float64
	for _, c := range t.Columns {
		v, err := strconv.ParseFloat(c, 64)
		if err != nil || v <= 0 {
			numeric = false
		}
		xs = append(xs, v)
	}
	colorOf := func(target string, row int) int {
		if c, ok := p.m.colorOf[target]; ok {
			return c
		}
		return row
	}
	p.f(`<figure class="chart wide" id="%s-fig" data-chart="article" data-table-index="%d">`, esc(id), i)
	p.f(`<figcaption><strong>%s</strong><span class="sub">%s; the article's figures (dotted) beside this run's (solid)</span></figcaption>`, esc(t.Title), esc(t.Unit))
	if numeric {
		p.articleChart(id, t, figs, xs, colorOf)
	}
	p.f(`<div class="table-wrap"><table data-table="article"><caption>%s: article | this run</caption><thead><tr><th scope="col" rowspan="2">article row → our target</th>`, esc(t.Unit))
	for _, c := range t.Columns {
		head := c
		if t.Param == "keys" {
			head = thousands(paramFromString(c)) + " keys"
		} else if t.Param != "" {
			head = t.Param + " " + c
		}
		p.f(`<th scope="colgroup" colspan="2">%s</th>`, esc(head))
	}
	p.s(`</tr><tr>`)
	for range t.Columns {
		p.s(`<th scope="col">article</th><th scope="col">ours</th>`)
	}
	p.s(`</tr></thead><tbody>`)
	for ri, row := range t.Rows {
		p.f(`<tr data-target="%s"><th scope="row"><span class="swatch-dot c%d"></span>%s → %s</th>`, esc(row.Target), colorOf(row.Target, ri)%paletteSize, esc(row.Label), esc(row.Target))
		for j, f := range figs[ri] {
			for _, v := range []struct {
				src string
				v   *float64
			}{{"article", f.Article}, {"ours", f.Ours}} {
				if v.v == nil {
					p.s(`<td>—</td>`)
				} else {
					p.f(`<td data-col="%s" data-source="%s" data-v="%s">%s</td>`, esc(t.Columns[j]), v.src, exact(*v.v), num(*v.v))
				}
			}
		}
		p.s("</tr>")
	}
	p.s("</tbody></table></div>")
	for _, n := range t.Notes {
		p.f(`<p class="meta">note: %s</p>`, esc(n))
	}
	p.s("</figure>\n")
}

// articleChart draws an article table whose columns are numbers (key
// counts): a dotted line per row of the article, a solid one per target of
// this run.
func (p *page) articleChart(id string, t result.ArticleTable, figs [][]ArticleFigure, xs []float64, colorOf func(string, int) int) {
	lo, hi := math.Inf(1), 0.0
	var ls []line
	for ri, row := range t.Rows {
		ours := line{key: row.Target + " (ours)", color: colorOf(row.Target, ri), markers: true, attrs: ` data-source="ours" data-label="` + esc(row.Target+" (this run)") + `"`}
		theirs := line{key: row.Label + " (article)", color: colorOf(row.Target, ri), variant: 2, markers: true, attrs: ` data-source="article" data-label="` + esc(row.Label+" (article)") + `"`}
		for j, f := range figs[ri] {
			if f.Ours != nil && *f.Ours > 0 {
				ours.points = append(ours.points, point{x: xs[j], y: *f.Ours, title: fmt.Sprintf("%s, %s %s: %s %s (this run)", row.Target, t.Columns[j], t.Param, num(*f.Ours), t.Unit)})
				lo, hi = math.Min(lo, *f.Ours), math.Max(hi, *f.Ours)
			}
			if f.Article != nil && *f.Article > 0 {
				theirs.points = append(theirs.points, point{x: xs[j], y: *f.Article, title: fmt.Sprintf("%s, %s %s: %s %s (article)", row.Label, t.Columns[j], t.Param, num(*f.Article), t.Unit)})
				lo, hi = math.Min(lo, *f.Article), math.Max(hi, *f.Article)
			}
		}
		for _, l := range []line{theirs, ours} {
			if len(l.points) > 0 {
				ls = append(ls, l)
			}
		}
	}
	if len(ls) > 0 {
		c := newChart(id, 1180, 360, 70, 20, 28, 40)
		x := newLogScale(xs[0], xs[len(xs)-1], c.left, c.right, countLabel)
		x.at = xs
		y := newLogScale(lo, hi, c.bottom, c.top, unitLabel(t.Unit))
		c.open(t.Title+": the article's figures and this run's", fmt.Sprintf("Log-log line chart: %s against %s, a dotted line per row of the article and a solid line per target of this run. The table below has the numbers.", t.Unit, t.Param))
		c.grid(x, y, t.Param, t.Unit)
		c.lines(x, y, ls, "plot")
		p.s(c.close())
		p.legend(ls, true)
	}
}

// ---- server-side time ------------------------------------------------------------

// serverTimeChart puts the client's mean latency beside the server's own
// time per call for the cells whose store reports it: the gap is the driver,
// the network round trip and scheduling.
func (p *page) serverTimeChart(g *phaseGroup) {
	var entries []entry
	lo, hi := math.Inf(1), 0.0
	for _, e := range g.entries {
		st := e.phase.ServerTime
		if st == nil || e.phase.LatencyUs.Mean <= 0 {
			continue
		}
		entries = append(entries, e)
		for _, v := range []float64{st.PerCallUs, e.phase.LatencyUs.Mean} {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if len(entries) == 0 || hi == 0 {
		return
	}
	c, rows, x := p.rowChart(g, "servertime", entries, 20, lo, hi, usLabel)
	p.f(`<figcaption><strong>Client vs server time</strong><span class="sub">%s %s, µs per call, log scale: the server's own time (■) and the client's mean latency (●); the gap is the driver, the round trip and scheduling</span></figcaption>`, esc(g.workload), esc(g.phase))
	c.open(fmt.Sprintf("%s %s: client mean latency and server time per call", g.workload, g.phase),
		fmt.Sprintf("Dot plot on a logarithmic axis: for each of %d cells, the server's time per call and the client's mean latency. The table below has the numbers.", len(entries)))
	c.grid(x, nil, "µs per call (log scale)", "")
	var sources []string
	for i, e := range entries {
		y := rows.y[i]
		st := e.phase.ServerTime
		if !slices.Contains(sources, st.Source) {
			sources = append(sources, st.Source)
		}
		fmt.Fprintf(&c.b, `<text class="row-label" x="%s" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`, f1(c.left-8), f1(y), esc(e.label))
		fmt.Fprintf(&c.b, `<g class="c%d" data-cell="%s">`, e.color%paletteSize, esc(e.cell.Label()))
		if st.PerCallUs > 0 {
			fmt.Fprintf(&c.b, `<line class="range" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(x.pos(st.PerCallUs)), f1(y), f1(x.pos(e.phase.LatencyUs.Mean)), f1(y))
			fmt.Fprintf(&c.b, `<g class="pt" data-cell="%s" data-m="server_per_call" data-v="%s">%s<title>%s: server %s µs per call</title></g>`,
				esc(e.cell.Label()), exact(st.PerCallUs), marker(1, x.pos(st.PerCallUs), y, 4), esc(e.label), num(st.PerCallUs))
		}
		fmt.Fprintf(&c.b, `<g class="pt" data-cell="%s" data-m="mean" data-v="%s">%s<title>%s: client mean %s µs</title></g></g>`,
			esc(e.cell.Label()), exact(e.phase.LatencyUs.Mean), marker(0, x.pos(e.phase.LatencyUs.Mean), y, 4), esc(e.label), num(e.phase.LatencyUs.Mean))
	}
	p.s(c.close())
	p.s(`<div class="table-wrap"><table data-table="servertime"><caption>µs per call; overhead = client mean − server time</caption><thead><tr><th scope="col">cell</th><th scope="col">calls</th><th scope="col">client</th><th scope="col">server</th><th scope="col">overhead</th><th scope="col">src</th></tr></thead><tbody>`)
	for i, e := range entries {
		p.rowStart(entries, i)
		st := e.phase.ServerTime
		p.f(`<td data-m="server_calls" data-v="%d">%s</td><td data-m="mean" data-v="%s">%s</td><td data-m="server_per_call" data-v="%s">%s</td><td data-m="client_overhead" data-v="%s">%s</td><td>[%d]</td></tr>`,
			st.Calls, thousands(st.Calls), exact(e.phase.LatencyUs.Mean), num(e.phase.LatencyUs.Mean), exact(st.PerCallUs), num(st.PerCallUs),
			exact(st.ClientOverheadUs), num(st.ClientOverheadUs), slices.Index(sources, st.Source)+1)
	}
	p.s("</tbody></table></div>")
	for i, s := range sources {
		p.f(`<p class="meta">[%d] %s</p>`, i+1, esc(s))
	}
	p.s("</figure>\n")
}

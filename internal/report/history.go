package report

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/storebench/storebench/internal/result"
)

// History is the page of `storebench history`: the cells that several
// runs share, matched as compare matches them (cell id, phase name, the
// median of a run's repeats), with each phase's throughput and p99 over
// the runs in start order, what changed between runs (machine, storebench,
// a server's version or effective settings) marked where it changed, and
// the thresholds the runs checked. It is built once into sections that
// every format renders (HistoryText, HistoryMarkdown, HistoryHTML,
// HistoryCSV), so no format can show a point another lacks.
type History struct {
	runs     []HistoryRun
	changes  [][]historyChange // per run: what changed since the runs before it
	cells    []*historyCell
	notes    []string
	sections []section
}

// HistoryRun is one result given to NewHistory and the file it came from.
type HistoryRun struct {
	Path string
	R    *result.Result
}

// historyChange is one change a run brings: its text names what and how
// ("machine changed: AMD EPYC → Intel Xeon"), label is its short name on a
// chart's mark.
type historyChange struct {
	target      string // the target whose version or settings changed; "" for the machine or storebench
	label, text string
}

// historyCell is one matched cell: in at least two runs, finished.
type historyCell struct {
	id, target string
	phases     []*historyPhase
}

// historyPhase is a matched cell's phase in each run that has it.
type historyPhase struct {
	name   string
	points []historyPoint
}

// historyPoint is a phase's figures in one run; thresholds are the run's
// assertions on them (historyMetric's metrics).
type historyPoint struct {
	run        int // index in History.runs
	opsS, p99  float64
	thresholds []result.Assertion
}

// historyMetrics are the figures a history follows, by the key compare
// reads them with (metricValue).
var historyMetrics = []struct{ key, head, csvName, unit string }{
	{"ops_s", "ops/s", "throughput_ops_s", "ops/s"},
	{"p99", "p99 µs", "latency_p99_us", "us"},
}

// thresholdMetric maps an assertion's metric to the history's key of it;
// "" for a metric the history does not chart.
func thresholdMetric(metric string) string {
	switch metric {
	case "ops_s", "ops/s", "throughput_ops_s":
		return "ops_s"
	case "p99", "p99_us", "latency_p99_us":
		return "p99"
	}
	return ""
}

// NewHistory matches the cells of runs (at least two) in their start
// order. Its error is one line: too few runs, or no cell two runs share.
func NewHistory(runs []HistoryRun) (*History, error) {
	h := &History{}
	seen := map[string]string{} // run id and start -> the first file that had it
	for _, run := range runs {
		k := run.R.ID + " " + run.R.StartedAt.String()
		if first, ok := seen[k]; ok {
			h.notes = append(h.notes, fmt.Sprintf("%s is the run of %s (%s), left out", run.Path, first, run.R.ID))
			continue
		}
		seen[k] = run.Path
		h.runs = append(h.runs, run)
	}
	if len(h.runs) < 2 {
		return nil, fmt.Errorf("history needs at least 2 results, found %d", len(h.runs))
	}
	slices.SortStableFunc(h.runs, func(a, b HistoryRun) int { return a.R.StartedAt.Compare(b.R.StartedAt) })
	h.matchCells()
	if len(h.cells) == 0 {
		return nil, errors.New("no cell finished in two of the results: cells are matched by id, such as " + firstCellOf(h.runs))
	}
	h.changes = make([][]historyChange, len(h.runs))
	for i := 1; i < len(h.runs); i++ {
		h.changes[i] = h.changesAt(i)
	}
	h.sections = append(h.sections, section{sectionKind{id: "runs", title: "Runs, in start order", nav: "runs"}, newHistoryRuns(h)})
	for _, c := range h.cells {
		h.sections = append(h.sections, section{sectionKind{id: "cell-" + idUnsafe.ReplaceAllString(c.id, "-"), title: c.id, nav: c.id}, newHistoryCellSection(h, c)})
	}
	return h, nil
}

func firstCellOf(runs []HistoryRun) string {
	for _, run := range runs {
		if len(run.R.Cells) > 0 {
			return run.R.Cells[0].ID
		}
	}
	return "target/workload/keys=N"
}

// matchCells gathers the cells finished in two runs or more, by compare's
// matching: cell id, then phase name, a run's repeats taken at their median.
func (h *History) matchCells() {
	var ids []string
	byRun := make([]map[string][]*result.Cell, len(h.runs))
	known := map[string]bool{}
	for i, run := range h.runs {
		var runIDs []string
		runIDs, byRun[i] = cellsByID(run.R)
		for _, id := range runIDs {
			if !known[id] {
				known[id] = true
				ids = append(ids, id)
			}
		}
	}
	for _, id := range ids {
		var finished, failed []int
		for i := range h.runs {
			switch {
			case len(okCells(byRun[i][id])) > 0:
				finished = append(finished, i)
			case len(byRun[i][id]) > 0:
				failed = append(failed, i)
			}
		}
		if len(finished) < 2 {
			h.notes = append(h.notes, fmt.Sprintf("%s: finished in %d of the %d runs, not charted", id, len(finished), len(h.runs)))
			continue
		}
		for _, i := range failed {
			h.notes = append(h.notes, fmt.Sprintf("%s: failed in run %s", id, runLabel(i)))
		}
		c := &historyCell{id: id}
		index := map[string]*historyPhase{}
		for _, i := range finished {
			cells := okCells(byRun[i][id])
			c.target = cells[0].Target
			for _, p := range cells[0].Phases {
				ph, ok := index[p.Name]
				if !ok {
					ph = &historyPhase{name: p.Name}
					index[p.Name] = ph
					c.phases = append(c.phases, ph)
				}
				ps := phasesNamed(cells, p.Name)
				ph.points = append(ph.points, historyPoint{run: i, opsS: runValue(ps, "ops_s"), p99: runValue(ps, "p99"),
					thresholds: thresholdsOf(h.runs[i].R, id, c.target, p.Name)})
			}
		}
		h.cells = append(h.cells, c)
	}
}

// thresholdsOf are r's assertions on the throughput or p99 of that cell's
// phase; an assertion without a cell holds for every cell of its target
// (or of the run), one without a phase for every phase.
func thresholdsOf(r *result.Result, id, target, phase string) []result.Assertion {
	var out []result.Assertion
	for _, a := range r.Assertions {
		if thresholdMetric(a.Metric) == "" || (a.Phase != "" && a.Phase != phase) {
			continue
		}
		if a.Cell == id || a.Cell == "" && (a.Target == "" || a.Target == target) {
			out = append(out, a)
		}
	}
	return out
}

// changesAt is what run i changed: the machine and storebench against the
// run before it, each target's version and settings against the last run
// before it that had the target.
func (h *History) changesAt(i int) []historyChange {
	cur := h.runs[i].R
	var out []historyChange
	var cpu []setupDiff
	for _, d := range setupDiffList(h.runs[i-1].R, cur) {
		switch d.kind {
		case diffCPU:
			cpu = append(cpu, d)
		case diffStorebench:
			out = append(out, historyChange{label: "storebench", text: "storebench changed: " + orNone(d.from) + " → " + orNone(d.to)})
		}
	}
	if len(cpu) > 0 {
		out = append([]historyChange{{label: "machine", text: "machine changed: " + machineText(h.runs[i-1].R, len(cpu) > 1 || cpu[0].key == "cores") +
			" → " + machineText(cur, len(cpu) > 1 || cpu[0].key == "cores")}}, out...)
	}
	for _, t := range cur.Targets {
		j := i - 1
		for j >= 0 && !slices.ContainsFunc(h.runs[j].R.Targets, func(u result.Target) bool { return u.Name == t.Name }) {
			j--
		}
		if j < 0 {
			continue
		}
		var settings []string
		for _, d := range setupDiffList(h.runs[j].R, cur) {
			if d.target != t.Name {
				continue
			}
			switch d.kind {
			case diffVersion:
				out = append(out, historyChange{target: t.Name, label: t.Name + " version", text: t.Name + " version changed: " + orNone(d.from) + " → " + orNone(d.to)})
			case diffSetting:
				settings = append(settings, d.key+" "+clip(orNone(d.from))+" → "+clip(orNone(d.to)))
			}
		}
		if len(settings) > 0 {
			if n := len(settings) - maxSettingsShown; n > 0 {
				settings = append(settings[:maxSettingsShown], fmt.Sprintf("and %d more", n))
			}
			out = append(out, historyChange{target: t.Name, label: t.Name + " settings", text: t.Name + " settings changed: " + strings.Join(settings, "; ")})
		}
	}
	return out
}

// maxSettingsShown bounds the settings a change names (a new server version
// changes dozens of defaults at once); the rest are counted.
const maxSettingsShown = 4

// clip shortens a setting's value for a change's text (a DDL runs long).
func clip(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:39]) + "…"
	}
	return s
}

// machineText names a run's machine by its CPU, with its cores when they
// changed.
func machineText(r *result.Result, cores bool) string {
	s := orNone(r.Environment.CPUModel)
	if cores {
		s += ", " + strconv.Itoa(r.Environment.Cores) + " cores"
	}
	return s
}

// changesOf are run i's changes that concern a cell of target: the
// machine's, storebench's and that target's own.
func (h *History) changesOf(i int, target string) []historyChange {
	var out []historyChange
	for _, c := range h.changes[i] {
		if c.target == "" || c.target == target {
			out = append(out, c)
		}
	}
	return out
}

func changeTexts(cs []historyChange) string {
	var s []string
	for _, c := range cs {
		s = append(s, c.text)
	}
	return strings.Join(s, "; ")
}

// changeLabels names changes in short: "machine, redis settings"; "—" for none.
func changeLabels(cs []historyChange) string {
	var s []string
	for _, c := range cs {
		s = append(s, c.label)
	}
	if len(s) == 0 {
		return "—"
	}
	return strings.Join(s, ", ")
}

// runLabel names run i in tables and on the charts' axis: "#2".
func runLabel(i int) string { return "#" + strconv.Itoa(i+1) }

// runStart is run i's start time as tables show it.
func (h *History) runStart(i int) string {
	return h.runs[i].R.StartedAt.UTC().Format("2006-01-02 15:04:05")
}

// title names the page: its suite or scenario when the runs share one.
func (h *History) title() string {
	name := ""
	for i, run := range h.runs {
		n := cmp.Or(run.R.Suite, scenarioName(run.R))
		if i > 0 && n != name {
			name = ""
			break
		}
		name = n
	}
	t := "storebench history · "
	if name != "" {
		t += name + " · "
	}
	return t + strconv.Itoa(len(h.runs)) + " runs"
}

// span says when the runs ran.
func (h *History) span() string {
	first, last := h.runs[0].R.StartedAt, h.runs[len(h.runs)-1].R.StartedAt
	return fmt.Sprintf("%d runs from %s to %s · %d matched cells", len(h.runs), first.UTC().Format(time.DateTime), last.UTC().Format(time.DateTime), len(h.cells))
}

// ---- the runs section -----------------------------------------------------

// historyRuns is the page's first section: every run and what it changed.
type historyRuns struct {
	table *table
	notes []string
}

func newHistoryRuns(h *History) *historyRuns {
	return &historyRuns{table: runsTable(h), notes: h.notes}
}

func runsTable(h *History) *table {
	t := newTable("history-runs", "runs in start order", false,
		column{head: "run", left: true}, column{head: "started (UTC)", left: true}, column{head: "id", left: true},
		column{head: "file", left: true}, column{head: "machine", left: true}, column{head: "storebench", left: true},
		column{head: "changed", left: true})
	for i, run := range h.runs {
		r := run.R
		t.add(textCell(runLabel(i)), textCell(h.runStart(i)), textCell(r.ID), textCell(run.Path),
			textCell(fmt.Sprintf("%s, %d cores", orNone(r.Environment.CPUModel), r.Environment.Cores)),
			textCell(r.Storebench.Version+" "+r.Storebench.Commit), textCell(cmp.Or(changeTexts(h.changes[i]), "—")))
	}
	return t
}

const historyLede = "Cells are matched across runs by id and phases by name, as compare matches them; a run that repeated a cell counts its repeats' median. Each chart has a point per run, in start order; a dashed vertical line marks a change of machine (CPU model, cores), storebench build, or a server's version or effective settings, between the run before and the run it names; a dashed horizontal line is a threshold the runs checked."

func (s *historyRuns) text(w io.Writer) {
	s.table.textUnder(w, "runs in start order")
	if len(s.notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range s.notes {
			fmt.Fprintln(w, "note: "+n)
		}
	}
}

func (s *historyRuns) render(d doc) {
	d.para(historyLede)
	d.table(s.table)
	d.list(s.notes)
}

// ---- one section per matched cell -------------------------------------------

type historyCellSection struct {
	h      *History
	c      *historyCell
	charts []*lineChartSpec // one per phase: ops/s, p99 beside it, its table
}

// newHistoryCellSection builds the cell's charts and tables once, for every
// format to render.
func newHistoryCellSection(h *History, c *historyCell) *historyCellSection {
	s := &historyCellSection{h: h, c: c}
	for k, ph := range c.phases {
		var plots []*lineChartSpec
		for m := range historyMetrics {
			plots = append(plots, s.plot(k, ph, m))
		}
		plots[0].also, plots[0].table = plots[1], s.phaseTable(ph)
		plots[0].title = s.c.id + " " + ph.name + ": ops/s and p99 per run"
		s.charts = append(s.charts, plots[0])
	}
	return s
}

// thresholdKey is one threshold line: a phase's assertion of one metric,
// operator and value.
type thresholdKey struct {
	phase, metric, op string
	value             float64
}

// phaseTable is one phase's figures, a row per run that has it.
func (s *historyCellSection) phaseTable(ph *historyPhase) *table {
	has := map[string]bool{}
	for _, pt := range ph.points {
		for _, a := range pt.thresholds {
			has[thresholdMetric(a.Metric)] = true
		}
	}
	cols := []column{{head: "run", left: true}, {head: "started (UTC)", left: true}}
	for _, m := range historyMetrics {
		cols = append(cols, column{head: m.head, m: m.key})
	}
	for _, m := range historyMetrics {
		if has[m.key] {
			cols = append(cols, column{head: m.head + " threshold", m: "threshold_" + m.key, left: true})
		}
	}
	cols = append(cols, column{head: "changed", left: true})
	t := newTable("history-"+s.c.id+"-"+ph.name, s.c.id+" "+ph.name+": ops/s and p99 per run", false, cols...)
	for _, pt := range ph.points {
		row := []cell{textCell(runLabel(pt.run)), textCell(s.h.runStart(pt.run)),
			figureCell(num(pt.opsS), pt.opsS), figureCell(us(pt.p99), pt.p99)}
		for _, m := range historyMetrics {
			if has[m.key] {
				row = append(row, thresholdCell(pt.thresholds, m.key))
			}
		}
		// The change's name; the runs table above says what it was.
		row = append(row, textCell(changeLabels(s.h.changesOf(pt.run, s.c.target))))
		t.add(row...)
	}
	return t
}

// thresholdCell is a run's thresholds of one metric: "<= 1,000 pass".
func thresholdCell(as []result.Assertion, key string) cell {
	var texts []string
	v := math.NaN()
	for _, a := range as {
		if thresholdMetric(a.Metric) != key {
			continue
		}
		verdict := "FAIL"
		if a.Pass {
			verdict = "pass"
		}
		texts = append(texts, a.Op+" "+num(a.Value)+" "+verdict)
		v = a.Value
	}
	if len(texts) == 0 {
		return textCell("—")
	}
	if len(texts) > 1 { // several bounds on one figure: no one value to check
		return textCell(strings.Join(texts, "; "))
	}
	return figureCell(texts[0], v)
}

// plot is the plot of one metric of the cell's phase k: a point per run,
// a dashed line per threshold, a mark per change.
func (s *historyCellSection) plot(k int, ph *historyPhase, m int) *lineChartSpec {
	metric := historyMetrics[m]
	n := len(s.h.runs)
	spec := &lineChartSpec{
		id:     "history-" + idUnsafe.ReplaceAllString(s.c.id+"-"+ph.name, "-") + "-" + metric.key,
		title:  s.c.id + " " + ph.name + ": " + metric.head + " per run",
		sub:    "a point per run in start order; dashed: thresholds, and changes between runs",
		desc:   fmt.Sprintf("%s of %s %s over %d runs.", metric.head, s.c.id, ph.name, n),
		xLabel: "run, in start order",
		yLabel: metric.head,
		xFmt: func(v float64) string {
			if i := int(v); float64(i) == v && i >= 0 && i < n {
				return runLabel(i)
			}
			return ""
		},
		yFmt: countLabel,
	}
	if metric.key == "p99" {
		spec.yFmt = usLabel
	}
	l := line{key: s.c.id + " " + ph.name, color: k, markers: true, attrs: ` data-label="` + esc(ph.name) + `"`}
	var thresholds []line
	byKey := map[thresholdKey]int{}
	for _, pt := range ph.points {
		v := pt.opsS
		if metric.key == "p99" {
			v = pt.p99
		}
		l.points = append(l.points, point{x: float64(pt.run), y: v, attrs: ` data-run="` + runLabel(pt.run) + `"`,
			title: fmt.Sprintf("%s %s, run %s (%s): %s %s", s.c.id, ph.name, runLabel(pt.run), s.h.runStart(pt.run), num(v), metric.head)})
		for _, a := range pt.thresholds {
			if thresholdMetric(a.Metric) != metric.key {
				continue
			}
			tk := thresholdKey{ph.name, metric.key, a.Op, a.Value}
			j, ok := byKey[tk]
			if !ok {
				j = len(thresholds)
				byKey[tk] = j
				label := metric.head + " threshold " + a.Op + " " + num(a.Value)
				thresholds = append(thresholds, line{key: s.c.id + " " + ph.name + " " + label, color: k, variant: 1,
					attrs: ` data-threshold="` + esc(a.Op+" "+exact(a.Value)) + `" data-label="` + esc(label) + `"`})
			}
			// Half a run either side, so a threshold of one run is a line too.
			lo, hi := math.Max(float64(pt.run)-0.5, 0), math.Min(float64(pt.run)+0.5, float64(n-1))
			thresholds[j].points = append(thresholds[j].points, point{x: lo, y: a.Value}, point{x: hi, y: a.Value})
		}
	}
	spec.lines = append([]line{l}, thresholds...)
	for i := 1; i < n; i++ {
		if cs := s.h.changesOf(i, s.c.target); len(cs) > 0 {
			spec.marks = append(spec.marks, chartMark{x: float64(i) - 0.5, label: changeLabels(cs), title: runLabel(i) + ": " + changeTexts(cs)})
		}
	}
	return spec
}

func (s *historyCellSection) text(w io.Writer) {
	for _, c := range s.charts {
		c.table.textUnder(w, c.table.caption)
	}
}

func (s *historyCellSection) render(d doc) {
	for _, c := range s.charts {
		d.lineChart(c)
	}
}

// ---- the formats ----------------------------------------------------------

// historyFormats maps --format values to the history's renderers.
var historyFormats = map[string]func(io.Writer, *History) error{
	"text":     HistoryText,
	"html":     HistoryHTML,
	"md":       HistoryMarkdown,
	"markdown": HistoryMarkdown,
	"csv":      HistoryCSV,
}

// HistoryForOutput picks the history's renderer as ForOutput picks report's.
func HistoryForOutput(format, out string) (func(io.Writer, *History) error, error) {
	return pick(historyFormats, format, out)
}

// HistoryText writes the history for the terminal: every run, then each
// matched cell's table per phase.
func HistoryText(w io.Writer, h *History) error {
	fmt.Fprintln(w, h.title())
	fmt.Fprintln(w, h.span())
	for _, s := range h.sections {
		s.model.text(w)
	}
	return nil
}

// HistoryMarkdown writes the history as GitHub Markdown.
func HistoryMarkdown(w io.Writer, h *History) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n", mdText(h.title()), mdText(h.span()))
	for _, s := range h.sections {
		s.write(mdOut{&b})
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// HistoryHTML writes the history as one self-contained page, as HTML
// writes a report: the same style, charts and tables, nothing fetched.
func HistoryHTML(w io.Writer, h *History) error {
	p := &page{}
	p.s("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	p.s(`<meta name="viewport" content="width=device-width, initial-scale=1">` + "\n")
	p.s(`<meta name="color-scheme" content="light dark">` + "\n")
	p.f("<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n", esc(h.title()), reportCSS)
	p.f("<header>\n<h1>%s</h1>\n<p class=\"meta\">%s</p>\n", esc(h.title()), esc(h.span()))
	p.s(`<nav class="toc" aria-label="sections">`)
	for _, s := range h.sections {
		p.f(`<a href="#%s">%s</a>`, esc(s.id), esc(s.nav))
	}
	p.s("</nav>\n</header>\n<main>\n")
	for _, s := range h.sections {
		s.write(htmlOut{p})
	}
	p.f("</main>\n<footer>Rendered by storebench history from %d result files. Every figure on this page comes from them; the page loads nothing from the network.</footer>\n", len(h.runs))
	p.f("<script>\n%s</script>\n</body>\n</html>\n", reportJS)
	_, err := io.WriteString(w, p.b.String())
	return err
}

// HistoryCSVColumns are the history CSV's columns: a row per run × matched
// cell × phase × metric (throughput_ops_s, latency_p99_us, and
// threshold_<metric> with the operator and the verdict in detail), and a
// row per change (metric "change", cell and phase empty, the change in
// detail).
var HistoryCSVColumns = []string{"run_id", "started_at", "cell_id", "phase", "metric", "value", "unit", "detail"}

// HistoryCSV writes the history's figures, one per row.
func HistoryCSV(w io.Writer, h *History) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(HistoryCSVColumns); err != nil {
		return err
	}
	row := func(i int, cellID, phase, metric, value, unit, detail string) {
		r := h.runs[i].R
		_ = cw.Write([]string{r.ID, r.StartedAt.UTC().Format(time.RFC3339Nano), cellID, phase, metric, value, unit, detail})
	}
	for i := range h.runs {
		for _, c := range h.changes[i] {
			row(i, "", "", "change", "", "", c.text)
		}
	}
	for _, c := range h.cells {
		for _, ph := range c.phases {
			for _, pt := range ph.points {
				for _, m := range historyMetrics {
					v := pt.opsS
					if m.key == "p99" {
						v = pt.p99
					}
					row(pt.run, c.id, ph.name, m.csvName, exact(v), m.unit, "")
					for _, a := range pt.thresholds {
						if thresholdMetric(a.Metric) == m.key {
							verdict := "fail"
							if a.Pass {
								verdict = "pass"
							}
							row(pt.run, c.id, ph.name, "threshold_"+m.csvName, exact(a.Value), m.unit, a.Op+" "+verdict)
						}
					}
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

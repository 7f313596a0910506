package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/storebench/storebench/internal/result"
)

// The report's sections that a model of their own fills (sectionKinds
// below, in the one order of every format) are each built once from the
// result into a small model of tables and sentences (payments.go,
// network.go, …, capacity.go), which every writer renders: the terminal
// through the model's text, Markdown and HTML through its render over the
// doc interface below, so a figure cannot be in one format and missing
// from another.

// column is one column of a section table.
type column struct {
	head string
	m    string // HTML data-m of the column's figures; "" for text
	left bool   // text, aligned left in Markdown and HTML
}

// cell is one table cell: its text in every format and, where it is a
// figure, the exact value (HTML data-v) a test or a script can check.
type cell struct{ text, v string }

// textCell is a cell without an exact value.
func textCell(s string) cell { return cell{text: s} }

// figureCell is a cell that shows v as text.
func figureCell(text string, v float64) cell { return cell{text: text, v: exact(v)} }

// countCell is a count, with thousands separators.
func countCell(n int64) cell { return cell{text: thousands(n), v: fmt.Sprint(n)} }

// table is a section's table; the first column names the row.
type table struct {
	name    string // HTML data-table
	caption string // Markdown and HTML; the terminal prints the section's own heading
	cols    []column
	rows    [][]cell
	// alignRight: the terminal right-aligns every column (figures), else
	// it aligns them left (prose).
	alignRight bool
}

// newTable starts a table with these column heads.
func newTable(name, caption string, alignRight bool, cols ...column) *table {
	return &table{name: name, caption: caption, cols: cols, alignRight: alignRight}
}

func (t *table) add(cells ...cell) { t.rows = append(t.rows, cells) }

// textTable starts a terminal table: its title line on w, then the header
// row of right-aligned columns on the tabwriter it returns (to Flush).
func textTable(w io.Writer, title, header string) *tabwriter.Writer {
	fmt.Fprintln(w, title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, header)
	return tw
}

// cellsWith are the cells of r that carry the summary of (a workload's
// section is built from those alone).
func cellsWith[S any](r *result.Result, of func(*result.Cell) *S) []*result.Cell {
	var cells []*result.Cell
	for i := range r.Cells {
		if of(&r.Cells[i]) != nil {
			cells = append(cells, &r.Cells[i])
		}
	}
	return cells
}

// orNil is t, or nil when no row went into it: a part of a section that
// no cell has figures for is nil, and no format writes anything of it.
func (t *table) orNil() *table {
	if len(t.rows) == 0 {
		return nil
	}
	return t
}

// textUnder prints the table for the terminal after a blank line and its
// title line, the layout of every titled table of a section; nothing for
// a nil table.
func (t *table) textUnder(w io.Writer, title string) {
	if t == nil {
		return
	}
	fmt.Fprintln(w, "\n"+title)
	t.text(w)
}

// text writes the table for the terminal.
func (t *table) text(w io.Writer) {
	flags := uint(0)
	if t.alignRight {
		flags = tabwriter.AlignRight
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', flags)
	line := func(cells []string) {
		if t.alignRight { // a trailing tab ends the last column, so it aligns too
			fmt.Fprint(tw, strings.Join(cells, "\t")+"\t\n")
		} else {
			fmt.Fprint(tw, strings.Join(cells, "\t")+"\n")
		}
	}
	heads := make([]string, len(t.cols))
	for i, c := range t.cols {
		heads[i] = c.head
	}
	line(heads)
	for _, row := range t.rows {
		texts := make([]string, len(row))
		for i, c := range row {
			texts[i] = c.text
		}
		line(texts)
	}
	tw.Flush()
}

// doc is what a section renderer writes to: Markdown or HTML.
type doc interface {
	// heading opens a section (id: the HTML anchor) or, with id "", a
	// subsection.
	heading(id, title string)
	para(text string)
	table(t *table)
	list(items []string)
	// lineChart draws a chart where the format has charts (HTML); its
	// numbers are in a table the section writes as well.
	lineChart(c *lineChartSpec)
	end()
}

// subsectionTable writes a titled subsection of one table, under its
// lede when there is one (Markdown, HTML); nothing for a nil table.
func subsectionTable(d doc, title, lede string, t *table) {
	if t == nil {
		return
	}
	d.heading("", title)
	if lede != "" {
		d.para(lede)
	}
	d.table(t)
}

// lineChartSpec is a line chart of a section, with its table.
type lineChartSpec struct {
	id, title, sub, desc string
	xLabel, yLabel       string
	xLog, yLog           bool
	xFmt, yFmt           func(float64) string
	lines                []line
	marks                []chartMark
	// also is a second plot of the same x drawn beside this one (another
	// metric, its own y axis), in the same figure, sharing its legend and
	// its table.
	also  *lineChartSpec
	table *table
}

// ---- Markdown ---------------------------------------------------------------

type mdOut struct{ b *strings.Builder }

func (d mdOut) heading(id, title string) {
	level := "##"
	if id == "" {
		level = "###"
	}
	fmt.Fprintf(d.b, "\n%s %s\n", level, mdText(title))
}

func (d mdOut) para(text string) { fmt.Fprintf(d.b, "\n%s\n", mdText(text)) }

func (d mdOut) list(items []string) {
	if len(items) == 0 {
		return
	}
	d.b.WriteString("\n")
	for _, s := range items {
		fmt.Fprintf(d.b, "- %s\n", mdText(s))
	}
}

func (d mdOut) table(t *table) {
	if t.caption != "" {
		fmt.Fprintf(d.b, "\n%s:\n", mdText(t.caption))
	}
	d.b.WriteString("\n|")
	align := "|"
	for _, c := range t.cols {
		fmt.Fprintf(d.b, " %s |", mdText(c.head))
		if c.left {
			align += ":--|"
		} else {
			align += "--:|"
		}
	}
	d.b.WriteString("\n" + align + "\n")
	for _, row := range t.rows {
		d.b.WriteString("|")
		for _, c := range row {
			fmt.Fprintf(d.b, " %s |", mdText(c.text))
		}
		d.b.WriteString("\n")
	}
}

// lineChart: Markdown has no charts; the section's table has the numbers.
func (d mdOut) lineChart(c *lineChartSpec) { d.table(c.table) }

func (d mdOut) end() {}

// ---- HTML -------------------------------------------------------------------

type htmlOut struct{ p *page }

func (d htmlOut) heading(id, title string) {
	if id == "" {
		d.p.f("<h3>%s</h3>\n", esc(title))
		return
	}
	d.p.f(`<section id="%s"><h2>%s</h2>`+"\n", esc(id), esc(title))
}

func (d htmlOut) para(text string) { d.p.f(`<p class="lede">%s</p>`+"\n", esc(text)) }

func (d htmlOut) list(items []string) {
	if len(items) == 0 {
		return
	}
	d.p.s(`<ul class="notes">`)
	for _, s := range items {
		d.p.f("<li>%s</li>", esc(s))
	}
	d.p.s("</ul>\n")
}

func (d htmlOut) table(t *table) {
	d.p.s(`<div class="table-wrap">`)
	d.p.tableHTML(t)
	d.p.s("</div>\n")
}

func (p *page) tableHTML(t *table) {
	p.f(`<table data-table="%s">`, esc(t.name))
	if t.caption != "" {
		p.f("<caption>%s</caption>", esc(t.caption))
	}
	p.s("<thead><tr>")
	for _, c := range t.cols {
		p.f(`<th scope="col"%s>%s</th>`, leftClass(c.left), esc(c.head))
	}
	p.s("</tr></thead><tbody>")
	for _, row := range t.rows {
		p.s("<tr>")
		for i, c := range row {
			col := t.cols[min(i, len(t.cols)-1)]
			attrs := leftClass(col.left && i > 0)
			if c.v != "" && col.m != "" {
				attrs += fmt.Sprintf(` data-m="%s" data-v="%s"`, esc(col.m), esc(c.v))
			}
			if i == 0 {
				p.f(`<th scope="row"%s>%s</th>`, attrs, esc(c.text))
			} else {
				p.f(`<td%s>%s</td>`, attrs, esc(c.text))
			}
		}
		p.s("</tr>")
	}
	p.s("</tbody></table>")
}

func leftClass(left bool) string {
	if left {
		return ` class="l wrap"`
	}
	return ""
}

func (d htmlOut) end() { d.p.s("</section>\n") }

// lineChart draws the spec as a figure (its second plot beside it, if it
// has one), its table inside it (every chart of the page carries the table
// of its numbers).
func (d htmlOut) lineChart(s *lineChartSpec) {
	p := d.p
	var svgs []string
	var legend []line
	for ps := s; ps != nil; ps = ps.also {
		svg, ok := plotSVG(ps)
		if !ok {
			continue
		}
		svgs = append(svgs, svg)
		for _, l := range ps.lines {
			if !slices.ContainsFunc(legend, func(m line) bool { return m.key == l.key }) {
				legend = append(legend, l)
			}
		}
	}
	if len(svgs) == 0 { // no point: the table alone
		d.table(s.table)
		return
	}
	p.s(`<div class="charts">` + "\n")
	p.f(`<figure class="chart" id="%s-fig" data-chart="%s">`, esc(s.id), esc(s.table.name))
	p.f(`<figcaption><strong>%s</strong><span class="sub">%s</span></figcaption>`, esc(s.title), esc(s.sub))
	if len(svgs) > 1 {
		p.s(`<div class="plots">` + strings.Join(svgs, "") + `</div>`)
	} else {
		p.s(svgs[0])
	}
	p.legend(legend, true)
	p.s(`<div class="table-wrap">`)
	p.tableHTML(s.table)
	p.s("</div></figure>\n</div>\n")
}

// plotSVG draws one plot of a line chart; false when it has no point.
func plotSVG(s *lineChartSpec) (string, bool) {
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, l := range s.lines {
		for _, pt := range l.points {
			xlo, xhi, ylo, yhi = math.Min(xlo, pt.x), math.Max(xhi, pt.x), math.Min(ylo, pt.y), math.Max(yhi, pt.y)
		}
	}
	if math.IsInf(xlo, 1) {
		return "", false
	}
	c := newChart(s.id, 600, 340, 64, 20, 28, 40)
	axis := func(log bool, lo, hi, a, b float64, f func(float64) string) scale {
		if log {
			return newLogScale(lo, hi, a, b, f)
		}
		return newLinScale(math.Min(lo, 0), hi, a, b, f)
	}
	x := axis(s.xLog, xlo, xhi, c.left, c.right, s.xFmt)
	y := axis(s.yLog, ylo, yhi, c.bottom, c.top, s.yFmt)
	c.open(s.title, s.desc+" The table below has the numbers.")
	c.grid(x, y, s.xLabel, s.yLabel)
	c.marks(x, s.marks)
	c.lines(x, y, s.lines, "plot")
	return c.close(), true
}

// tableSection is a section that is one table under a note: the terminal
// prints its title and the table, Markdown and HTML the note and the table.
type tableSection struct {
	table           *table
	note, textTitle string
}

// newTableSection is the section of t; nil when no row went into it.
func newTableSection(t *table, note, textTitle string) *tableSection {
	if t.orNil() == nil {
		return nil
	}
	return &tableSection{table: t, note: note, textTitle: textTitle}
}

// text prints the section for the terminal; nothing for a nil section.
func (s *tableSection) text(w io.Writer) {
	if s != nil {
		s.table.textUnder(w, s.textTitle)
	}
}

func (s *tableSection) render(d doc) {
	d.para(s.note)
	d.table(s.table)
}

// sectionModel is what a section's model does: print itself for the
// terminal and render itself to Markdown or HTML.
type sectionModel interface {
	text(w io.Writer)
	render(d doc)
}

// sectionKind is one entry of sectionKinds: the section's HTML anchor,
// heading and table-of-contents text, and how its model is built (nil
// when the result has nothing for it).
type sectionKind struct {
	id, title string
	nav       string // the HTML table of contents' link text
	build     func(r *result.Result, colorOf map[string]int) sectionModel
}

// sectionKinds are the report's sections that a model of their own fills,
// in the one order the terminal, Markdown and HTML all write them (CSV
// writes their figures per cell, csv.go). A new section: its model in a
// file of its own, and a line here.
var sectionKinds = []sectionKind{
	{"asserts", "Assertions", "assertions", func(r *result.Result, _ map[string]int) sectionModel { return present(newAssertsModel(r)) }},
	{"machine", "Machine check", "machine", func(r *result.Result, _ map[string]int) sectionModel { return present(newMachineModel(r)) }},
	{"payments", "Payments", "payments", func(r *result.Result, c map[string]int) sectionModel { return present(newPaymentsModel(r, c)) }},
	{"network", "Network: latency against round-trip time", "network", func(r *result.Result, c map[string]int) sectionModel { return present(newNetworkModel(r, c)) }},
	{"nodes", "Ops per node", "nodes", func(r *result.Result, _ map[string]int) sectionModel { return present(newNodesModel(r)) }},
	{"replica-lag", "Replica lag", "replica lag", func(r *result.Result, _ map[string]int) sectionModel { return present(newReplicaLagModel(r)) }},
	{"durability", "Durability", "durability", func(r *result.Result, _ map[string]int) sectionModel { return present(newDurabilityModel(r)) }},
	{"sessions", "Sessions", "sessions", func(r *result.Result, _ map[string]int) sectionModel { return present(newSessionsModel(r)) }},
	{"cache-aside", "Cache-aside", "cache-aside", func(r *result.Result, c map[string]int) sectionModel { return present(newCacheAsideModel(r, c)) }},
	{"capacity", "Capacity at a latency budget", "capacity", func(r *result.Result, c map[string]int) sectionModel { return present(newCapacityModel(r, c)) }},
	{"replay", "Replay", "replay", func(r *result.Result, c map[string]int) sectionModel { return present(newReplayModel(r, c)) }},
	{"platform", "Platform stalls", "platform stalls", func(r *result.Result, _ map[string]int) sectionModel { return present(newPlatformModel(r)) }},
}

// present is m as a sectionModel, nil when m is nil (a nil pointer in an
// interface would not be).
func present[M any, P interface {
	*M
	sectionModel
}](m P) sectionModel {
	if m == nil {
		return nil
	}
	return m
}

// section is one section of a report, its model built once.
type section struct {
	sectionKind
	model sectionModel
}

// heading is the section's title in Markdown and HTML; a model that
// names itself (durability: what was killed) says the rest.
func (s section) heading() string {
	if t, ok := s.model.(interface{ subtitle() string }); ok {
		return s.title + ": " + t.subtitle()
	}
	return s.title
}

func (s section) write(d doc) {
	d.heading(s.id, s.heading())
	s.model.render(d)
	d.end()
}

// sections are the result's sections, in sectionKinds' order. colorOf
// gives each target its colour in the charts (nil: the terminal's, which
// has none).
func sections(r *result.Result, colorOf map[string]int) []section {
	var out []section
	for _, k := range sectionKinds {
		if m := k.build(r, colorOf); m != nil {
			out = append(out, section{k, m})
		}
	}
	return out
}

// sectionText prints the section of that id for the terminal; nothing when
// the result has nothing for it.
func sectionText(w io.Writer, r *result.Result, id string) {
	for _, k := range sectionKinds {
		if k.id != id {
			continue
		}
		if m := k.build(r, nil); m != nil {
			m.text(w)
		}
	}
}

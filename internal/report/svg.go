package report

import (
	"fmt"
	"html"
	"iter"
	"math"
	"strconv"
	"strings"
)

// The charts are inline SVG written here, by hand: no library, no script,
// nothing fetched. Colours and fonts come from the page's CSS (currentColor
// and classes), so one drawing serves light mode, dark mode and print.

// tick is one labelled position on an axis.
type tick struct {
	v     float64
	label string
	minor bool // a grid line without a label
}

// scale maps data to pixels.
type scale interface {
	pos(v float64) float64
	ticks() []tick
}

// logScale is a base-10 logarithmic axis over whole decades.
type logScale struct {
	lo, hi float64 // data bounds, powers of ten
	a, b   float64 // pixels of lo and hi
	format func(float64) string
	at     []float64 // when set, the only labelled ticks
}

// newLogScale covers [lo, hi] with whole decades, within the powers of
// ten a float64 holds (an infinite bound would make the decades infinite).
func newLogScale(lo, hi, a, b float64, format func(float64) string) *logScale {
	if !(lo > 0) || math.IsInf(lo, 1) {
		lo = hi
	}
	if !(hi > 0) || math.IsInf(hi, 1) {
		lo, hi = 1, 10
	}
	if lo > hi {
		lo, hi = hi, lo
	}
	l := math.Max(math.Pow(10, math.Floor(math.Log10(lo)+1e-9)), 1e-308)
	h := math.Min(math.Pow(10, math.Ceil(math.Log10(hi)-1e-9)), 1e308)
	if h <= l {
		h = l * 10
	}
	return &logScale{lo: l, hi: h, a: a, b: b, format: format}
}

func (s *logScale) pos(v float64) float64 {
	if !(v > 0) {
		v = s.lo
	}
	f := (math.Log10(v) - math.Log10(s.lo)) / (math.Log10(s.hi) - math.Log10(s.lo))
	return s.a + f*(s.b-s.a)
}

func (s *logScale) ticks() []tick {
	if s.at != nil {
		var t []tick
		for _, v := range s.at {
			t = append(t, tick{v: v, label: s.format(v)})
		}
		return t
	}
	decades := int(math.Round(math.Log10(s.hi) - math.Log10(s.lo))) // hi/lo overflows for 1e-308..1e308
	var t []tick
	for d := 0; d <= decades; d++ {
		base := s.lo * math.Pow(10, float64(d))
		if math.IsInf(base, 0) { // 10^d overflows before lo·10^d does: add exponents
			base = math.Pow(10, math.Round(math.Log10(s.lo))+float64(d))
		}
		t = append(t, tick{v: base, label: s.format(base)})
		if d == decades {
			break
		}
		for _, m := range []float64{2, 5} {
			t = append(t, tick{v: base * m, label: s.format(base * m), minor: decades > 2})
		}
	}
	return t
}

// linScale is a linear axis from 0 (or lo) with round steps.
type linScale struct {
	lo, hi, a, b float64
	step         float64
	format       func(float64) string
}

func newLinScale(lo, hi, a, b float64, format func(float64) string) *linScale {
	if !(hi > lo) || math.IsInf(hi, 1) {
		hi = lo + 1
	}
	step := niceStep((hi - lo) / 6)
	hi = math.Ceil(hi/step-1e-9) * step
	return &linScale{lo: lo, hi: hi, a: a, b: b, step: step, format: format}
}

func niceStep(raw float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

func (s *linScale) pos(v float64) float64 {
	return s.a + (v-s.lo)/(s.hi-s.lo)*(s.b-s.a)
}

// maxLinTicks bounds a linear axis's ticks; newLinScale aims at about 7.
const maxLinTicks = 20

func (s *linScale) ticks() []tick {
	var t []tick
	// By index, not by adding steps: adding a step too small to change a
	// large value (or to an infinite one) would never pass hi.
	for i := range maxLinTicks + 1 {
		v := s.lo + float64(i)*s.step
		if !(v <= s.hi+s.step/2) {
			break
		}
		t = append(t, tick{v: v, label: s.format(v)})
	}
	return t
}

// Formats of axis labels.

// labelUnit is a label's unit from size up: the value is shown divided by size.
type labelUnit struct {
	size   float64
	suffix string
}

// Units from the largest down; the last one takes whatever is smaller.
var (
	usUnits    = []labelUnit{{1e6, " s"}, {1e3, " ms"}, {1, " µs"}}
	countUnits = []labelUnit{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}}
)

// scaledLabel prints v in the largest of units it reaches.
func scaledLabel(v float64, units []labelUnit) string {
	for _, u := range units[:len(units)-1] {
		if v >= u.size {
			return trimNum(v/u.size) + u.suffix
		}
	}
	return trimNum(v) + units[len(units)-1].suffix
}

// usLabel prints a latency given in µs with a unit that fits: 500 µs, 2 ms, 1 s.
func usLabel(v float64) string { return scaledLabel(v, usUnits) }

// msLabel prints a duration given in ms.
func msLabel(v float64) string { return usLabel(v * 1000) }

// countLabel prints 1k, 10M, 0.5.
func countLabel(v float64) string { return scaledLabel(v, countUnits) }

func trimNum(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// ninesLabel names a position on the nines axis: 0 -> 0%, 2 -> 99%, 3 -> 99.9%.
func ninesLabel(x float64) string {
	if x == 0 {
		return "0%"
	}
	decimals := max(0, int(math.Ceil(x-1e-9))-2)
	return strconv.FormatFloat(100*(1-math.Pow(10, -x)), 'f', decimals, 64) + "%"
}

// chart is one SVG drawing in the making.
type chart struct {
	b                        strings.Builder
	id                       string
	w, h                     float64
	left, right, top, bottom float64 // plot area
}

func newChart(id string, w, h, marginLeft, marginRight, marginTop, marginBottom float64) *chart {
	return &chart{id: id, w: w, h: h, left: marginLeft, right: w - marginRight, top: marginTop, bottom: h - marginBottom}
}

// open starts the drawing with its accessible name and description.
func (c *chart) open(title, desc string) {
	fmt.Fprintf(&c.b, `<svg class="plot" id="%s" viewBox="0 0 %s %s" role="img" aria-labelledby="%s-title %s-desc" xmlns="http://www.w3.org/2000/svg">`,
		esc(c.id), f1(c.w), f1(c.h), esc(c.id), esc(c.id))
	fmt.Fprintf(&c.b, `<title id="%s-title">%s</title><desc id="%s-desc">%s</desc>`, esc(c.id), esc(title), esc(c.id), esc(desc))
}

// visibleTicks yields s's ticks at their positions, but for those outside
// [lo, hi] (half a pixel of slack for rounding).
func visibleTicks(s scale, lo, hi float64) iter.Seq2[float64, tick] {
	return func(yield func(float64, tick) bool) {
		for _, t := range s.ticks() {
			p := s.pos(t.v)
			if p < lo-0.5 || p > hi+0.5 {
				continue
			}
			if !yield(p, t) {
				return
			}
		}
	}
}

// class is the tick's grid line's CSS class.
func (t tick) class() string {
	if t.minor {
		return "grid minor"
	}
	return "grid"
}

// grid draws the axes, their ticks and grid lines, and their names.
func (c *chart) grid(x, y scale, xName, yName string) {
	c.b.WriteString(`<g class="axes">`)
	if x != nil {
		for px, t := range visibleTicks(x, c.left, c.right) {
			fmt.Fprintf(&c.b, `<line class="%s" x1="%s" y1="%s" x2="%s" y2="%s"/>`, t.class(), f1(px), f1(c.top), f1(px), f1(c.bottom))
			if !t.minor {
				fmt.Fprintf(&c.b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`, f1(px), f1(c.bottom+14), esc(t.label))
			}
		}
	}
	if y != nil {
		for py, t := range visibleTicks(y, c.top, c.bottom) {
			fmt.Fprintf(&c.b, `<line class="%s" x1="%s" y1="%s" x2="%s" y2="%s"/>`, t.class(), f1(c.left), f1(py), f1(c.right), f1(py))
			if !t.minor {
				fmt.Fprintf(&c.b, `<text class="tick" x="%s" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`, f1(c.left-6), f1(py), esc(t.label))
			}
		}
	}
	fmt.Fprintf(&c.b, `<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(c.left), f1(c.bottom), f1(c.right), f1(c.bottom))
	if y != nil {
		fmt.Fprintf(&c.b, `<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(c.left), f1(c.top), f1(c.left), f1(c.bottom))
	}
	if xName != "" {
		fmt.Fprintf(&c.b, `<text class="axis-name" x="%s" y="%s" text-anchor="middle">%s</text>`, f1((c.left+c.right)/2), f1(c.h-6), esc(xName))
	}
	if yName != "" {
		fmt.Fprintf(&c.b, `<text class="axis-name" x="%s" y="%s" text-anchor="start">%s</text>`, f1(4), f1(c.top-10), esc(yName))
	}
	c.b.WriteString(`</g>`)
}

// clip defines the plot area as a clip path and returns the attribute that
// keeps a series inside it.
func (c *chart) clip(name string) string {
	id := c.id + "-clip-" + name
	fmt.Fprintf(&c.b, `<clipPath id="%s"><rect x="%s" y="%s" width="%s" height="%s"/></clipPath>`,
		esc(id), f1(c.left-6), f1(c.top-6), f1(c.right-c.left+12), f1(c.bottom-c.top+12))
	return ` clip-path="url(#` + esc(id) + `)"`
}

func (c *chart) close() string {
	c.b.WriteString(`</svg>`)
	return c.b.String()
}

// point is one data point of a line, with the attributes a test or a reader
// can check against the result file.
type point struct {
	x, y  float64
	title string // tooltip
	attrs string // more data attributes
}

// line is one series of a line chart.
type line struct {
	key     string // data-series: the cell id
	color   int
	variant int
	points  []point
	markers bool
	attrs   string // extra attributes of the series' group
}

// lines draws each series as a polyline with optional markers; every point
// carries its data in data-x and data-y.
func (c *chart) lines(x, y scale, ls []line, clipName string) {
	clip := c.clip(clipName)
	for _, l := range ls {
		fmt.Fprintf(&c.b, `<g class="series c%d" data-series="%s"%s%s>`, l.color%paletteSize, esc(l.key), l.attrs, clip)
		var pts []string
		for _, p := range l.points {
			pts = append(pts, f1(x.pos(p.x))+","+f1(y.pos(p.y)))
		}
		fmt.Fprintf(&c.b, `<polyline class="line" fill="none" stroke="currentColor" stroke-width="2"%s points="%s"/>`, dashAttr(l.variant), strings.Join(pts, " "))
		for _, p := range l.points {
			cls := "pt"
			if !l.markers {
				cls = "pt bare"
			}
			fmt.Fprintf(&c.b, `<g class="%s" data-x="%s" data-y="%s"%s>`, cls, exact(p.x), exact(p.y), p.attrs)
			if l.markers {
				c.b.WriteString(marker(l.color, x.pos(p.x), y.pos(p.y), 3.5))
			}
			if p.title != "" {
				fmt.Fprintf(&c.b, `<title>%s</title>`, esc(p.title))
			}
			c.b.WriteString(`</g>`)
		}
		c.b.WriteString(`</g>`)
	}
}

// chartMark is an event on a chart's x axis (a change between two runs):
// a vertical line, a short label at its top, its whole text as a tooltip.
type chartMark struct {
	x            float64
	label, title string
}

// marks draws each mark across the plot area; labels of nearby marks are
// staggered down so they do not print over each other.
func (c *chart) marks(x scale, ms []chartMark) {
	for i, m := range ms {
		px := x.pos(m.x)
		fmt.Fprintf(&c.b, `<g class="mark" data-x="%s" data-mark="%s"><title>%s</title>`, exact(m.x), esc(m.title), esc(m.title))
		fmt.Fprintf(&c.b, `<line class="mark" x1="%s" y1="%s" x2="%s" y2="%s" stroke-dasharray="4 3"/>`, f1(px), f1(c.top), f1(px), f1(c.bottom))
		// Right of its line, or left of it in the plot's right half, to stay inside.
		tx, anchor := px+3, "start"
		if px > (c.left+c.right)/2 {
			tx, anchor = px-3, "end"
		}
		fmt.Fprintf(&c.b, `<text class="mark-label" x="%s" y="%s" text-anchor="%s">%s</text></g>`, f1(tx), f1(c.top+10+float64(i%3)*12), anchor, esc(m.label))
	}
}

// paletteSize is the number of series colours the CSS defines (.c0 … .c7).
const paletteSize = 8

// dashAttr gives each parameter variant of a workload its own dash pattern.
func dashAttr(variant int) string {
	switch variant % 4 {
	case 1:
		return ` stroke-dasharray="7 4"`
	case 2:
		return ` stroke-dasharray="2 3"`
	case 3:
		return ` stroke-dasharray="9 3 2 3"`
	}
	return ""
}

// marker draws shape i at (x, y): circle, square, triangle, diamond,
// triangle down, cross — so series differ by more than colour.
func marker(i int, x, y, r float64) string {
	switch i % 6 {
	case 1:
		return fmt.Sprintf(`<rect class="mk" x="%s" y="%s" width="%s" height="%s" fill="currentColor"/>`, f1(x-r*0.9), f1(y-r*0.9), f1(r*1.8), f1(r*1.8))
	case 2:
		return fmt.Sprintf(`<path class="mk" d="M%s %sL%s %sL%s %sZ" fill="currentColor"/>`, f1(x), f1(y-r*1.2), f1(x+r*1.1), f1(y+r*0.8), f1(x-r*1.1), f1(y+r*0.8))
	case 3:
		return fmt.Sprintf(`<path class="mk" d="M%s %sL%s %sL%s %sL%s %sZ" fill="currentColor"/>`, f1(x), f1(y-r*1.3), f1(x+r*1.3), f1(y), f1(x), f1(y+r*1.3), f1(x-r*1.3), f1(y))
	case 4:
		return fmt.Sprintf(`<path class="mk" d="M%s %sL%s %sL%s %sZ" fill="currentColor"/>`, f1(x), f1(y+r*1.2), f1(x+r*1.1), f1(y-r*0.8), f1(x-r*1.1), f1(y-r*0.8))
	case 5:
		return fmt.Sprintf(`<path class="mk" d="M%s %sL%s %sM%s %sL%s %s" stroke="currentColor" stroke-width="2" fill="none"/>`, f1(x-r), f1(y-r), f1(x+r), f1(y+r), f1(x-r), f1(y+r), f1(x+r), f1(y-r))
	}
	return fmt.Sprintf(`<circle class="mk" cx="%s" cy="%s" r="%s" fill="currentColor"/>`, f1(x), f1(y), f1(r))
}

// swatch is a legend's small picture of a series: its line and marker.
func swatch(color, variant int, withMarker bool) string {
	m := ""
	if withMarker {
		m = marker(color, 11, 6, 3)
	}
	return fmt.Sprintf(`<svg class="swatch c%d" width="22" height="12" viewBox="0 0 22 12" aria-hidden="true"><line x1="1" y1="6" x2="21" y2="6" stroke="currentColor" stroke-width="2"%s/>%s</svg>`,
		color%paletteSize, dashAttr(variant), m)
}

// f1 prints a pixel coordinate.
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func esc(s string) string { return html.EscapeString(s) }

// labelWidth estimates the pixels of a label at the charts' 11 px font.
func labelWidth(s string) float64 { return float64(len([]rune(s))) * 6.3 }

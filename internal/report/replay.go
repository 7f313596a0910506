package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/result/replay"
)

// replayOf is a cell's replay summary: the one place this file reads it.
func replayOf(c *result.Cell) *replay.Summary { return c.Replay }

// replayModel is the replay section of every format: a row per cell (what
// was replayed of the trace, hits and misses, the sends' lateness), and
// per cell the trace's own request rate beside the achieved one, a second
// at a time.
type replayModel struct {
	verdict *table
	rates   []*lineChartSpec
	// rateLines are the rates for the terminal: a line per timed cell,
	// the trace's and the achieved, averaged over at most rateBuckets
	// spans of the replay.
	rateLines []string
	notes     []string
}

// rateBuckets bounds a terminal rate line: a long replay's seconds are
// averaged into this many spans.
const rateBuckets = 12

const replayTitle = "replay: a recorded trace at its recorded pace"

// replayIntro says what the figures mean.
const replayIntro = "Each request of the trace was sent at its recorded time divided by the speed (max: as fast as the connections allow), every request of one recorded client on one connection, in order; latency counts from that time. Requests are the trace's after expansion (op_count); replayed were sent; unsupported are commands no key-value store has, counted by name and not sent. Lateness is how far behind its scaled time each send left. A miss is a get of a key not there, as in the recorded system when the trace never set it."

// newReplayModel builds the section; nil without a replay cell.
func newReplayModel(r *result.Result, colorOf map[string]int) *replayModel {
	cells := cellsWith(r, replayOf)
	if len(cells) == 0 {
		return nil
	}
	m := &replayModel{verdict: newTable("replay", "per cell: the trace, what was replayed of it, hits and misses, how late the sends left", true,
		column{head: "cell", left: true}, column{head: "trace", left: true}, column{head: "format", left: true}, column{head: "speed", left: true},
		column{head: "requests", m: "requests"}, column{head: "replayed", m: "replayed"}, column{head: "unsupported", left: true},
		column{head: "hits", m: "hits"}, column{head: "misses", m: "misses"},
		column{head: "lateness p50 µs", m: "lateness_p50_us"}, column{head: "lateness p99 µs", m: "lateness_p99_us"}, column{head: "lateness max µs", m: "lateness_max_us"},
		column{head: "duration s", m: "duration_s"}, column{head: "trace s", m: "trace_duration_s"})}
	for i, c := range cells {
		s := replayOf(c)
		traceS := textCell("—")
		if s.TraceDurationS > 0 {
			traceS = figureCell(fixed(s.TraceDurationS, 3), s.TraceDurationS)
		}
		late := []cell{textCell("—"), textCell("—"), textCell("—")}
		if l := s.LatenessUs; l != nil {
			late = []cell{figureCell(us(l.P50), l.P50), figureCell(us(l.P99), l.P99), figureCell(us(l.Max), l.Max)}
		}
		m.verdict.add(append(append([]cell{textCell(c.Label()), textCell(s.Trace), textCell(s.Format + compressed(s.Compression)), textCell(s.Speed),
			countCell(s.Requests), countCell(s.Replayed), textCell(unsupportedText(s.Unsupported)),
			countCell(s.Hits), countCell(s.Misses)}, late...),
			figureCell(fixed(s.DurationS, 3), s.DurationS), traceS)...)
		if ph, ok := c.Phase("replay"); ok && len(s.TraceRate) > 0 {
			m.rates = append(m.rates, replayRateChart(c, s, ph.Series, colorOf, i))
			m.rateLines = append(m.rateLines, replayRateLine(c.Label(), s.TraceRate, ph.Series))
		}
	}
	m.notes = replayNotes(cells)
	return m
}

// replayNotes are the cells' notes, each once: with the cells it is of, or
// "every cell" when it is of them all.
func replayNotes(cells []*result.Cell) []string {
	var texts []string
	of := map[string][]string{}
	for _, c := range cells {
		for _, n := range replayOf(c).Notes {
			if of[n] == nil {
				texts = append(texts, n)
			}
			of[n] = append(of[n], c.Label())
		}
	}
	var out []string
	for _, n := range texts {
		who := strings.Join(of[n], ", ")
		if len(of[n]) == len(cells) && len(cells) > 1 {
			who = "every cell"
		}
		out = append(out, who+": "+n)
	}
	return out
}

func compressed(c string) string {
	if c == "" {
		return ""
	}
	return " (" + c + ")"
}

// unsupportedText lists the unsupported commands by count, most first.
func unsupportedText(by map[string]int64) string {
	if len(by) == 0 {
		return "—"
	}
	cmds := sortedKeys(by)
	slices.SortStableFunc(cmds, func(a, b string) int { return int(by[b] - by[a]) })
	var parts []string
	for _, c := range cmds {
		parts = append(parts, fmt.Sprintf("%s %s", c, thousands(by[c])))
	}
	return strings.Join(parts, ", ")
}

// replayRateChart is a cell's trace rate (requests a second of its scaled
// time) beside the achieved one (the phase's ops a second), with its
// table.
func replayRateChart(c *result.Cell, s *replay.Summary, series []metrics.Second, colorOf map[string]int, variant int) *lineChartSpec {
	id := "replay-rate-" + idUnsafe.ReplaceAllString(c.Label(), "-")
	spec := &lineChartSpec{id: "chart-" + id, title: "Request rate: the trace's and the achieved, " + c.Label(),
		sub:    "requests a second: the trace's own (its times scaled by the speed) and the store's (replies a second)",
		xLabel: "seconds since the replay's start", yLabel: "requests/s",
		xFmt: func(v float64) string { return trimNum(v) + " s" }, yFmt: func(v float64) string { return trimNum(v) },
		desc: "Line chart of the trace's request rate and the achieved rate, per second."}
	traced := line{key: c.Label() + " trace", color: colorOf[c.Target], variant: variant, markers: true}
	achieved := line{key: c.Label() + " achieved", color: colorOf[c.Target], variant: variant + 1, markers: true}
	spec.table = newTable("replay-rate", "requests a second of "+c.Label()+": the trace's and the achieved", true,
		column{head: "second", left: true}, column{head: "trace req/s", m: "trace_ops_s"}, column{head: "achieved req/s", m: "achieved_ops_s"})
	n := max(len(s.TraceRate), len(series))
	for sec := range n {
		row := []cell{textCell(fmt.Sprint(sec))}
		if sec < len(s.TraceRate) {
			v := float64(s.TraceRate[sec])
			traced.points = append(traced.points, point{x: float64(sec) + 0.5, y: v, title: fmt.Sprintf("trace, second %d: %s req/s", sec, whole(v))})
			row = append(row, countCell(s.TraceRate[sec]))
		} else {
			row = append(row, textCell("—"))
		}
		if sec < len(series) {
			v := float64(series[sec].Ops)
			achieved.points = append(achieved.points, point{x: float64(sec) + 0.5, y: v, title: fmt.Sprintf("achieved, second %d: %s req/s", sec, whole(v))})
			row = append(row, countCell(series[sec].Ops))
		} else {
			row = append(row, textCell("—"))
		}
		spec.table.add(row...)
	}
	spec.lines = []line{traced, achieved}
	return spec
}

// replayRateLine is a cell's trace and achieved rates in at most
// rateBuckets spans of whole seconds, each span's mean.
func replayRateLine(label string, traced []int64, series []metrics.Second) string {
	n := max(len(traced), len(series))
	width := (n + rateBuckets - 1) / rateBuckets
	achieved := make([]int64, len(series))
	for i, sec := range series {
		achieved[i] = sec.Ops
	}
	spans := func(v []int64) string {
		var parts []string
		for from := 0; from < n; from += width {
			to := min(from+width, n)
			var sum int64
			for i := from; i < to && i < len(v); i++ {
				sum += v[i]
			}
			parts = append(parts, whole(float64(sum)/float64(to-from)))
		}
		return strings.Join(parts, " ")
	}
	return fmt.Sprintf("%s (req/s, %d s a span): trace %s · achieved %s", label, width, spans(traced), spans(achieved))
}

// ReplayText prints the replay section for the terminal; nothing for a
// run without replay cells.
func ReplayText(w io.Writer, r *result.Result) { sectionText(w, r, "replay") }

func (m *replayModel) text(w io.Writer) {
	m.verdict.textUnder(w, replayTitle)
	for _, n := range m.notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	if len(m.rateLines) > 0 {
		fmt.Fprintln(w, "\nreplay rate: the trace's requests a second (its times scaled by the speed) beside the achieved")
		for _, l := range m.rateLines {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
}

func (m *replayModel) render(d doc) {
	d.para(replayIntro)
	d.table(m.verdict)
	d.list(m.notes)
	for _, c := range m.rates {
		d.heading("", c.title)
		d.lineChart(c)
	}
}

// replayMetrics are a replay cell's figures for the CSV (phase empty):
// replay_requests, replay_replayed, replay_unsupported_<command>,
// replay_hits, replay_misses, replay_lateness_{p50,p99,max}_us,
// replay_duration_s and replay_trace_duration_s.
func replayMetrics(c *result.Cell) []csvMetric {
	s := replayOf(c)
	if s == nil {
		return nil
	}
	i := func(name string, v int64) csvMetric { return intMetric(name, v, "count") }
	out := []csvMetric{i("replay_requests", s.Requests), i("replay_replayed", s.Replayed)}
	for _, cmd := range sortedKeys(s.Unsupported) {
		out = append(out, i("replay_unsupported_"+cmd, s.Unsupported[cmd]))
	}
	out = append(out, i("replay_hits", s.Hits), i("replay_misses", s.Misses))
	if l := s.LatenessUs; l != nil {
		out = append(out, floatMetric("replay_lateness_p50_us", l.P50, "us"), floatMetric("replay_lateness_p99_us", l.P99, "us"),
			floatMetric("replay_lateness_max_us", l.Max, "us"))
	}
	out = append(out, floatMetric("replay_duration_s", s.DurationS, "s"))
	if s.TraceDurationS > 0 {
		out = append(out, floatMetric("replay_trace_duration_s", s.TraceDurationS, "s"))
	}
	return out
}

package report

import (
	"cmp"
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
)

// entry is one cell's phase, as the charts and tables see it.
type entry struct {
	cell    *result.Cell
	phase   *metrics.Phase
	label   string // the cell without its workload: "memory keys=1000"
	color   int    // index of the cell's target: the same colour in every chart
	variant int    // index of the cell's parameters within its workload: line dash
	op      string // one kind of operation of a mixed phase (Phase.ByOp) in by-op charts, else ""
}

// phaseGroup is every cell of one workload entry that has a phase of one
// name, in the result's order. Charts and tables are drawn per group, so a
// new workload or phase gets them without code of its own.
type phaseGroup struct {
	workload string // the scenario's entry name (its type unless named)
	kind     string // the workload type: kv, web, …
	phase    string
	entries  []entry
}

// model is the shape shared by the HTML and Markdown reports.
type model struct {
	r        *result.Result
	targets  []string       // targets in order: r.Targets, then any only named by cells
	colorOf  map[string]int // target -> colour index
	groups   []phaseGroup
	variants map[string][]string // workload -> parameter suffixes in order
	sections []section           // sectionKinds' sections the result has, each built once
}

func newModel(r *result.Result) *model {
	m := &model{r: r, colorOf: map[string]int{}, variants: map[string][]string{}}
	addTarget := func(name string) {
		if _, ok := m.colorOf[name]; !ok {
			m.colorOf[name] = len(m.targets)
			m.targets = append(m.targets, name)
		}
	}
	for _, t := range r.Targets {
		addTarget(t.Name)
	}
	index := map[[2]string]int{}
	variantOf := map[string]map[string]int{}
	for i := range r.Cells {
		c := &r.Cells[i]
		addTarget(c.Target)
		suffix, name := paramSuffix(c), entryName(c)
		if variantOf[name] == nil {
			variantOf[name] = map[string]int{}
		}
		if _, ok := variantOf[name][suffix]; !ok {
			variantOf[name][suffix] = len(m.variants[name])
			m.variants[name] = append(m.variants[name], suffix)
		}
		for j := range c.Phases {
			p := &c.Phases[j]
			k := [2]string{name, p.Name}
			gi, ok := index[k]
			if !ok {
				gi = len(m.groups)
				index[k] = gi
				m.groups = append(m.groups, phaseGroup{workload: name, kind: c.Workload, phase: p.Name})
			}
			m.groups[gi].entries = append(m.groups[gi].entries, entry{
				cell: c, phase: p, label: cellLabel(c), color: m.colorOf[c.Target], variant: variantOf[name][suffix],
			})
		}
	}
	m.sections = sections(r, m.colorOf)
	// A repeated run's cells come in rounds (keys=1000 #1, keys=10000 #1,
	// keys=1000 #2, …): list a cell's repeats together, in round order.
	if r.Repeat > 1 {
		for i := range m.groups {
			slices.SortStableFunc(m.groups[i].entries, func(a, b entry) int {
				return cmp.Or(cmp.Compare(a.color, b.color), cmp.Compare(a.variant, b.variant))
			})
		}
	}
	// Keep a workload's phases together, in the order the workload runs them.
	sort.SliceStable(m.groups, func(i, j int) bool {
		return workloadOrder(r, m.groups[i].workload) < workloadOrder(r, m.groups[j].workload)
	})
	return m
}

// title names the report: the suite or scenario and the run.
func (m *model) title() string {
	name := m.r.Suite
	if name == "" {
		name = scenarioName(m.r)
	}
	if name == "" {
		return "storebench · " + m.r.ID
	}
	return "storebench · " + name + " · " + m.r.ID
}

// environmentLine is the machine and the binary in one line's parts.
func environmentLine(r *result.Result) []string {
	e := r.Environment
	var env []string
	for _, s := range []string{e.CPUModel, plural(e.Cores, "core"), memText(e.MemoryBytes), e.OS, e.Kernel, e.Arch} {
		if s != "" {
			env = append(env, s)
		}
	}
	return append(env, fmt.Sprintf("storebench %s (%s, %s)", r.Storebench.Version, r.Storebench.Commit, r.Storebench.GoVersion))
}

// environmentRows are the environment table's rows, those with a value;
// full adds the run's status, times, suite and command (HTML, where the
// header does not hold them all).
func environmentRows(r *result.Result, full bool) [][2]string {
	e := r.Environment
	rows := [][2]string{{"host", e.Hostname}, {"CPU", e.CPUModel}, {"cores", fmt.Sprint(e.Cores)}}
	if e.MemoryBytes > 0 {
		rows = append(rows, [2]string{"memory", bytesIEC(e.MemoryBytes)})
	}
	rows = append(rows, [][2]string{{"OS", e.OS}, {"kernel", e.Kernel}, {"arch", e.Arch}, {"client CPUs", e.ClientCPUs},
		{"server CPUs", e.ServerCPUs}, threadsRow(r),
		{"storebench", fmt.Sprintf("%s (commit %s, %s)", r.Storebench.Version, r.Storebench.Commit, r.Storebench.GoVersion)}, {"run", r.ID}}...)
	if full {
		rows = append(rows, [2]string{"status", r.Status}, [2]string{"started", r.StartedAt.UTC().Format(time.RFC3339)})
		if r.FinishedAt != nil {
			rows = append(rows, [2]string{"finished", r.FinishedAt.UTC().Format(time.RFC3339)})
		}
		rows = append(rows, [2]string{"suite", r.Suite})
	}
	rows = append(rows, [2]string{"seed", fmt.Sprint(r.Seed)})
	// What --quick shortened, as the terminal's second line says it.
	rows = append(rows, [2]string{"quick", strings.Join(r.QuickChanges, "; ")})
	if full {
		rows = append(rows, [2]string{"command", strings.Join(r.Command, " ")})
	}
	var out [][2]string
	for _, kv := range rows {
		if kv[1] != "" {
			out = append(out, kv)
		}
	}
	return out
}

// threadsRow is the client threads: per cell where the cells record them,
// else the run's one GOMAXPROCS.
func threadsRow(r *result.Result) [2]string {
	if lines := ClientThreadsLines(r); lines != nil {
		return [2]string{"client threads (GOMAXPROCS)", strings.Join(lines, " · ")}
	}
	return [2]string{"GOMAXPROCS", fmt.Sprint(r.Environment.GoMaxProcs)}
}

func workloadOrder(r *result.Result, name string) int {
	for i := range r.Cells {
		if entryName(&r.Cells[i]) == name {
			return i
		}
	}
	return len(r.Cells)
}

// entryName is the name of the cell's workload entry in the scenario: its
// type (kv, web, …) unless the scenario named it.
func entryName(c *result.Cell) string {
	if c.Name != "" {
		return c.Name
	}
	return c.Workload
}

// paramSuffix is what a cell's id says after target and workload: "keys=1000".
func paramSuffix(c *result.Cell) string {
	prefix := c.Target + "/" + entryName(c)
	if s, ok := strings.CutPrefix(c.ID, prefix); ok {
		return strings.ReplaceAll(strings.TrimPrefix(s, "/"), "/", " ")
	}
	return ""
}

// cellLabel names a cell inside a chart of its workload: "memory keys=1000",
// with its round in a repeated run ("memory keys=1000 #2").
func cellLabel(c *result.Cell) string {
	label := c.ID
	if s := paramSuffix(c); s != "" {
		label = c.Target + " " + s
	} else if strings.HasPrefix(c.ID, c.Target+"/") {
		label = c.Target
	}
	return label + result.RepeatSuffix(c.Repeat)
}

// cellsInOrder is the result's cells in run order, except that a repeated
// run's rounds (keys=1000 #1, keys=10000 #1, keys=1000 #2, …) are regrouped
// so that a cell's repeats follow one another, where its first one ran.
func cellsInOrder(r *result.Result) []*result.Cell {
	out := make([]*result.Cell, 0, len(r.Cells))
	at := map[string]int{} // cell id -> its group's index in groups
	var groups [][]*result.Cell
	for i := range r.Cells {
		c := &r.Cells[i]
		g, ok := at[c.ID]
		if !ok || c.Repeat == 0 {
			g = len(groups)
			at[c.ID] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], c)
	}
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// phasesInOrder is every phase of the result's cells, the cells in
// cellsInOrder's order: the rows of the per-phase tables.
func phasesInOrder(r *result.Result) iter.Seq2[*result.Cell, *metrics.Phase] {
	return func(yield func(*result.Cell, *metrics.Phase) bool) {
		for _, c := range cellsInOrder(r) {
			for i := range c.Phases {
				if !yield(c, &c.Phases[i]) {
					return
				}
			}
		}
	}
}

// medianCell is, of cells that repeat one measurement, the finished one
// whose phase took the median time (the lower of the two middle ones for
// an even count), so a table shows one repeat whole rather than figures of
// several; nil when no cell has the phase.
func medianCell(cells []*result.Cell, phase string) *result.Cell {
	type timed struct {
		c *result.Cell
		s float64
	}
	var ts []timed
	for _, c := range cells {
		if p, ok := c.Phase(phase); ok && c.Status == result.CellOK {
			ts = append(ts, timed{c, p.DurationS})
		}
	}
	if len(ts) == 0 {
		return nil
	}
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].s < ts[j].s })
	return ts[(len(ts)-1)/2].c
}

// sweep is the kv experiment's tables: total time per key count, per
// target, of one workload variant: one kv entry of the scenario written
// one by one, or in batches. The text, Markdown and HTML reports all read
// the kv cells through sweeps, so a table never mixes two variants.
type sweep struct {
	name    string // the kv entry's name
	batch   int64  // keys per write call; 0: one by one
	keys    []int64
	targets []string
	// ms[phase][target][keys] is the phase's measured time in milliseconds.
	ms map[string]map[string]map[int64]float64
	// cell[phase][target][keys] is the cell the figure comes from.
	cell map[string]map[string]map[int64]*result.Cell
}

// kvVariant is what makes kv cells one experiment: the scenario's entry,
// and how it writes (cache-vs-db's kv and kv-batch; a hand-made result
// could even give one name both ways).
type kvVariant struct {
	name  string
	batch int64
}

func kvVariantOf(c *result.Cell) kvVariant {
	return kvVariant{entryName(c), c.Settings().Batch}
}

// kvSweeps gathers the finished cells of each kv variant of the result, in
// the order the variants first ran.
func kvSweeps(r *result.Result, phases ...string) []*sweep {
	var variants []kvVariant
	seen := map[kvVariant]bool{}
	for i := range r.Cells {
		c := &r.Cells[i]
		if v := kvVariantOf(c); c.Workload == "kv" && !seen[v] {
			seen[v] = true
			variants = append(variants, v)
		}
	}
	var out []*sweep
	for _, v := range variants {
		if s := kvSweep(r, v, phases...); s != nil {
			out = append(out, s)
		}
	}
	return out
}

// kvSweep gathers the finished cells of one kv variant; nil when there are
// none. Of repeated cells it takes the median repeat (medianCell).
func kvSweep(r *result.Result, v kvVariant, phases ...string) *sweep {
	s := &sweep{name: v.name, batch: v.batch, ms: map[string]map[string]map[int64]float64{}, cell: map[string]map[string]map[int64]*result.Cell{}}
	type at struct {
		target string
		keys   int64
	}
	var order []at
	repeats := map[at][]*result.Cell{}
	for i := range r.Cells {
		c := &r.Cells[i]
		n := c.Settings().Keys
		if c.Workload != "kv" || kvVariantOf(c) != v || c.Status != result.CellOK || n <= 0 {
			continue
		}
		k := at{c.Target, n}
		if repeats[k] == nil {
			order = append(order, k)
		}
		repeats[k] = append(repeats[k], c)
	}
	seenKeys, seenTarget := map[int64]bool{}, map[string]bool{}
	for _, k := range order {
		for _, ph := range phases {
			c := medianCell(repeats[k], ph)
			if c == nil {
				continue
			}
			p, _ := c.Phase(ph)
			if s.ms[ph] == nil {
				s.ms[ph] = map[string]map[int64]float64{}
				s.cell[ph] = map[string]map[int64]*result.Cell{}
			}
			if s.ms[ph][k.target] == nil {
				s.ms[ph][k.target] = map[int64]float64{}
				s.cell[ph][k.target] = map[int64]*result.Cell{}
			}
			s.ms[ph][k.target][k.keys] = p.DurationS * 1000
			s.cell[ph][k.target][k.keys] = c
			if !seenKeys[k.keys] {
				seenKeys[k.keys] = true
				s.keys = append(s.keys, k.keys)
			}
			if !seenTarget[k.target] {
				seenTarget[k.target] = true
				s.targets = append(s.targets, k.target)
			}
		}
	}
	if len(s.keys) == 0 {
		return nil
	}
	sort.Slice(s.keys, func(i, j int) bool { return s.keys[i] < s.keys[j] })
	return s
}

// what says what one of the sweep's phases did: "write N keys one by one".
func (s *sweep) what(phase string) string {
	switch {
	case s.batch <= 0:
		return phase + " N keys one by one"
	case phase == "write":
		return "write N keys in bulk, " + thousands(s.batch) + " per call"
	}
	return phase + " N keys one by one, after writing them in bulk"
}

// title names one of the sweep's tables in every format: its variant, its
// phase and what was timed.
func (s *sweep) title(phase string) string {
	return s.name + " " + phase + ": total ms to " + s.what(phase)
}

// latencyUnit is what a latency of the phase covers, for column heads: a
// bulk write times each call of s.batch keys, not each key.
func (s *sweep) latencyUnit(phase string) string {
	if s.batch > 0 && phase == "write" {
		return "µs per call"
	}
	return "µs"
}

// atLargest is the target's phase at the largest key count it has, whose
// throughput and latencies the tables give beside the totals.
func (s *sweep) atLargest(phase, target string) (metrics.Phase, bool) {
	for i := len(s.keys) - 1; i >= 0; i-- {
		if c := s.cell[phase][target][s.keys[i]]; c != nil {
			return c.Phase(phase)
		}
	}
	return metrics.Phase{}, false
}

// bytesIEC prints a byte count: 126 MiB.
func bytesIEC(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for v := n / unit; v >= unit; v /= unit {
		div *= unit
		exp++
	}
	return num(float64(n)/float64(div)) + " " + "KMGTPE"[exp:exp+1] + "iB"
}

// durationText prints seconds as "13.6 s" or "2 min 5 s".
func durationText(s float64) string {
	if _, ok := outOfScale(s); ok || s < 60 {
		return num(s) + " s"
	}
	m := int64(s) / 60
	return fmt.Sprintf("%d min %d s", m, int64(s)-60*m)
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// paramsText prints a cell's parameters as "clients=1 keys=1000 …", sorted.
func paramsText(params map[string]any) string {
	var parts []string
	for _, k := range sortedKeys(params) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, params[k]))
	}
	return strings.Join(parts, " ")
}

// errorCount is the number of failed operations of a phase.
func errorCount(p *metrics.Phase) int64 { return metrics.ErrorTotal(p.Errors) }

// seriesRates returns a phase's per-second throughput: ops in the second
// divided by the second's length, which is less than 1 s for the last,
// partial second of the phase.
func seriesRates(p *metrics.Phase) []float64 {
	out := make([]float64, len(p.Series))
	for i, s := range p.Series {
		length := 1.0
		if rest := p.DurationS - float64(s.T); rest > 0 && rest < 1 {
			length = rest
		}
		out[i] = float64(s.Ops) / length
	}
	return out
}

// seriesMinSeconds is how long a phase must run for its over-time chart.
const seriesMinSeconds = 3

// sameCPUText is a phase's share of time client and server ran on the same
// CPU ("62%"), or "—" where placement was not recorded.
func sameCPUText(p *metrics.Phase) string {
	if p.Placement == nil {
		return "—"
	}
	return fixed(100*p.Placement.SameCPU, 0) + "%"
}

// cellNote is a note under the cells table: a cell's error, a phase's
// error sample or warning, and with more its warm-up and open loop; rest
// follows the cell's label.
type cellNote struct{ cell, rest string }

// cellNotes lists the notes of every cell in the result's order.
func cellNotes(r *result.Result, more bool) []cellNote {
	var notes []cellNote
	for _, c := range r.Cells {
		add := func(format string, a ...any) { notes = append(notes, cellNote{c.Label(), fmt.Sprintf(format, a...)}) }
		if c.Error != "" {
			add(": %s", c.Error)
		}
		for _, ph := range c.Phases {
			for _, s := range ph.ErrorSamples {
				add(" %s error: %s", ph.Name, s)
			}
			for _, s := range ph.Warnings {
				add(" %s warning: %s", ph.Name, s)
			}
			if !more {
				continue
			}
			if ph.Warmup.Ops > 0 {
				add(" %s: %s warm-up operations in %s s excluded", ph.Name, thousands(ph.Warmup.Ops), num(ph.Warmup.DurationS))
			}
			if ol := ph.OpenLoop; ol != nil {
				add(" %s: open loop at %s ops/s; %s operations started over 1 ms late, the latest by %s µs (latency counts from the intended start)",
					ph.Name, num(ol.TargetOpsS), thousands(ol.LateOps), num(ol.MaxLagUs))
			}
		}
	}
	return notes
}

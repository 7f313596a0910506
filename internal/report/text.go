// Package report renders a result (and only a result) for people: the
// terminal summary, Markdown, HTML and CSV, and compares results. The
// formats read a result's cells the same way (model.go: the kv sweeps, the
// phase groups, the median of repeats), and the sections that a model of
// their own fills (section.go's sectionKinds, in the order every format
// writes them) are each built once as tables and sentences that every
// format renders, so no two can disagree. A new section: a model and its
// renderers in one file, and a line in sectionKinds.
package report

import (
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/storebench/storebench/internal/result"
)

// Text writes the terminal summary: for each kv variant (one by one, in
// bulk), the article's tables (total ms per key count for writes and reads,
// one row per target), then per-cell throughput and percentiles, the
// by-operation, server-time and coordinated-omission tables, the sections
// of sectionKinds, each target's version and durability, and the article a
// suite reproduces.
func Text(w io.Writer, r *result.Result) {
	threads, perCell := "", ClientThreadsLines(r)
	if e := r.Environment; e.GoMaxProcs > 0 && e.GoMaxProcs != e.Cores && perCell == nil {
		threads = fmt.Sprintf(" · client threads %d (GOMAXPROCS)", e.GoMaxProcs)
	}
	fmt.Fprintf(w, "storebench %s · %s · %s · %d cores%s · %s\n", r.Storebench.Version, r.Environment.CPUModel, r.Environment.OS, r.Environment.Cores, threads, r.Status)
	if len(r.QuickChanges) > 0 {
		fmt.Fprintf(w, "quick: %s\n", strings.Join(r.QuickChanges, "; "))
	}
	if perCell != nil {
		fmt.Fprintln(w, "client threads (GOMAXPROCS) per cell:")
		for _, l := range perCell {
			fmt.Fprintln(w, "  "+l)
		}
	}
	if n := RepeatNote(r); n != "" {
		fmt.Fprintln(w, n)
	}
	for _, n := range MergeNotes(r) {
		fmt.Fprintln(w, n)
	}
	kvTables(w, r)
	cellTable(w, r)
	ByOpText(w, r)
	ServerTimeText(w, r)
	CoordinatedOmissionText(w, r)
	for _, s := range sections(r, nil) {
		s.model.text(w)
	}
	targetTable(w, r)
	ArticleText(w, r)
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "skipped %s: %s\n", s.Target, s.Reason)
	}
}

// kvTables prints, per kv variant (sweep), a table per phase: total ms per
// key count, one row per target, and the target's figures at its largest N.
func kvTables(w io.Writer, r *result.Result) {
	for _, s := range kvSweeps(r, "write", "read") {
		for _, phase := range []string{"write", "read"} {
			if s.ms[phase] == nil {
				continue
			}
			unit := s.latencyUnit(phase)
			fmt.Fprintf(w, "\n%s (server µs: the server's own mean time per op, where it reports one)\n", s.title(phase))
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprint(tw, "target\t")
			for _, n := range s.keys {
				fmt.Fprintf(tw, "%s\t", thousands(n))
			}
			fmt.Fprintf(tw, "ops/s at max N\tp50 %s\tp99 %s\tmean %s\tserver µs\t\n", unit, unit, unit)
			for _, t := range s.targets {
				fmt.Fprintf(tw, "%s\t", t)
				for _, n := range s.keys {
					if v, ok := s.ms[phase][t][n]; ok {
						fmt.Fprintf(tw, "%s\t", ms(v))
					} else {
						fmt.Fprint(tw, "—\t")
					}
				}
				if p, ok := s.atLargest(phase, t); ok {
					server := "—"
					if p.ServerTime != nil && p.ServerTime.Calls > 0 {
						server = us(p.ServerTime.MeanUs)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", whole(p.ThroughputOpsS), us(p.LatencyUs.P50), us(p.LatencyUs.P99), us(p.LatencyUs.Mean), server)
				} else {
					fmt.Fprint(tw, "—\t—\t—\t—\t—\t\n")
				}
			}
			tw.Flush()
		}
	}
}

func cellTable(w io.Writer, r *result.Result) {
	if len(r.Cells) == 0 {
		fmt.Fprintln(w, "\nno cell finished")
		return
	}
	// "same cpu" only when some phase recorded where client and server ran:
	// on a small machine sharing a CPU changes a loopback round trip 5-fold.
	placed := false
	for _, c := range r.Cells {
		for _, p := range c.Phases {
			placed = placed || p.Placement != nil
		}
	}
	head := "\ncells (latency in µs, client-side, per op; cpu in µs per op: the client process, and a managed server's processes"
	if placed {
		head += "; same cpu: share of the time client and server ran on the same CPU"
	}
	fmt.Fprintln(w, head+")")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	sameCol := func(v string) string {
		if placed {
			return v + "\t"
		}
		return ""
	}
	fmt.Fprintln(tw, "cell\tphase\tops\tops/s\tp50\tp90\tp99\tp99.9\tmax\tmean\tclient cpu\tserver cpu\t"+sameCol("same cpu")+"disk B/op\terrors\tstatus\t")
	for _, c := range cellsInOrder(r) {
		if len(c.Phases) == 0 {
			fmt.Fprintf(tw, "%s\t—\t%s%s\t\n", c.Label(), strings.Repeat("\t", 12)+sameCol(""), c.Status)
			continue
		}
		for _, p := range c.Phases {
			l := p.LatencyUs
			srvCPU, disk, same := "—", "—", sameCPUText(&p)
			if p.Server != nil {
				srvCPU, disk = us(p.Server.CPUUsPerOp), us(p.Server.WritePerOp)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s%s\t%s\t%s\t\n", c.Label(), p.Name, p.Ops,
				whole(p.ThroughputOpsS), us(l.P50), us(l.P90), us(l.P99), us(l.P999), us(l.Max), us(l.Mean),
				us(p.ClientCPUUsPerOp), srvCPU, sameCol(same), disk, errorSummary(p.Errors), c.Status)
		}
	}
	tw.Flush()
	for _, c := range r.Cells {
		if c.Error != "" {
			fmt.Fprintf(w, "  %s: %s\n", c.Label(), c.Error)
		}
	}
	clientIOLine(w, r)
	warningLines(w, r)
}

// clientIOLine says how the phases' connections waited for their servers,
// which sets what the client costs per op (metrics.Phase.ClientIO).
func clientIOLine(w io.Writer, r *result.Result) {
	n := map[string]int{}
	for _, c := range r.Cells {
		for _, p := range c.Phases {
			if p.ClientIO != "" {
				n[p.ClientIO]++
			}
		}
	}
	if len(n) == 0 {
		return
	}
	var parts []string
	for _, m := range []struct{ mode, what string }{
		{"blocking", "blocked in read(2), a thread per connection, as C and PHP clients wait"},
		{"poller", "through Go's network poller, many connections per thread"},
		{"mixed", "both"},
	} {
		if n[m.mode] > 0 {
			parts = append(parts, fmt.Sprintf("%s %s (%s)", plural(n[m.mode], "phase"), m.mode, m.what))
		}
	}
	fmt.Fprintf(w, "client I/O: %s\n", strings.Join(parts, "; "))
}

// numbers matches the figures inside a warning, so that warnings which
// differ only in them are told once.
var numbers = regexp.MustCompile(`[0-9][0-9.,]*`)

// warningLines prints each phase's warnings; a warning that three or more
// phases share but for its figures (a suite whose every phase kept the
// client busy) is printed once, with the first phase's figures, and the
// phases it concerns. result.json has every phase's own.
func warningLines(w io.Writer, r *result.Result) {
	type phaseWarning struct{ where, text string }
	var order []string
	groups := map[string][]phaseWarning{}
	for _, c := range r.Cells {
		for _, p := range c.Phases {
			for _, warn := range p.Warnings {
				shape := numbers.ReplaceAllString(warn, "#")
				if groups[shape] == nil {
					order = append(order, shape)
				}
				groups[shape] = append(groups[shape], phaseWarning{c.Label() + " " + p.Name, warn})
			}
		}
	}
	for _, shape := range order {
		g := groups[shape]
		if len(g) < 3 {
			for _, pw := range g {
				fmt.Fprintf(w, "  %s: warning: %s\n", pw.where, pw.text)
			}
			continue
		}
		where := make([]string, len(g))
		for i, pw := range g {
			where[i] = pw.where
		}
		fmt.Fprintf(w, "  warning in %d phases (%s): %s (figures of the first; each phase's are in result.json)\n",
			len(g), strings.Join(where, ", "), g[0].text)
	}
}

func targetTable(w io.Writer, r *result.Result) {
	if len(r.Targets) == 0 {
		return
	}
	fmt.Fprintln(w, "\ntargets")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	asked := make([]string, len(r.Targets))
	var anyAsked bool
	for i, t := range r.Targets {
		asked[i] = askedSettings(t)
		anyAsked = anyAsked || asked[i] != ""
	}
	head := "target\tversion\twhere\tdurability (what a crash loses)"
	if anyAsked {
		head += "\tsettings asked, as read back"
	}
	fmt.Fprintln(tw, head)
	for i, t := range r.Targets {
		where := t.Location
		switch {
		case t.ServerPID != 0:
			where = "managed: " + where
		case !t.Managed:
			where = "external: " + where
		}
		row := fmt.Sprintf("%s\t%s\t%s\t%s", t.Name, t.Version, where, t.Durability)
		if anyAsked {
			row += "\t" + asked[i]
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
}

// ClientThreadsLines say how many client threads (GOMAXPROCS) the cells
// ran with and why, one line per choice with the targets it was made for
// ("redis: 1: redis (one-threaded) shares 2 CPUs with the client; …");
// nil for a result whose cells do not record it (one GOMAXPROCS for the
// whole run, the environment's).
func ClientThreadsLines(r *result.Result) []string {
	var whys []string
	targets := map[string][]string{}
	for _, c := range r.Cells {
		if c.ClientThreads == 0 {
			continue
		}
		why := c.ClientThreadsWhy
		if !strings.HasPrefix(why, fmt.Sprintf("%d: ", c.ClientThreads)) {
			why = fmt.Sprintf("%d: %s", c.ClientThreads, why)
		}
		if _, ok := targets[why]; !ok {
			whys = append(whys, why)
		}
		if !slices.Contains(targets[why], c.Target) {
			targets[why] = append(targets[why], c.Target)
		}
	}
	var lines []string
	for _, why := range whys {
		lines = append(lines, strings.Join(targets[why], ", ")+": "+why)
	}
	return lines
}

// askedSettings are the target's options that are server settings (a
// managed server's io_method, io-threads), with the values the server
// reports: what a comparison of two targets of one version turns on.
func askedSettings(t result.Target) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(t.Options)) {
		if v, ok := t.Settings[k]; ok {
			out = append(out, k+"="+v)
		}
	}
	return strings.Join(out, " ")
}

// RepeatNote says how a run with --repeat is shown; "" for other runs.
func RepeatNote(r *result.Result) string {
	if r.Repeat <= 1 {
		return ""
	}
	return fmt.Sprintf("each cell ran %d times, in rounds over each target's cells: the summary tables show the median repeat, the cells table and per-target tables every repeat (#1…#%d); storebench compare takes their range as a run's spread", r.Repeat, r.Repeat)
}

// MergeNotes are a merged result's notes (storebench merge: how many
// shards, and its warnings), which the text report puts at its top; none
// for other results, whose notes the text report leaves to the others.
func MergeNotes(r *result.Result) []string {
	if r.Shard == nil || len(r.Shard.Merged) == 0 {
		return nil
	}
	return r.Notes
}

// rowName is a cell's target as a table row names it, with its round in a
// repeated run.
func rowName(c *result.Cell) string { return c.Target + result.RepeatSuffix(c.Repeat) }

func errorSummary(errs map[string]int64) string {
	if len(errs) == 0 {
		return "0"
	}
	var parts []string
	for k, v := range errs {
		parts = append(parts, fmt.Sprintf("%d %s", v, k))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// Kept says where each kept target's data stays (run --keep), and how it
// goes.
func Kept(out io.Writer, r *result.Result) {
	for _, t := range r.Targets {
		if t.Kept != "" {
			fmt.Fprintf(out, "kept: %s; storebench clean --stores with that URL removes it\n", t.Kept)
		}
	}
}

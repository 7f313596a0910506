package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/storebench/storebench/internal/result"
)

// Markdown writes the result as GitHub-flavoured Markdown, to paste into an
// issue or a pull request: for kv the article's tables (total ms per key
// count), the article a suite reproduces, the sections of sectionKinds
// (payments, network, …, capacity), then every cell's latency and
// throughput, the cost per operation, each target's version and
// durability, and the environment and effective settings in a collapsed
// <details> block. Each part is a renderer of its own over the model the
// HTML page reads too.
func Markdown(w io.Writer, r *result.Result) error {
	m := newModel(r)
	var b strings.Builder
	for _, part := range []func(*strings.Builder, *model){
		mdHeader, mdSweeps, mdArticle, mdWorkloadSections, mdCells, mdTargets, mdSetup,
	} {
		part(&b, m)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdHeader(b *strings.Builder, m *model) {
	r := m.r
	fmt.Fprintf(b, "# %s\n\n", mdText(m.title()))
	took := ""
	if r.FinishedAt != nil {
		took = " · took " + durationText(r.FinishedAt.Sub(r.StartedAt).Seconds())
	}
	fmt.Fprintf(b, "**%s** · started %s%s · %d cells · seed %d  \n", mdText(r.Status), r.StartedAt.UTC().Format("2006-01-02 15:04:05 MST"), took, len(r.Cells), r.Seed)
	fmt.Fprintf(b, "%s\n", mdText(strings.Join(environmentLine(r), " · ")))
	if len(r.Command) > 0 {
		fmt.Fprintf(b, "\n%s\n", mdCode(strings.Join(r.Command, " ")))
	}
	if n := RepeatNote(r); n != "" {
		fmt.Fprintf(b, "\n%s\n", mdText(n))
	}
}

// mdSweeps writes the kv experiment's tables: per variant and phase, total
// ms per key count, one row per target.
func mdSweeps(b *strings.Builder, m *model) {
	for _, s := range kvSweeps(m.r, "write", "read") {
		for _, ph := range []string{"write", "read"} {
			if s.ms[ph] == nil {
				continue
			}
			unit := s.latencyUnit(ph)
			fmt.Fprintf(b, "\n## %s\n\n| target |", mdText(s.title(ph)))
			for _, k := range s.keys {
				fmt.Fprintf(b, " %s |", thousands(k))
			}
			fmt.Fprintf(b, " ops/s at max N | p50 %s | p99 %s |\n|:--|", unit, unit)
			fmt.Fprintf(b, "%s--:|--:|--:|\n", strings.Repeat("--:|", len(s.keys)))
			for _, t := range s.targets {
				fmt.Fprintf(b, "| %s |", mdText(t))
				for _, k := range s.keys {
					if v, ok := s.ms[ph][t][k]; ok {
						fmt.Fprintf(b, " %s |", num(v))
					} else {
						b.WriteString(" — |")
					}
				}
				if p, ok := s.atLargest(ph, t); ok {
					fmt.Fprintf(b, " %s | %s | %s |\n", num(p.ThroughputOpsS), num(p.LatencyUs.P50), num(p.LatencyUs.P99))
				} else {
					b.WriteString(" — | — | — |\n")
				}
			}
		}
	}
}

// mdArticle writes the article a suite reproduces: its tables with our
// figures beside its own, and how its method differs.
func mdArticle(b *strings.Builder, m *model) {
	r, a, e := m.r, m.r.Article, m.r.Environment
	if a == nil {
		return
	}
	fmt.Fprintf(b, "\n## The article: %s\n\n", mdText(a.Title))
	if a.URL != "" {
		fmt.Fprintf(b, "%s  \n", mdText(a.URL))
	}
	fmt.Fprintf(b, "Its setup: %s  \nOurs: %s, %s, %s%s\n", mdText(a.Setup), mdText(e.CPUModel), plural(e.Cores, "core"), mdText(e.OS), mdText(quickNote(r)))
	for _, t := range a.Tables {
		fmt.Fprintf(b, "\n### %s (%s; article \\| ours)\n\n| article row → our target |", mdText(t.Title), mdText(t.Unit))
		for _, c := range t.Columns {
			head := c
			if t.Param == "keys" {
				head = thousands(paramFromString(c)) + " keys"
			}
			fmt.Fprintf(b, " %s article | %s ours |", mdText(head), mdText(head))
		}
		fmt.Fprintf(b, "\n|:--|%s\n", strings.Repeat("--:|--:|", len(t.Columns)))
		figs := ArticleTableFigures(r, t)
		for i, row := range t.Rows {
			fmt.Fprintf(b, "| %s → %s |", mdText(row.Label), mdText(row.Target))
			for _, f := range figs[i] {
				fmt.Fprintf(b, " %s | %s |", optNum(f.Article), optNum(f.Ours))
			}
			b.WriteString("\n")
		}
		for _, n := range t.Notes {
			fmt.Fprintf(b, "\nNote: %s\n", mdText(n))
		}
	}
	if len(a.Differences) > 0 {
		b.WriteString("\nHow the article's method differs from this run:\n\n")
		for _, d := range a.Differences {
			fmt.Fprintf(b, "- %s\n", mdText(d))
		}
	}
}

// mdWorkloadSections writes the sections of sectionKinds from their
// models (section.go).
func mdWorkloadSections(b *strings.Builder, m *model) {
	for _, s := range m.sections {
		s.write(mdOut{b})
	}
}

// mdCells writes every cell's latency and throughput, its cost per
// operation, the by-operation, server-time and coordinated-omission
// tables, and the cells' errors and warnings.
func mdCells(b *strings.Builder, m *model) {
	r := m.r
	if len(r.Cells) == 0 {
		b.WriteString("\nNo cell finished.\n")
		return
	}
	b.WriteString("\n## Latency and throughput\n\nLatency in µs, client-side, per operation (successful operations; warm-up excluded).\n\n")
	b.WriteString("| cell | phase | ops | errors | ms | ops/s | p50 | p90 | p99 | p99.9 | max | mean | status |\n")
	b.WriteString("|:--|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|:--|\n")
	for _, c := range cellsInOrder(r) {
		if len(c.Phases) == 0 {
			fmt.Fprintf(b, "| %s | — | | | | | | | | | | | %s |\n", mdText(c.Label()), mdText(c.Status))
			continue
		}
		for _, ph := range c.Phases {
			l := ph.LatencyUs
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", mdText(c.Label()), mdText(ph.Name), thousands(ph.Ops), mdText(errorSummary(ph.Errors)),
				num(ph.DurationS*1000), num(ph.ThroughputOpsS), num(l.P50), num(l.P90), num(l.P99), num(l.P999), num(l.Max), num(l.Mean), mdText(c.Status))
		}
	}
	mdCost(b, r)
	byOpMarkdown(b, r)
	serverTimeMarkdown(b, r)
	coordinatedMarkdown(b, r)
	var notes []string
	for _, n := range cellNotes(r, false) {
		notes = append(notes, "- **"+mdText(n.cell)+"**"+mdText(n.rest))
	}
	if len(notes) > 0 {
		fmt.Fprintf(b, "\n%s\n", strings.Join(notes, "\n"))
	}
}

// mdCost writes the cost per operation: CPU of both sides, disk, memory
// and placement.
func mdCost(b *strings.Builder, r *result.Result) {
	b.WriteString("\n## Cost per operation\n\nCPU in µs per operation: the whole client process, and a managed server's processes; disk is what a managed server wrote; same CPU: share of the time client and server ran on the same CPU (a loopback round trip costs several times more across CPUs).\n\n")
	b.WriteString("| cell | phase | client CPU µs | server CPU µs | disk B | server peak RSS | same CPU |\n|:--|:--|--:|--:|--:|--:|--:|\n")
	for c, ph := range phasesInOrder(r) {
		srv, disk, rss := "—", "—", "—"
		if s := ph.Server; s != nil {
			srv, disk, rss = num(s.CPUUsPerOp), num(s.WritePerOp), bytesIEC(s.PeakRSSBytes)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", mdText(c.Label()), mdText(ph.Name), num(ph.ClientCPUUsPerOp), srv, disk, rss, sameCPUText(ph))
	}
}

// mdTargets writes each target's version, place and durability, and the
// run's skipped targets and notes.
func mdTargets(b *strings.Builder, m *model) {
	r := m.r
	if len(r.Targets) > 0 {
		b.WriteString("\n## Targets\n\n| target | version | where | durability (what a crash loses) |\n|:--|:--|:--|:--|\n")
		for _, t := range r.Targets {
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", mdText(t.Name), mdText(t.Version), mdText(where(t)), mdText(t.Durability))
		}
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(b, "\nSkipped %s: %s\n", mdText(s.Target), mdText(s.Reason))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(b, "\n%s\n", mdText(n))
	}
}

// mdSetup writes the environment and each target's effective settings,
// collapsed.
func mdSetup(b *strings.Builder, m *model) {
	r := m.r
	b.WriteString("\n<details><summary>Environment and effective settings</summary>\n\n| | |\n|:--|:--|\n")
	for _, kv := range environmentRows(r, false) {
		fmt.Fprintf(b, "| %s | %s |\n", mdText(kv[0]), mdText(kv[1]))
	}
	for _, t := range r.Targets {
		fmt.Fprintf(b, "\n**%s** — %s, %s\n\n| setting | value |\n|:--|:--|\n", mdText(t.Name), mdText(t.Version), mdText(t.Durability))
		for _, k := range sortedKeys(t.Settings) {
			fmt.Fprintf(b, "| %s | %s |\n", mdCode(k), mdCode(t.Settings[k]))
		}
	}
	b.WriteString("\n</details>\n")
}

// mdText escapes text for a Markdown table cell or paragraph.
func mdText(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	return strings.NewReplacer(`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`, "#", `\#`).Replace(s)
}

// mdCode prints s as inline code that survives a table cell: backticks long
// enough to hold any run inside it, and pipes escaped (GitHub splits cells
// on them even in code).
func mdCode(s string) string {
	if s == "" {
		return ""
	}
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "|", `\|`).Replace(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + s + pad + fence
}

func optNum(v *float64) string {
	if v == nil {
		return "—"
	}
	return num(*v)
}

// serverTimeMarkdown writes the client vs server time table, if any phase has one.
func serverTimeMarkdown(b *strings.Builder, r *result.Result) {
	var sources []string
	for _, c := range r.Cells {
		for _, p := range c.Phases {
			if st := p.ServerTime; st != nil && !slices.Contains(sources, st.Source) {
				sources = append(sources, st.Source)
			}
		}
	}
	if len(sources) == 0 {
		return
	}
	b.WriteString("\n## Client vs server time\n\nµs per call: the client's mean latency, the time the server counts, and the difference (driver, network, scheduling, and what the source leaves out).\n\n")
	b.WriteString("| cell | phase | server calls | client µs | server µs | overhead µs | source |\n|:--|:--|--:|--:|--:|--:|:--|\n")
	for _, c := range r.Cells {
		for _, p := range c.Phases {
			if st := p.ServerTime; st != nil {
				fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | [%d] |\n", mdText(c.Label()), mdText(p.Name), thousands(st.Calls), num(p.LatencyUs.Mean),
					num(st.PerCallUs), num(st.ClientOverheadUs), slices.Index(sources, st.Source)+1)
			}
		}
	}
	b.WriteString("\n")
	for i, s := range sources {
		fmt.Fprintf(b, "%d. %s\n", i+1, mdText(s))
	}
}

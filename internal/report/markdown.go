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
// count), then every cell's latency and throughput, the cost per operation,
// each target's version and durability, and the environment and effective
// settings in a collapsed <details> block.
func Markdown(w io.Writer, r *result.Result) error {
	var b strings.Builder
	m := newModel(r)
	md := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }

	p := &page{m: m}
	md("# %s\n\n", mdText(p.title()))
	took := ""
	if r.FinishedAt != nil {
		took = " · took " + durationText(r.FinishedAt.Sub(r.StartedAt).Seconds())
	}
	md("**%s** · started %s%s · %d cells · seed %d  \n", mdText(r.Status), r.StartedAt.UTC().Format("2006-01-02 15:04:05 MST"), took, len(r.Cells), r.Seed)
	e := r.Environment
	var env []string
	for _, s := range []string{e.CPUModel, plural(e.Cores, "core"), memText(e.MemoryBytes), e.OS, e.Kernel, e.Arch} {
		if s != "" {
			env = append(env, s)
		}
	}
	env = append(env, fmt.Sprintf("storebench %s (%s, %s)", r.Storebench.Version, r.Storebench.Commit, r.Storebench.GoVersion))
	md("%s\n", mdText(strings.Join(env, " · ")))
	if len(r.Command) > 0 {
		md("\n%s\n", mdCode(strings.Join(r.Command, " ")))
	}
	if n := RepeatNote(r); n != "" {
		md("\n%s\n", mdText(n))
	}

	for _, s := range kvSweeps(r, "write", "read") {
		for _, ph := range []string{"write", "read"} {
			if s.ms[ph] == nil {
				continue
			}
			unit := s.latencyUnit(ph)
			md("\n## %s\n\n", mdText(s.title(ph)))
			md("| target |")
			for _, k := range s.keys {
				md(" %s |", thousands(k))
			}
			md(" ops/s at max N | p50 %s | p99 %s |\n|:--|", unit, unit)
			md("%s--:|--:|--:|\n", strings.Repeat("--:|", len(s.keys)))
			for _, t := range s.targets {
				md("| %s |", mdText(t))
				for _, k := range s.keys {
					if v, ok := s.ms[ph][t][k]; ok {
						md(" %s |", num(v))
					} else {
						md(" — |")
					}
				}
				if p, ok := s.atLargest(ph, t); ok {
					md(" %s | %s | %s |\n", num(p.ThroughputOpsS), num(p.LatencyUs.P50), num(p.LatencyUs.P99))
				} else {
					md(" — | — | — |\n")
				}
			}
		}
	}

	if a := r.Article; a != nil {
		md("\n## The article: %s\n\n", mdText(a.Title))
		if a.URL != "" {
			md("%s  \n", mdText(a.URL))
		}
		md("Its setup: %s  \nOurs: %s, %s, %s%s\n", mdText(a.Setup), mdText(e.CPUModel), plural(e.Cores, "core"), mdText(e.OS), mdText(quickNote(r)))
		for _, t := range a.Tables {
			md("\n### %s (%s; article \\| ours)\n\n| article row → our target |", mdText(t.Title), mdText(t.Unit))
			for _, c := range t.Columns {
				head := c
				if t.Param == "keys" {
					head = thousands(paramFromString(c)) + " keys"
				}
				md(" %s article | %s ours |", mdText(head), mdText(head))
			}
			md("\n|:--|%s\n", strings.Repeat("--:|--:|", len(t.Columns)))
			figs := ArticleTableFigures(r, t)
			for i, row := range t.Rows {
				md("| %s → %s |", mdText(row.Label), mdText(row.Target))
				for _, f := range figs[i] {
					md(" %s | %s |", optNum(f.Article), optNum(f.Ours))
				}
				md("\n")
			}
			for _, n := range t.Notes {
				md("\nNote: %s\n", mdText(n))
			}
		}
		if len(a.Differences) > 0 {
			md("\nHow the article's method differs from this run:\n\n")
			for _, d := range a.Differences {
				md("- %s\n", mdText(d))
			}
		}
	}

	if len(r.Cells) == 0 {
		md("\nNo cell finished.\n")
	} else {
		md("\n## Latency and throughput\n\nLatency in µs, client-side, per operation (successful operations; warm-up excluded).\n\n")
		md("| cell | phase | ops | errors | ms | ops/s | p50 | p90 | p99 | p99.9 | max | mean | status |\n")
		md("|:--|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|:--|\n")
		for _, c := range cellsInOrder(r) {
			if len(c.Phases) == 0 {
				md("| %s | — | | | | | | | | | | | %s |\n", mdText(c.Label()), mdText(c.Status))
				continue
			}
			for _, ph := range c.Phases {
				l := ph.LatencyUs
				md("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", mdText(c.Label()), mdText(ph.Name), thousands(ph.Ops), mdText(errorSummary(ph.Errors)),
					num(ph.DurationS*1000), num(ph.ThroughputOpsS), num(l.P50), num(l.P90), num(l.P99), num(l.P999), num(l.Max), num(l.Mean), mdText(c.Status))
			}
		}
		md("\n## Cost per operation\n\nCPU in µs per operation: the whole client process, and a managed server's processes; disk is what a managed server wrote; same CPU: share of the time client and server ran on the same CPU (a loopback round trip costs several times more across CPUs).\n\n")
		md("| cell | phase | client CPU µs | server CPU µs | disk B | server peak RSS | same CPU |\n|:--|:--|--:|--:|--:|--:|--:|\n")
		for _, c := range cellsInOrder(r) {
			for _, ph := range c.Phases {
				srv, disk, rss := "—", "—", "—"
				if s := ph.Server; s != nil {
					srv, disk, rss = num(s.CPUUsPerOp), num(s.WritePerOp), bytesIEC(s.PeakRSSBytes)
				}
				md("| %s | %s | %s | %s | %s | %s | %s |\n", mdText(c.Label()), mdText(ph.Name), num(ph.ClientCPUUsPerOp), srv, disk, rss, sameCPUText(&ph))
			}
		}
		byOpMarkdown(&b, r)
		serverTimeMarkdown(&b, r)
		coordinatedMarkdown(&b, r)
		var notes []string
		for _, c := range r.Cells {
			if c.Error != "" {
				notes = append(notes, fmt.Sprintf("- **%s**: %s", mdText(c.Label()), mdText(c.Error)))
			}
			for _, ph := range c.Phases {
				for _, s := range ph.ErrorSamples {
					notes = append(notes, fmt.Sprintf("- **%s** %s error: %s", mdText(c.Label()), mdText(ph.Name), mdText(s)))
				}
				for _, s := range ph.Warnings {
					notes = append(notes, fmt.Sprintf("- **%s** %s warning: %s", mdText(c.Label()), mdText(ph.Name), mdText(s)))
				}
			}
		}
		if len(notes) > 0 {
			md("\n%s\n", strings.Join(notes, "\n"))
		}
	}

	if len(r.Targets) > 0 {
		md("\n## Targets\n\n| target | version | where | durability (what a crash loses) |\n|:--|:--|:--|:--|\n")
		for _, t := range r.Targets {
			md("| %s | %s | %s | %s |\n", mdText(t.Name), mdText(t.Version), mdText(where(t)), mdText(t.Durability))
		}
	}
	for _, s := range r.Skipped {
		md("\nSkipped %s: %s\n", mdText(s.Target), mdText(s.Reason))
	}
	for _, n := range r.Notes {
		md("\n%s\n", mdText(n))
	}

	md("\n<details><summary>Environment and effective settings</summary>\n\n")
	md("| | |\n|:--|:--|\n")
	row := func(k, v string) {
		if v != "" {
			md("| %s | %s |\n", mdText(k), mdText(v))
		}
	}
	row("host", e.Hostname)
	row("CPU", e.CPUModel)
	row("cores", fmt.Sprint(e.Cores))
	if e.MemoryBytes > 0 {
		row("memory", bytesIEC(e.MemoryBytes))
	}
	row("OS", e.OS)
	row("kernel", e.Kernel)
	row("arch", e.Arch)
	row("client CPUs", e.ClientCPUs)
	row("server CPUs", e.ServerCPUs)
	row("GOMAXPROCS", fmt.Sprint(e.GoMaxProcs))
	row("storebench", fmt.Sprintf("%s (commit %s, %s)", r.Storebench.Version, r.Storebench.Commit, r.Storebench.GoVersion))
	row("run", r.ID)
	row("seed", fmt.Sprint(r.Seed))
	for _, t := range r.Targets {
		md("\n**%s** — %s, %s\n\n| setting | value |\n|:--|:--|\n", mdText(t.Name), mdText(t.Version), mdText(t.Durability))
		for _, k := range sortedKeys(t.Settings) {
			md("| %s | %s |\n", mdCode(k), mdCode(t.Settings[k]))
		}
	}
	md("\n</details>\n")
	_, err := io.WriteString(w, b.String())
	return err
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

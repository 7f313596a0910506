package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/storebench/storebench/internal/result"
)

// ArticleFigure is one cell of an article table with our figure beside it.
type ArticleFigure struct {
	Article *float64 // nil when the article has no figure there
	Ours    *float64 // nil when we did not measure it (target skipped, cell failed)
}

// ArticleTableFigures pairs every article figure of t with ours from r.
func ArticleTableFigures(r *result.Result, t result.ArticleTable) [][]ArticleFigure {
	out := make([][]ArticleFigure, len(t.Rows))
	for i, row := range t.Rows {
		out[i] = make([]ArticleFigure, len(t.Columns))
		for j, col := range t.Columns {
			f := ArticleFigure{}
			if j < len(row.Values) {
				f.Article = row.Values[j]
			}
			phase := t.Phase
			if row.Phase != "" {
				phase = row.Phase
			}
			if v, ok := ourFigure(r, t, row.Target, phase, col); ok {
				f.Ours = &v
			}
			out[i][j] = f
		}
	}
	return out
}

// ourFigure computes the table's metric from the matching cell's phase; of
// repeated cells, from the median repeat (medianCell).
func ourFigure(r *result.Result, t result.ArticleTable, target, phase, col string) (float64, bool) {
	var matching []*result.Cell
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Target != target || entryName(c) != t.Workload || c.Status != result.CellOK {
			continue
		}
		if t.Param != "" && !c.ParamIs(t.Param, col) {
			continue
		}
		matching = append(matching, c)
	}
	c := medianCell(matching, phase)
	if c == nil {
		return 0, false
	}
	p, _ := c.Phase(phase)
	switch t.Metric {
	case "total_ms":
		return p.DurationS * 1000, true
	case "ops_s":
		return p.ThroughputOpsS, true
	case "mean_us":
		return p.LatencyUs.Mean, true
	case "p50_us":
		return p.LatencyUs.P50, true
	case "p99_us":
		return p.LatencyUs.P99, true
	case "mean_ms":
		return p.LatencyUs.Mean / 1000, true
	}
	return 0, false
}

// ArticleText prints the article's tables with our figures beside theirs,
// then how the methods differ.
func ArticleText(w io.Writer, r *result.Result) {
	a := r.Article
	if a == nil {
		return
	}
	fmt.Fprintf(w, "\nThe article: %s\n", a.Title)
	if a.URL != "" {
		fmt.Fprintf(w, "  %s\n", a.URL)
	}
	fmt.Fprintf(w, "  its setup: %s\n", a.Setup)
	fmt.Fprintf(w, "  ours: %s, %d cores, %s%s\n", r.Environment.CPUModel, r.Environment.Cores, r.Environment.OS, quickNote(r))
	for _, t := range a.Tables {
		fmt.Fprintf(w, "\n%s (%s; article | storebench)\n", t.Title, t.Unit)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "\t")
		for _, c := range t.Columns {
			head := c
			if t.Param == "keys" {
				head = thousands(paramFromString(c)) + " keys"
			}
			fmt.Fprintf(tw, "%s\t\t", head)
		}
		fmt.Fprintln(tw)
		figs := ArticleTableFigures(r, t)
		for i, row := range t.Rows {
			fmt.Fprintf(tw, "%s → %s\t", row.Label, row.Target)
			for _, f := range figs[i] {
				fmt.Fprintf(tw, "%s\t%s\t", figure(f.Article), figure(f.Ours))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		for _, n := range t.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
	}
	if len(a.Differences) > 0 {
		fmt.Fprintln(w, "\nHow the article's method differs from this run:")
		for _, d := range a.Differences {
			fmt.Fprintf(w, "  - %s\n", d)
		}
	}
}

func quickNote(r *result.Result) string {
	if r.Quick {
		return " (--quick: fewer keys/ops than the article)"
	}
	return ""
}

func paramFromString(s string) int64 {
	var n int64
	fmt.Sscan(s, &n)
	return n
}

// figure prints a number with sensible precision, or — when absent.
func figure(v *float64) string {
	if v == nil {
		return "—"
	}
	x := *v
	switch {
	case math.Abs(x) >= 100:
		return whole(x)
	case x >= 10:
		return fixed(x, 1)
	case x >= 0.1:
		return fixed(x, 2)
	}
	if s, ok := outOfScale(x); ok {
		return s
	}
	return strings.TrimRight(strings.TrimRight(fixed(x, 3), "0"), ".")
}

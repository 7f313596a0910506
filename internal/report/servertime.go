package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/storebench/storebench/internal/result"
)

// ServerTimeText writes, for every phase that has the server's own time, the
// client's mean latency beside the server's execution time per call and the
// difference: what the driver, the network round trip and scheduling cost.
// It writes nothing when no phase has server time. The sources, with what
// each covers, are listed under the table.
func ServerTimeText(w io.Writer, r *result.Result) {
	var sources []string
	seen := map[string]bool{}
	for _, c := range r.Cells {
		for _, p := range c.Phases {
			if st := p.ServerTime; st != nil && !seen[st.Source] {
				seen[st.Source] = true
				sources = append(sources, st.Source)
			}
		}
	}
	if len(sources) == 0 {
		return
	}
	tw := textTable(w, "\nserver-side time (µs per call: client mean latency vs the time the server counts; overhead = driver, network, scheduling and what the source leaves out)",
		"cell\tphase\tserver calls\tclient µs\tserver µs\toverhead µs\toverhead\tserver µs by op\tsource\t")
	for _, c := range r.Cells {
		for _, p := range c.Phases {
			st := p.ServerTime
			if st == nil {
				continue
			}
			share := "—"
			if p.LatencyUs.Mean > 0 {
				share = fixed(100*st.ClientOverheadUs/p.LatencyUs.Mean, 0) + "%"
			}
			var ops []string
			for _, name := range slices.Sorted(maps.Keys(st.Ops)) {
				ops = append(ops, fmt.Sprintf("%s %s", name, stUs(st.Ops[name].MeanUs)))
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t[%d]\t\n", c.Label(), p.Name, st.Calls,
				stUs(p.LatencyUs.Mean), stUs(st.PerCallUs), stUs(st.ClientOverheadUs), share,
				strings.Join(ops, ", "), slices.Index(sources, st.Source)+1)
		}
	}
	tw.Flush()
	for i, s := range sources {
		fmt.Fprintf(w, "  [%d] %s\n", i+1, s)
	}
}

// stUs prints microseconds: one decimal below 100, whole above.
func stUs(v float64) string {
	if v >= 100 || v <= -100 {
		return fixed(v, 0)
	}
	return fixed(v, 1)
}

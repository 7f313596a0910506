package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/storebench/storebench/internal/result"
)

// PaymentsText prints, for every payments cell, its committed transfers/s,
// steady state, declines by reason, retries and the invariant verdict.
func PaymentsText(w io.Writer, r *result.Result) {
	first := true
	for _, c := range r.Cells {
		s := c.Payments
		if s == nil {
			continue
		}
		if first {
			fmt.Fprintln(w, "\npayments (per-step latency is in the cells table: phases rt1–rt4, transfer, delete)")
			first = false
		}
		fmt.Fprintf(w, "  %s: %s\n", c.Label(), s.Headline())
		if len(s.DeclinedBy) > 0 {
			var parts []string
			for reason, n := range s.DeclinedBy {
				parts = append(parts, fmt.Sprintf("%s %d", reason, n))
			}
			sort.Strings(parts)
			fmt.Fprintf(w, "    declined by reason: %s\n", strings.Join(parts, ", "))
		}
		for _, n := range s.Notes {
			fmt.Fprintf(w, "    note: %s\n", n)
		}
	}
}

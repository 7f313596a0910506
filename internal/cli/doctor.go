package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/storebench/storebench/internal/doctor"
)

func (a *App) doctorCmd() *cobra.Command {
	var brief, asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Measure what this machine does to latency: idle wake-ups, loopback round trips, steal, CPU settings",
		Long: "doctor measures the machine before a store is blamed for it: how late an idle CPU wakes (the way\n" +
			"cyclictest does), a loopback round trip on one CPU and across two, the hypervisor's steal, the cgroup's\n" +
			"CPU quota, timer slack, frequency governor, turbo and transparent huge pages; each with what it means for\n" +
			"the SLOs one can measure here and what helps. About 8 s (--brief: 2 s).",
		Example: "  storebench doctor\n  storebench doctor --brief --json",
		Args:    cobraArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			r, err := doctor.Run(cmd.Context(), doctor.Options{Brief: brief})
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(r)
			}
			writeChecks(cmd.OutOrStdout(), r.Checks)
			fmt.Fprintf(cmd.OutOrStdout(), "\n(measured in %.1f s)\n", time.Since(start).Seconds())
			return nil
		},
	}
	cmd.Flags().BoolVar(&brief, "brief", false, "a 2-second look instead of about 8 seconds")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the checks and their figures as JSON")
	return cmd
}

// writeChecks prints each check on its line, what it means and what helps
// indented under it.
func writeChecks(w io.Writer, checks []doctor.Check) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range checks {
		fmt.Fprintf(tw, "%s\t%s\n", c.Name, c.Value)
		if c.Meaning != "" {
			fmt.Fprintf(tw, "\t→ %s\n", c.Meaning)
		}
		if c.Help != "" {
			fmt.Fprintf(tw, "\thelps: %s\n", c.Help)
		}
	}
	tw.Flush()
}

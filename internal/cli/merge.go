package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/storebench/storebench/internal/report"
	"github.com/storebench/storebench/internal/run"
)

func (a *App) mergeCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use: "merge SHARD.json... -o DIR", Short: "Merge the results of one run's shards (run --shard I/N) into one result",
		Long: `Merge adds the results of one run's shards (run --shard I/N) into one result:
ops and errors summed, histograms added and percentiles read from the sum,
throughput over the union of the shards' measured windows. Each argument is a
shard's result.json or the results/<time>/ directory holding one.

It writes result.json and report.html into DIR, made if needed, and refuses a
DIR that holds either: a result is never replaced.`,
		Example: `  storebench merge shard0/20261124T070000Z shard1/20261124T070000Z -o merged
  storebench merge shards/*.json -o merged`,
		Args: cobraArgs(cobra.MinimumNArgs(1)), RunE: func(cmd *cobra.Command, args []string) error {
			o, err := run.Merge(args, dir)
			if err != nil {
				return asUsage(err)
			}
			report.Text(cmd.OutOrStdout(), o.Result)
			fmt.Fprintf(cmd.OutOrStdout(), "\nresult: %s\nreport: %s\n", o.Path, o.Report)
			if o.ReportErr != nil {
				return &FailedError{Err: o.ReportErr}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&dir, "out", "o", "", "directory that receives the merged result.json and report.html")
	return cmd
}

package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/storebench/storebench/internal/report"
	"github.com/storebench/storebench/internal/result"
)

func (a *App) reportCmd() *cobra.Command {
	var format, out string
	cmd := &cobra.Command{
		Use:   "report RESULT.json",
		Short: "Render a result file as text, HTML, Markdown or CSV",
		Long: `Report renders a result.json (or the results/<time>/ directory holding one),
and only that file, for people:

  text  the terminal summary that run prints (the default, to stdout)
  html  one self-contained page: SVG charts, each with the table of its numbers,
        environment and settings; it loads nothing from the network
  md    GitHub Markdown tables, to paste into an issue or a pull request
  csv   one row per cell × phase × metric, columns documented in docs/results.md

Without --format the format comes from -o's extension (.html, .md, .csv, .txt),
else it is text. Without -o the report goes to stdout.`,
		Example: `  storebench report results/20261122T023107Z/result.json
  storebench report results/20261122T023107Z -o report.html
  storebench report result.json --format md | xclip
  storebench report result.json --format csv -o cells.csv`,
		Args: cobraArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			render, err := report.ForOutput(format, out)
			if err != nil {
				return &UsageError{Err: err}
			}
			r, err := result.Load(args[0])
			if err != nil {
				return &UsageError{Err: err}
			}
			return writeOutput(cmd, "report", out, func(w io.Writer) error { return render(w, r) })
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "", "text, html, md or csv (default: from -o's extension, else text)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to `FILE` instead of stdout")
	return cmd
}

// writeOutput writes a rendered page to stdout, or to out (atomically: a
// failed render leaves no half file) and says so as what.
func writeOutput(cmd *cobra.Command, what, out string, render func(io.Writer) error) error {
	if out == "" || out == "-" {
		return render(cmd.OutOrStdout())
	}
	if err := result.WriteFileAtomic(out, render); err != nil {
		return usagef("-o %s: %v", out, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", what, out)
	return nil
}

package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/storebench/storebench/internal/report"
	"github.com/storebench/storebench/internal/result"
)

func (a *App) historyCmd() *cobra.Command {
	var format, out string
	cmd := &cobra.Command{
		Use:   "history PATH...",
		Short: "Chart the cells of many runs over time: ops/s and p99 per run, what changed, thresholds",
		Long: `History reads many results (result.json or result.json.gz files, or
directories holding them at any depth, e.g. one directory per commit) and
renders one page: every cell that finished in two runs or more (matched by
id, phases by name, as compare matches them; a run's repeats at their
median), with each phase's throughput and p99 per run in start order, as a
line chart (html) and a table (every format).

Marked where they change: the machine (CPU model, cores), the storebench
build, a server's version and its effective settings. Thresholds a run
checked on ops/s or p99 are drawn as lines and listed in the tables.

Without --format the format comes from -o's extension (.html, .md, .csv, .txt),
else it is text. Without -o the page goes to stdout. See docs/history.md.`,
		Example: `  storebench history results/ -o history.html
  storebench history ci/*/result.json.gz --format md
  storebench history results/20261122T023107Z results/20261123T101500Z`,
		Args: cobraArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			render, err := report.HistoryForOutput(format, out)
			if err != nil {
				return &UsageError{Err: err}
			}
			files, err := resultFiles(args)
			if err != nil {
				return &UsageError{Err: err}
			}
			runs := make([]report.HistoryRun, 0, len(files))
			for _, f := range files {
				r, err := result.Read(f)
				if err != nil {
					return &UsageError{Err: err}
				}
				runs = append(runs, report.HistoryRun{Path: f, R: r})
			}
			h, err := report.NewHistory(runs)
			if err != nil {
				return &UsageError{Err: err}
			}
			return writeOutput(cmd, "history", out, func(w io.Writer) error { return render(w, h) })
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "", "text, html, md or csv (default: from -o's extension, else text)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to `FILE` instead of stdout")
	return cmd
}

// resultNames are the names of result files a directory is searched for.
var resultNames = map[string]bool{"result.json": true, "result.json.gz": true}

// resultFiles are the result files paths name: a file as given, a
// directory's result.json and result.json.gz files at any depth (symbolic
// links not followed), each once. A path without one is an error.
func resultFiles(paths []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(f string) {
		if abs, err := filepath.Abs(f); err == nil && !seen[abs] {
			seen[abs] = true
			out = append(out, f)
		}
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, fmt.Errorf("%s: %v", p, err)
		}
		if !st.IsDir() {
			add(p) // result.Read refuses what is no regular file
			continue
		}
		found := 0
		err = filepath.WalkDir(p, func(f string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && resultNames[d.Name()] {
				add(f)
				found++
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %v", p, err)
		}
		if found == 0 {
			return nil, fmt.Errorf("%s: no result.json or result.json.gz in it or below", p)
		}
	}
	return out, nil
}

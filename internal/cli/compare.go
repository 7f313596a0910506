package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/storebench/storebench/internal/result"

	"github.com/spf13/cobra"

	"github.com/storebench/storebench/internal/report"
)

func (a *App) compareCmd() *cobra.Command {
	var format, junit string
	var failOn []string
	cmd := &cobra.Command{
		Use:   "compare A.json B.json [MORE.json...]",
		Short: "Compare runs cell by cell: ratio per metric and whether the difference is clear",
		Long: `Compare matches the cells of each run with those of the first (A, the
baseline) by cell id, e.g. redis/kv/keys=10000, and phases by name, and prints
for ops/s, mean, p50, p90, p99 and p99.9: each run's value, the ratio to A, and
a verdict: better, worse, or "no clear difference" when the runs' own spread
is larger than the difference.

A run's spread is, for a cell repeated in the run (storebench run --repeat N),
the exact bootstrap 99% interval of its repeats' median (their whole range up
to 8 repeats), and its value their median; otherwise a 99%
confidence interval from the run's own data: distribution-free by rank in the
HdrHistogram for percentiles, ±2.58 σ/√n for the mean, and for ops/s the
mean's interval widened by the per-second series of phases of 3 s or more.
One run of single cells cannot see run-to-run noise: repeat before trusting a
small difference. Arguments are result.json files or the directories holding
them.

--fail-on judges each matched cell phase of each run against the baseline: it
fails (exit 3) where the metric's change passes the threshold and the two
runs' intervals do not overlap, so noise is not a regression; a row whose
spread is unknown is said not judged.`,
		Example: `  storebench compare results/20261122T023107Z results/20261123T101500Z
  storebench compare results/<before, run with --repeat 5> results/<after, likewise>
  storebench compare before/result.json after/result.json --format md
  storebench compare base/ new/ --fail-on 'p99>+10%' --fail-on 'ops_s<-5%' --junit compare.xml`,
		Args: cobraArgs(cobra.MinimumNArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "md" && format != "markdown" {
				return usagef("--format %q: unknown format (text, md)", format)
			}
			var rules []report.FailRule
			for _, f := range failOn {
				r, err := report.ParseFailRule(f)
				if err != nil {
					return &UsageError{Err: err}
				}
				rules = append(rules, r)
			}
			if junit != "" && len(rules) == 0 {
				return usagef("--junit: give --fail-on rules to judge (a test case per matched cell × rule)")
			}
			if err := checkOutputFile("--junit", junit); err != nil {
				return err
			}
			var runs []report.CompareRun
			for i, path := range args {
				r, err := result.Load(path)
				if err != nil {
					return &UsageError{Err: err}
				}
				runs = append(runs, report.CompareRun{Name: runName(i), Path: path, R: r})
			}
			cmps := report.Compare(runs)
			for _, c := range cmps {
				if len(c.Rows) == 0 {
					return usagef("no finished cell of %s (%s) matches one of %s (%s): cells are matched by id, such as %s",
						c.Other.Name, c.Other.Path, c.Base.Name, c.Base.Path, firstCellID(c))
				}
			}
			if format == "text" {
				report.CompareText(cmd.OutOrStdout(), runs, cmps)
			} else {
				report.CompareMarkdown(cmd.OutOrStdout(), runs, cmps)
			}
			if len(rules) == 0 {
				return nil
			}
			return judgeComparisons(cmd.OutOrStdout(), cmps, rules, junit)
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "text", "text or md")
	cmd.Flags().StringArrayVar(&failOn, "fail-on", nil, "a regression threshold: METRIC>+N% or METRIC<-N% (ops_s, mean, p50, p90, p99, p99.9), e.g. 'p99>+10%'; exit 3 where a matched cell's change passes it and is beyond the runs' noise; repeatable")
	cmd.Flags().StringVar(&junit, "junit", "", "with --fail-on: also write the verdicts as JUnit XML to this file (a test case per matched cell × rule)")
	return cmd
}

// judgeComparisons prints each run's --fail-on verdicts, writes the JUnit
// file, and is an AssertError (exit 3) when any rule failed.
func judgeComparisons(w io.Writer, cmps []report.Comparison, rules []report.FailRule, junit string) error {
	var all [][]report.RuleVerdict
	var failed []string
	fmt.Fprintln(w)
	for _, c := range cmps {
		vs := c.Judge(rules)
		all = append(all, vs)
		report.FailOnText(w, c, vs)
		for _, v := range vs {
			if v.Fail {
				failed = append(failed, v.Cell+" · "+v.Phase+" ("+v.Rule.Expr+")")
			}
		}
	}
	if junit != "" {
		if err := writeJUnit(junit, func(f io.Writer) error { return report.FailOnJUnit(f, cmps, all) }); err != nil {
			return &FailedError{Err: err}
		}
	}
	if len(failed) > 0 {
		return &AssertError{Err: fmt.Errorf("regression beyond noise in %d cell phases: %s", len(failed), strings.Join(failed, "; "))}
	}
	return nil
}

// runName names the i-th run: A, B, … Z, then R27, R28, ….
func runName(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return "R" + strconv.Itoa(i+1)
}

func firstCellID(c report.Comparison) string {
	if len(c.Base.R.Cells) > 0 {
		return c.Base.R.Cells[0].ID
	}
	return "target/workload/keys=N"
}

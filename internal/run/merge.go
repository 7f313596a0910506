package run

import (
	"os"
	"path/filepath"

	"github.com/storebench/storebench/internal/assert"
	"github.com/storebench/storebench/internal/result"
)

// rejudge replaces the first shard's verdicts the merge copied with the
// shards' assertions judged on the merged cells: a shard judged its own
// part of the load (its share of the clients and ops), the merge the
// whole of it.
func rejudge(merged *result.Result, shards []*result.Result) error {
	var exprs []string
	seen := map[string]bool{}
	for _, r := range shards {
		for _, v := range r.Assertions {
			if !seen[v.Expr] {
				seen[v.Expr] = true
				exprs = append(exprs, v.Expr)
			}
		}
	}
	merged.Assertions = nil
	if len(exprs) == 0 {
		return nil
	}
	as, err := assert.ParseAll(exprs)
	if err != nil {
		return err
	}
	stores := map[string]string{}
	for _, t := range merged.Targets {
		stores[t.Name] = t.Store
	}
	judged := make([]int, len(as))
	for i := range merged.Cells {
		c := &merged.Cells[i]
		merged.Assertions = append(merged.Assertions, assert.JudgeCell(as, c, stores[c.Target], judged)...)
	}
	merged.Assertions = append(merged.Assertions, assert.Unjudged(as, judged)...)
	return nil
}

// Merge reads the result files of one run's shards (each a result.json
// or a directory holding one, as report and compare take them), merges
// them (result.Merge) and writes the merged result.json into dir, with
// report.html beside it. Bad input (an unreadable result, results that
// are not the shards of one run, a dir that holds a result.json or a
// report.html) is an *InputError; the merged result's notes hold its
// warnings, which every report prints.
func Merge(paths []string, dir string) (*Outcome, error) {
	if dir == "" {
		return nil, inputf("merge: give -o DIR, the directory that receives the merged result.json")
	}
	in := result.Shards{Names: paths}
	for _, path := range paths {
		r, err := result.Load(path)
		if err != nil {
			return nil, inputf("merge: %v", err)
		}
		in.Results = append(in.Results, r)
	}
	merged, _, err := result.Merge(in)
	if err != nil {
		return nil, inputf("merge: %v", err)
	}
	merged.Command = redactArgs(os.Args)
	if err := rejudge(merged, in.Results); err != nil {
		return nil, inputf("merge: %v", err)
	}
	path, err := result.WriteNew(dir, merged, reportName)
	if err != nil {
		return nil, inputf("merge -o %s: %v", dir, err)
	}
	o := &Outcome{Result: merged, Path: path, Cells: len(merged.Cells)}
	o.Report, o.ReportErr = writeHTMLReport(merged, dir)
	if o.ReportErr != nil {
		os.Remove(filepath.Join(dir, reportName)) // the empty file WriteNew claimed, nobody else's
	}
	return o, nil
}

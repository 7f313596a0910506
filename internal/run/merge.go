package run

import (
	"os"
	"path/filepath"

	"github.com/storebench/storebench/internal/result"
)

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

package run

import (
	"os"

	"github.com/storebench/storebench/internal/result"
)

// Merge reads the result files of one run's shards, merges them
// (result.Merge) and writes the merged result.json into dir, with
// report.html beside it. Bad input (an unreadable result, results that
// are not the shards of one run, a dir that holds a result) is an
// *InputError; the merged result's notes hold its warnings, which every
// report prints.
func Merge(paths []string, dir string) (*Outcome, error) {
	if dir == "" {
		return nil, inputf("merge: give -o DIR, the directory that receives the merged result.json")
	}
	in := result.Shards{Names: paths}
	for _, path := range paths {
		r, err := result.Read(path)
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
	path, err := result.WriteNew(dir, merged)
	if err != nil {
		return nil, inputf("merge -o %s: %v", dir, err)
	}
	o := &Outcome{Result: merged, Path: path, Cells: len(merged.Cells)}
	o.Report, o.ReportErr = writeHTMLReport(merged, dir)
	return o, nil
}

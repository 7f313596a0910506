package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestRunsStartedTogetherKeepTheirResults: runs started in the same second
// into one --out (two quick runs back to back, shards, CI jobs) each keep a
// result and a report, and each prints its own path. The first version named
// the directory by the start second alone: the last run replaced the others'.
func TestRunsStartedTogetherKeepTheirResults(t *testing.T) {
	out := t.TempDir()
	const runs = 4
	outs := make([]runOut, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = storebench(t, nil, "run", "kv", "--stores", "memory", "--keys", "100", "--out", out, "--quiet")
		}()
	}
	wg.Wait()
	printed := map[string]bool{}
	for i, r := range outs {
		if r.code != 0 {
			t.Fatalf("run %d: exit %d\nstderr: %s", i, r.code, r.stderr)
		}
		for _, line := range strings.Split(r.stdout, "\n") {
			if p, ok := strings.CutPrefix(line, "result: "); ok {
				printed[p] = true
			}
		}
	}
	found, _ := filepath.Glob(filepath.Join(out, "*", "result.json"))
	reports, _ := filepath.Glob(filepath.Join(out, "*", "report.html"))
	if len(found) != runs || len(reports) != runs || len(printed) != runs {
		t.Fatalf("%d runs started together: %d results, %d reports, %d paths printed (%v)", runs, len(found), len(reports), len(printed), found)
	}
	for _, p := range found {
		if !printed[p] {
			t.Errorf("%s was not printed by any run", p)
		}
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".*")); len(left) > 0 {
			t.Errorf("temporary files left: %v", left)
		}
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// repeatedResult is what TestRepeat reads of a result.json.
type repeatedResult struct {
	Repeat int `json:"repeat"`
	Cells  []struct {
		ID     string `json:"id"`
		Repeat int    `json:"repeat"`
		Phases []struct {
			Name           string  `json:"name"`
			DurationS      float64 `json:"duration_s"`
			ThroughputOpsS float64 `json:"throughput_ops_s"`
		} `json:"phases"`
	} `json:"cells"`
}

// repeatedRun runs kv on memory and files with --repeat 3.
func repeatedRun(t *testing.T) (dir, stdout string, res repeatedResult) {
	t.Helper()
	out := t.TempDir()
	r := storebench(t, nil, "run", "kv", "--stores", "memory,files", "--keys", "1000,2000", "--repeat", "3", "--out", out)
	if r.code != 0 {
		t.Fatalf("run --repeat 3: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	matches, _ := filepath.Glob(filepath.Join(out, "*", "result.json"))
	if len(matches) != 1 {
		t.Fatalf("%d result files", len(matches))
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(matches[0]), r.stdout, res
}

// TestRepeat runs every cell three times, in rounds over each target's
// cells; the summary's kv table shows the median repeat, the cells table
// every repeat, and compare takes the repeats' range as a run's spread.
func TestRepeat(t *testing.T) {
	dirA, stdout, res := repeatedRun(t)
	var order []string
	for _, c := range res.Cells {
		order = append(order, fmt.Sprintf("%s #%d", c.ID, c.Repeat))
	}
	want := []string{
		"memory/kv/keys=1000 #1", "memory/kv/keys=2000 #1", "memory/kv/keys=1000 #2", "memory/kv/keys=2000 #2", "memory/kv/keys=1000 #3", "memory/kv/keys=2000 #3",
		"files/kv/keys=1000 #1", "files/kv/keys=2000 #1", "files/kv/keys=1000 #2", "files/kv/keys=2000 #2", "files/kv/keys=1000 #3", "files/kv/keys=2000 #3",
	}
	if res.Repeat != 3 || !slices.Equal(order, want) {
		t.Fatalf("repeat %d, cells in this order:\n%s\nwant:\n%s", res.Repeat, strings.Join(order, "\n"), strings.Join(want, "\n"))
	}
	for _, w := range want {
		if !strings.Contains(stdout, w+"  write") {
			t.Errorf("the cells table has no row %q", w+"  write")
		}
	}

	// The kv write table: each total is the median of the cell's repeats.
	durations := map[string][]float64{} // cell id -> write ms of each repeat
	for _, c := range res.Cells {
		for _, p := range c.Phases {
			if p.Name == "write" {
				durations[c.ID] = append(durations[c.ID], p.DurationS*1000)
			}
		}
	}
	table := stdout[strings.Index(stdout, "kv write:"):]
	table = table[:strings.Index(table, "\n\n")]
	for _, target := range []string{"memory", "files"} {
		var row []string
		for _, line := range strings.Split(table, "\n") {
			if f := strings.Fields(line); len(f) > 2 && f[0] == target {
				row = f
			}
		}
		if row == nil {
			t.Fatalf("no %s row in:\n%s", target, table)
		}
		for i, keys := range []string{"1000", "2000"} {
			ms := durations[target+"/kv/keys="+keys]
			slices.Sort(ms)
			if got := parseNum(t, row[1+i]); len(ms) != 3 || !shows(got, ms[1]) {
				t.Errorf("%s, %s keys: the table says %v ms, the repeats took %v (median %v)", target, keys, got, ms, ms[1])
			}
		}
	}

	// compare: the interval of a repeated cell is its repeats' range.
	dirB, _, _ := repeatedRun(t)
	r := storebench(t, nil, "compare", dirA, dirB)
	if r.code != 0 {
		t.Fatalf("compare: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var rates []float64
	for _, c := range res.Cells {
		if c.ID == "files/kv/keys=2000" {
			for _, p := range c.Phases {
				if p.Name == "read" {
					rates = append(rates, p.ThroughputOpsS)
				}
			}
		}
	}
	slices.Sort(rates)
	var cell string
	found := false
	for _, line := range strings.Split(r.stdout, "\n") {
		if m := cellHead.FindStringSubmatch(line); m != nil {
			cell = m[1] + " " + m[2]
			continue
		}
		if m := cmpRow.FindStringSubmatch(line); m != nil && cell == "files/kv/keys=2000 read" && m[1] == "ops/s" {
			found = true
			if !shows(parseNum(t, m[2]), rates[1]) || !shows(parseNum(t, m[6]), rates[0]) || !shows(parseNum(t, m[7]), rates[2]) {
				t.Errorf("files/kv/keys=2000 read ops/s: compare printed %s (%s–%s), the repeats ran at %v", m[2], m[6], m[7], rates)
			}
		}
	}
	if !found {
		t.Errorf("compare printed no ops/s row for files/kv/keys=2000 read:\n%s", r.stdout)
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/testkit"
)

// shardScenario is measured in two shards: a timed mix (series, kinds)
// and kv with a key count that does not split evenly, on the in-process
// store and a managed Redis.
const shardScenario = `name: shards
seed: 7
targets:
  - memory
  - redis
workloads:
  - type: mix
    keyspace: 1000
    load:
      clients: 4
      duration: 2s
  - type: kv
    keys: [3001]
    load:
      clients: 2
`

// runShards starts both shards of the scenario at once, with one
// --start-at, and returns their result files.
func runShards(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	scen := writeFile(t, dir, "shards.yaml", shardScenario)
	bin := testkit.Binary(t) // built first: a build on a busy machine outlasted the barrier's slack
	startAt := time.Now().Add(4 * time.Second).UTC().Truncate(time.Second).Add(time.Second).Format(time.RFC3339)
	paths := make([]string, 2)
	errs := make([]string, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			out := filepath.Join(dir, fmt.Sprintf("shard%d", i+1))
			cmd := exec.Command(bin, "run", scen, "--shard", fmt.Sprintf("%d/2", i), "--start-at", startAt, "--out", out, "--client-cpus", "none", "--server-cpus", "none", "--assert", "*:kv:ops>=1")
			var so, se bytes.Buffer
			cmd.Stdout, cmd.Stderr = &so, &se
			if err := cmd.Run(); err != nil {
				errs[i] = fmt.Sprintf("shard %d/2: %v\nstdout: %s\nstderr: %s", i+1, err, so.String(), se.String())
				return
			}
			matches, _ := filepath.Glob(filepath.Join(out, "*", "result.json"))
			if len(matches) != 1 {
				errs[i] = fmt.Sprintf("shard %d/2 wrote %v", i+1, matches)
				return
			}
			paths[i] = matches[0]
		})
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Fatal(e)
		}
	}
	return paths
}

func decode(t *testing.T, enc string) *hdr.Histogram {
	t.Helper()
	h, err := metrics.DecodeHistogram(enc)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestShardsMerge runs a scenario as two shard processes started together
// and merges them: ops are the shards' sums, the histogram is their
// bucket-by-bucket sum and the p99 that of the sum (computed here from the
// shards' own histograms), the per-second series line up by wall clock,
// and the merged result renders as any other.
func TestShardsMerge(t *testing.T) {
	paths := runShards(t)
	shards := make([]*result.Result, 2)
	for i, p := range paths {
		r, err := result.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		shards[i] = r
		if r.Shard == nil || r.Shard.Index != i || r.Shard.Count != 2 || r.Shard.StartAt == nil || r.Shard.Released == nil || r.Shard.Host == "" {
			t.Fatalf("shard %d's result records %+v, want index, count, host, start-at and release", i+1, r.Shard)
		}
		if r.Shard.Released.Before(*r.Shard.StartAt) {
			t.Fatalf("shard %d released at %v, before --start-at %v", i+1, r.Shard.Released, r.Shard.StartAt)
		}
	}
	mergedDir := filepath.Join(t.TempDir(), "merged")
	r := storebench(t, nil, "merge", paths[0], paths[1], "-o", mergedDir)
	if r.code != 0 {
		t.Fatalf("merge: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	merged, err := result.Read(filepath.Join(mergedDir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if merged.Shard == nil || merged.Shard.Count != 2 || len(merged.Shard.Merged) != 2 {
		t.Fatalf("merged result's shard record %+v, want a merge of 2 with each shard's environment", merged.Shard)
	}
	if len(merged.Cells) != 4 {
		t.Fatalf("merged %d cells, want 4 (mix and kv on memory and redis)", len(merged.Cells))
	}
	// The shards' assertions are judged again on the merged cells: the
	// whole run's ops, not the first shard's part.
	judged := 0
	for _, v := range merged.Assertions {
		if v.Expr == "*:kv:ops>=1" && v.Cell != "" {
			judged++
			if v.Measured != 3001 || !v.Pass {
				t.Errorf("merged verdict %+v: want the merged kv phase's 3001 ops", v)
			}
		}
	}
	if judged != 4 {
		t.Errorf("%d merged verdicts of *:kv:ops>=1, want 4 (2 kv cells × write, read): %+v", judged, merged.Assertions)
	}
	for ci, c := range merged.Cells {
		if c.Status != result.CellOK {
			t.Fatalf("cell %s: %s %s", c.ID, c.Status, c.Error)
		}
		wantClients := map[string]float64{"mix": 4, "kv": 2}[c.Workload]
		if got, _ := c.Params["clients"].(float64); got != wantClients {
			t.Errorf("cell %s records %v clients, want the whole run's %v", c.ID, c.Params["clients"], wantClients)
		}
		for pi, p := range c.Phases {
			a, b := shards[0].Cells[ci].Phases[pi], shards[1].Cells[ci].Phases[pi]
			checkMergedPhase(t, c.ID, p, a, b)
		}
		if c.Workload == "kv" {
			for _, p := range c.Phases {
				if p.Ops != 3001 {
					t.Errorf("%s %s: %d ops, want the 3001 keys once each over both shards", c.ID, p.Name, p.Ops)
				}
			}
			if a, b := shards[0].Cells[ci].Phases[0].Ops, shards[1].Cells[ci].Phases[0].Ops; a != 1501 || b != 1500 {
				t.Errorf("%s: shards wrote %d and %d keys, want 1501 and 1500 (the remainder to the first)", c.ID, a, b)
			}
		}
	}
	rep := storebench(t, nil, "report", filepath.Join(mergedDir, "result.json"))
	if rep.code != 0 || !strings.Contains(rep.stdout, "merged from 2 shards") {
		t.Fatalf("report of the merged result: exit %d, says it merged 2 shards: %v\n%s%s", rep.code, strings.Contains(rep.stdout, "merged from 2 shards"), rep.stdout, rep.stderr)
	}
	if _, err := os.Stat(filepath.Join(mergedDir, "report.html")); err != nil {
		t.Fatalf("merge wrote no report.html: %v", err)
	}
}

func checkMergedPhase(t *testing.T, id string, got, a, b metrics.Phase) {
	t.Helper()
	name := id + " " + got.Name
	if got.Ops != a.Ops+b.Ops || got.Workers != a.Workers+b.Workers {
		t.Errorf("%s: %d ops of %d workers, want %d+%d of %d+%d", name, got.Ops, got.Workers, a.Ops, b.Ops, a.Workers, b.Workers)
	}
	// The test's own sum of the shards' histograms.
	sum := hdr.New(1, 60_000_000_000, 3)
	sum.Merge(decode(t, a.Histogram))
	sum.Merge(decode(t, b.Histogram))
	mh := decode(t, got.Histogram)
	if !mh.Equals(sum) {
		t.Errorf("%s: the merged histogram (%d values) is not the bucket-by-bucket sum of the shards' (%d)", name, mh.TotalCount(), sum.TotalCount())
	}
	lo, hi := min(a.LatencyUs.Min, b.LatencyUs.Min), max(a.LatencyUs.Max, b.LatencyUs.Max)
	p99 := min(max(float64(sum.ValueAtQuantile(99))/1e3, lo), hi)
	if math.Abs(got.LatencyUs.P99-p99) > 1e-9 {
		t.Errorf("%s: merged p99 %v µs, the p99 of the summed histograms is %v µs", name, got.LatencyUs.P99, p99)
	}
	if a.Start.IsZero() || b.Start.IsZero() {
		t.Fatalf("%s: a shard's phase records no wall-clock start", name)
	}
	from := a.Start
	if b.Start.Before(from) {
		from = b.Start
	}
	if !got.Start.Equal(from) {
		t.Errorf("%s: merged start %v, want the earliest shard's %v", name, got.Start, from)
	}
	end := a.Start.Add(seconds(a.DurationS))
	if e := b.Start.Add(seconds(b.DurationS)); e.After(end) {
		end = e
	}
	if want := end.Sub(from).Seconds(); math.Abs(got.DurationS-want) > 1e-6 {
		t.Errorf("%s: merged window %v s, want the union of the shards' %v s", name, got.DurationS, want)
	}
	if got.Name == "mix" {
		if d := a.Start.Sub(b.Start).Abs(); d > time.Second {
			t.Errorf("%s: the shards began %v apart despite one --start-at", name, d)
		}
		// Each shard's second goes to the wall-clock second its start falls in.
		want := map[int64]int64{}
		for _, p := range []metrics.Phase{a, b} {
			for _, s := range p.Series {
				want[int64((p.Start.Sub(from)+time.Duration(s.T)*time.Second)/time.Second)] += s.Ops
			}
		}
		if len(got.Series) != len(want) {
			t.Errorf("%s: %d merged seconds, want %d", name, len(got.Series), len(want))
		}
		for _, s := range got.Series {
			if s.Ops != want[s.T] {
				t.Errorf("%s: second %d has %d ops, the shards' seconds starting in it have %d", name, s.T, s.Ops, want[s.T])
			}
		}
	}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// editedCopy writes a copy of the result at path with edit applied to its
// JSON, for inputs no honest run makes.
func editedCopy(t *testing.T, path string, edit func(m map[string]any)) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	out, _ := json.Marshal(m)
	return writeFile(t, t.TempDir(), "result.json", string(out))
}

// TestMergeRefusesWhatIsNotOneRun: merge says in one line, exit 2, why
// results are not the shards of one run, and writes nothing.
func TestMergeRefusesWhatIsNotOneRun(t *testing.T) {
	paths := runShards(t)
	otherSeed := editedCopy(t, paths[1], func(m map[string]any) { m["seed"] = 8.0 })
	otherCount := editedCopy(t, paths[1], func(m map[string]any) { m["shard"].(map[string]any)["count"] = 3.0 })
	late := editedCopy(t, paths[1], func(m map[string]any) {
		for _, c := range m["cells"].([]any) {
			for _, p := range c.(map[string]any)["phases"].([]any) {
				p := p.(map[string]any)
				start, _ := time.Parse(time.RFC3339Nano, p["start"].(string))
				p["start"] = start.Add(time.Hour).Format(time.RFC3339Nano)
			}
		}
	})
	whole := editedCopy(t, paths[1], func(m map[string]any) { delete(m, "shard") })
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"one shard twice", []string{paths[0], paths[0]}, []string{"shard 0/2 is given twice"}},
		{"a shard missing", []string{paths[0]}, []string{"shard 1/2 is missing"}},
		{"another seed", []string{paths[0], otherSeed}, []string{"seed 8", "not the shards of one run"}},
		{"another shard count", []string{paths[0], otherCount}, []string{"shard 1/3", "not the shards of one run"}},
		{"windows apart", []string{paths[0], late}, []string{"do not overlap"}},
		{"not a shard", []string{paths[0], whole}, []string{"is not a shard of a run"}},
		{"no output dir", []string{paths[0], paths[1], "--out", ""}, []string{"give -o DIR"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refusesBadInput(t, nil, append([]string{"merge"}, tc.args...), tc.want)
		})
	}
}

// TestShardFlagsAreChecked: --shard and --start-at are refused in one line,
// exit 2, before any work.
func TestShardFlagsAreChecked(t *testing.T) {
	past := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	far := time.Now().Add(25 * time.Hour).UTC().Format(time.RFC3339)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--shard", "-1/2"}, []string{"--shard", "-1/2", "I must be 0 to 1"}},
		{[]string{"--shard", "2/2"}, []string{"--shard", "2/2", "I must be 0 to 1"}},
		{[]string{"--shard", "1/1025"}, []string{"--shard", "N must be 1 to 1024"}},
		{[]string{"--shard", "half"}, []string{"--shard", "want I/N"}},
		{[]string{"--shard", "1/2", "--clients", "1"}, []string{"1 clients, fewer than 2 shards"}},
		{[]string{"--start-at", past}, []string{"--start-at", "in the past"}},
		// The zero time.Time, which must not read as "no --start-at".
		{[]string{"--start-at", "0001-01-01T00:00:00Z"}, []string{"--start-at 0001-01-01T00:00:00Z is in the past"}},
		{[]string{"--start-at", "0000-12-31T23:00:00-01:00"}, []string{"--start-at 0001-01-01T00:00:00Z is in the past"}},
		{[]string{"--start-at", far}, []string{"--start-at", "more than 24h0m0s ahead"}},
		{[]string{"--start-at", "tomorrow"}, []string{"--start-at", "RFC 3339"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			refusesBadInput(t, nil, append([]string{"run", "kv", "--stores", "memory", "--keys", "1000"}, tc.args...), tc.want)
		})
	}
}

// TestShardRefusedWhereMergeCannotAdd: a workload with a summary of its
// own (payments, sessions, …) cannot be split into shards.
func TestShardRefusedWhereMergeCannotAdd(t *testing.T) {
	refusesBadInput(t, nil, []string{"run", "hotkey", "--stores", "memory", "--shard", "1/2"}, []string{"hotkey cannot run in shards"})
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/server/servertest"
)

// An SLO below the round trip cannot be met at any rate: `run capacity`
// says "no rate meets the SLO" with the lowest rate tried and exits 0 (a
// measured "no" is an answer), writing every step of the knee curve to
// result.json and its chart to the HTML report; asked to fail on it
// (--assert 'capacity>0'), the same run exits 3 (issue 33).
func TestCapacityNoRateMeetsTheSLOIsAnAnswer(t *testing.T) {
	out := t.TempDir()
	// Short steps, few of them: the verdict needs only that every step misses.
	file := filepath.Join(t.TempDir(), "unmeetable.yaml")
	body := "name: unmeetable\ntargets: [redis]\nworkloads:\n  - {type: capacity, keyspace: 100, slo: [\"p99<=5ms\"], start_rate: 100, min_step: 1s, max_step: 1s, max_steps: 4, usl_clients: [1, 2]}\nload: {clients: 2}\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", file, "--rtt", "20ms", "--net-mechanism", "proxy", "--out", out, "--data-dir", servertest.BaseDir(t), "--quiet"}
	r := storebench(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout+r.stderr, "no rate meets the SLO") || !strings.Contains(r.stdout, "none (lowest tried") {
		t.Errorf("output does not say no rate meets the SLO:\n%s\n%s", r.stdout, r.stderr)
	}
	if r := storebench(t, nil, append(args, "--out", t.TempDir(), "--assert", "capacity>0")...); r.code != 3 || !strings.Contains(r.stderr, "capacity>0: ") {
		t.Errorf("with --assert capacity>0: exit %d, want 3\n%s", r.code, r.stderr)
	}
	matches, _ := filepath.Glob(filepath.Join(out, "*", "result.json"))
	if len(matches) != 1 {
		t.Fatalf("want one result.json, found %v", matches)
	}
	res, err := result.Read(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != 1 || res.Cells[0].Capacity == nil {
		t.Fatalf("cells %+v", res.Cells)
	}
	c := res.Cells[0]
	if c.Status != result.CellOK {
		t.Errorf("cell status %s, want ok: a capacity of none is measured", c.Status)
	}
	sum := c.Capacity
	if len(sum.Capacity) != 1 || sum.Capacity[0].Found || sum.Capacity[0].LowestTriedOpsS <= 0 {
		t.Fatalf("capacity %+v", sum.Capacity)
	}
	if len(sum.Steps) < 2 {
		t.Fatalf("knee curve of %d steps: %+v", len(sum.Steps), sum.Steps)
	}
	for _, st := range sum.Steps {
		if st.Passed || st.Ops == 0 {
			t.Errorf("step %+v: passed, or measured nothing, under an SLO below the RTT", st)
		}
	}
	html, err := os.ReadFile(filepath.Join(filepath.Dir(matches[0]), "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "no rate meets the SLO") || !strings.Contains(string(html), "<svg") {
		t.Errorf("report.html lacks the verdict or the knee chart")
	}
}

// Client and server pinned to one CPU (issue 31): each step records the
// client's part of the CPU they shared, about half of it at these rates,
// and a step that missed says so in its evidence.
func TestCapacitySharedCPUReportsTheClientsShare(t *testing.T) {
	out := t.TempDir()
	file := filepath.Join(t.TempDir(), "shared.yaml")
	body := "name: shared\ntargets: [redis]\nworkloads:\n  - {type: capacity, keyspace: 1000, slo: [\"p99<=1ms\"], start_rate: 16000, min_step: 1s, max_step: 1s, max_steps: 4}\nload: {clients: 4}\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	r := storebench(t, nil, "run", file, "--server-cpus", "0", "--client-cpus", "0", "--out", out, "--data-dir", servertest.BaseDir(t), "--quiet")
	matches, _ := filepath.Glob(filepath.Join(out, "*", "result.json"))
	if len(matches) != 1 {
		t.Fatalf("exit %d, no result\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	res, err := result.Read(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != 1 || res.Cells[0].Capacity == nil {
		t.Fatalf("cells %+v\n%s", res.Cells, r.stderr)
	}
	shared, said, missed := 0, false, false
	for _, st := range res.Cells[0].Capacity.Steps {
		if s := st.SharedCPUClientShare; s > 0.15 && s < 0.85 {
			shared++
		}
		said = said || strings.Contains(st.LimiterEvidence, "client and server ran on one CPU and the client took")
		missed = missed || !st.Passed
	}
	if shared == 0 {
		t.Errorf("no step recorded the client's share of the shared CPU: %+v", res.Cells[0].Capacity.Steps)
	}
	// One CPU carries 32,000 ops/s within p99 1 ms since the open loop's
	// spin window is learned (about 21 µs of client and server CPU per op
	// there): the ramp's third step, 64,000, is the one that misses.
	if !missed {
		t.Errorf("every step passed, so none could say what the client took: %+v", res.Cells[0].Capacity.Steps)
	}
	if missed && !said {
		t.Errorf("no missed step's evidence says what the client took of the shared CPU: %+v", res.Cells[0].Capacity.Steps)
	}
}

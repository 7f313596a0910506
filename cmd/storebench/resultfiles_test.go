package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/testkit"
)

// TestResultFilesMustBeRegular: report, compare, history and merge refuse a device
// (/dev/zero: they read it until the runtime ran out of memory) and a FIFO
// (open(2) waited for a writer forever, and SIGTERM did not end it), in
// one line, exit 2, at once.
func TestResultFilesMustBeRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sample := filepath.Join("..", "..", "internal", "report", "testdata", "sample-result.json")
	for _, in := range []struct{ path, want string }{
		{"/dev/zero", "/dev/zero: a character device, not a regular file"},
		{fifo, fifo + ": a named pipe (FIFO), not a regular file"},
	} {
		for _, args := range [][]string{
			{"report", in.path},
			{"compare", sample, in.path},
			{"history", sample, in.path},
			{"merge", in.path, "-o", filepath.Join(dir, "merged")},
		} {
			t.Run(strings.Join(args[:1], " ")+" "+in.path, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, testkit.Binary(t), args...)
				var so, se strings.Builder
				cmd.Stdout, cmd.Stderr = &so, &se
				err := cmd.Run()
				if ctx.Err() != nil {
					t.Fatalf("%v still running after 10 s", args)
				}
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 2 {
					t.Fatalf("%v: %v, want exit 2\nstdout: %.300s\nstderr: %.300s", args, err, so.String(), se.String())
				}
				msg := strings.TrimSpace(se.String())
				if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, in.want) {
					t.Errorf("%v said %q, want one line saying %q", args, msg, in.want)
				}
			})
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "merged")); err == nil {
		t.Error("a refused merge made its output directory")
	}
}

// writeShards writes the results of two shards of one run, each in a
// results/<time>/ directory as run --shard makes it, with edit applied to
// the second shard's phase, and returns the two directories.
func writeShards(t *testing.T, edit func(p *metrics.Phase)) []string {
	t.Helper()
	base := t.TempDir()
	start := time.Date(2026, 11, 24, 7, 0, 0, 0, time.UTC)
	var dirs []string
	for i := range 2 {
		h := metrics.NewHistogram()
		for v := range int64(100) {
			if err := h.RecordValue((v + 1) * 1000); err != nil {
				t.Fatal(err)
			}
		}
		enc, err := metrics.EncodeHistogram(h)
		if err != nil {
			t.Fatal(err)
		}
		p := metrics.Phase{Name: "mix", Workers: 2, Ops: 100, DurationS: 1, Start: start, Histogram: enc, HistogramUnit: metrics.HistogramUnit,
			LatencyUs: metrics.LatencyOf(h, 1000, 100_000, 50.5), Series: []metrics.Second{{T: 0, Ops: 100, Mean: 50.5}}}
		if i == 1 && edit != nil {
			edit(&p)
		}
		r := &result.Result{Schema: result.Schema, ID: "20261124T070000Z", Status: result.StatusComplete, StartedAt: start, Seed: 1,
			Scenario: map[string]any{"name": "s"}, Shard: &result.Shard{Index: i, Count: 2},
			Cells: []result.Cell{{ID: "memory/mix", Target: "memory", Workload: "mix", Status: result.CellOK, StartedAt: start,
				Params: map[string]any{"clients": 2.0, "shard": map[string]any{"index": i}}, Phases: []metrics.Phase{p}}}}
		dir := filepath.Join(base, "shard"+string(rune('0'+i)), r.ID)
		if _, err := result.WriteNew(dir, r); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

// TestMergeTakesResultDirectories: like report and compare, merge takes
// the results/<time>/ directories a run leaves (it said "is a directory").
func TestMergeTakesResultDirectories(t *testing.T) {
	shards := writeShards(t, nil)
	out := filepath.Join(t.TempDir(), "merged")
	r := storebench(t, nil, "merge", shards[0], filepath.Join(shards[1], "result.json"), "-o", out)
	if r.code != 0 {
		t.Fatalf("merge of two result directories: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	m, err := result.Read(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p := m.Cells[0].Phases[0]; p.Ops != 200 {
		t.Errorf("merged %d ops, want 200", p.Ops)
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Errorf("no report.html beside the merged result: %v", err)
	}
}

// TestMergeReplacesNothing: a DIR that holds a report.html (or a
// result.json) is refused before anything is written; merge used to write
// result.json beside a report.html and then replace it.
func TestMergeReplacesNothing(t *testing.T) {
	shards := writeShards(t, nil)
	for _, name := range []string{"report.html", "result.json"} {
		t.Run(name, func(t *testing.T) {
			out := t.TempDir()
			mine := writeFile(t, out, name, "not storebench's")
			r := storebench(t, nil, "merge", filepath.Join(shards[0], "result.json"), filepath.Join(shards[1], "result.json"), "-o", out)
			msg := strings.TrimSpace(r.stderr)
			if r.code != 2 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, mine+" exists: a result is never replaced") {
				t.Errorf("merge into a directory holding %s: exit %d, said %q; want exit 2 and one line saying it exists", name, r.code, msg)
			}
			if b, err := os.ReadFile(mine); err != nil || string(b) != "not storebench's" {
				t.Errorf("%s now holds %.80q (%v)", mine, b, err)
			}
			if ents, _ := os.ReadDir(out); len(ents) != 1 {
				t.Errorf("the refused merge left %v in %s", ents, out)
			}
		})
	}
}

// TestMergeChecksShards: a shard's figures that no run writes are refused
// in one line naming the shard's file, cell, phase and field, exit 2; they
// merged into a "complete" result with negative ops and throughput.
func TestMergeChecksShards(t *testing.T) {
	shards := writeShards(t, func(p *metrics.Phase) { p.Ops = -100 })
	bad := filepath.Join(shards[1], "result.json")
	refusesBadInput(t, nil, []string{"merge", filepath.Join(shards[0], "result.json"), bad}, []string{"merge: " + bad + ": cell memory/mix phase mix: ops -100 is negative"})
}

package run

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/kinds"
	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/internal/workload/all"
)

// Bad options are refused by NewPlan, before any work, as an *InputError
// that names the option by its flag and says what it wants.
func TestBadOptionsAreInputErrors(t *testing.T) {
	zero, many := 0, scenario.MaxClientThreads+1
	tooMany := scenario.MaxRepeat + 1
	file := filepath.Join(t.TempDir(), "f")
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Out: " "}, `--out " " names no directory`},
		{Options{DataDir: file}, "--data-dir " + file + ": not a directory"},
		{Options{NetMechanism: "carrier-pigeon"}, `--net-mechanism "carrier-pigeon": want auto, netem or proxy`},
		{Options{Repeat: &zero}, "--repeat 0: want 1 to"},
		{Options{Repeat: &tooMany}, "want 1 to"},
		{Options{ClientThreads: &zero}, "--client-threads 0: want 1 to"},
		{Options{ClientThreads: &many}, "want 1 to"},
		{Options{ServerCPUs: "0-x"}, "--server-cpus: "},
		{Options{ClientCPUs: "100000"}, "--client-cpus: "},
		{Options{Keep: true}, "--keep: target memory is in storebench's own memory"},
	} {
		s, err := scenario.Parse("t.yaml", strings.NewReader("name: t\ntargets: [memory]\nworkloads:\n  - {type: kv, keys: [10]}\n"))
		if err != nil {
			t.Fatal(err)
		}
		if c.opts.Out == "" {
			c.opts.Out = t.TempDir()
		}
		if c.opts.DataDir == "" {
			c.opts.DataDir = t.TempDir()
		}
		_, err = NewPlan(context.Background(), kinds.All(), all.Types(), s, c.opts)
		if _, input := errors.AsType[*InputError](err); !input || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want one line of input error saying %q", c.opts, err, c.want)
		}
	}
}

// The time left: a target's unfinished cells cost what its finished ones
// cost per unit of weight, another target's what all finished cells cost
// on average, and the running cell what it has not run yet.
func TestRemaining(t *testing.T) {
	cells := []CellInfo{{Target: "a", Weight: 1000}, {Target: "a", Weight: 10000}, {Target: "b", Weight: 1000}, {Target: "b", Weight: 10000}}
	if _, ok := Remaining(cells, []float64{-1, -1, -1, -1}, 0, time.Second); ok {
		t.Error("an estimate before any cell finished")
	}
	// a: 2 s per 1,000; cell 1 has run 5 of its 20 s; b: 2 ms per key overall.
	left, ok := Remaining(cells, []float64{2, -1, -1, -1}, 1, 5*time.Second)
	if want := (15 + 2 + 20) * time.Second; !ok || left != want {
		t.Errorf("left %v, want %v", left, want)
	}
	// b's own cell, 4 s per 1,000, beats the average for b's last cell.
	left, _ = Remaining(cells, []float64{2, 20, 4, -1}, -1, 0)
	if want := 40 * time.Second; left != want {
		t.Errorf("left %v, want %v", left, want)
	}
}

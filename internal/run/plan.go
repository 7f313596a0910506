package run

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
)

// cell is one planned measurement of the run: a scenario cell, with its
// parameters as the result records them.
type cell struct {
	scenario.Cell
	// params are the cell's typed parameters as recorded, with the network
	// and stall asked for (network.go adds what was measured).
	params map[string]any
	// rep is the cell's round in a run with --repeat (repeatCells); 0: none.
	rep int
}

// id names the cell in tables and in the result: target/workload/param=value…
// with the parameters that tell the entry's cells apart.
func (c cell) id() string {
	parts := []string{c.Target.Spec.Label(), c.Entry}
	names := slices.Sorted(slices.Values(c.Names))
	for _, k := range names {
		if v, ok := c.params[k]; ok {
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	return strings.Join(parts, "/")
}

// record starts the cell's result with params (the cell's, or as the
// network set-up completed them).
func (c cell) record(params map[string]any) result.Cell {
	return result.Cell{ID: c.id(), Target: c.Target.Spec.Label(), Workload: c.Type, Name: c.entryName(), Params: params, Repeat: c.rep, StartedAt: time.Now().UTC()}
}

// failed is the result of a cell that could not run.
func (c cell) failed(params map[string]any, err error) result.Cell {
	rc := c.record(params)
	rc.Status, rc.Error = result.CellFailed, err.Error()
	return rc
}

// label is the cell's id with its round in a repeated run.
func (c cell) label() string { return c.id() + result.RepeatSuffix(c.rep) }

// entryName is the workload entry's name when it is not just its type.
func (c cell) entryName() string {
	if !c.Named {
		return ""
	}
	return c.Entry
}

// repeatCells runs each target's cells n times, in rounds (all its cells,
// then all again), so a slow spell of the machine falls on different cells
// rather than on every repeat of one, while the target's server starts
// once. Repeats keep the cell id; rep numbers them from 1.
func repeatCells(cells []cell, n int) []cell {
	if n <= 1 {
		return cells
	}
	out := make([]cell, 0, len(cells)*n)
	for start := 0; start < len(cells); {
		end := start + 1
		for end < len(cells) && cells[end].Target.Spec.Label() == cells[start].Target.Spec.Label() {
			end++
		}
		for r := 1; r <= n; r++ {
			for _, c := range cells[start:end] {
				c.rep = r
				out = append(out, c)
			}
		}
		start = end
	}
	return out
}

// planCells takes the resolved cells of the targets that can run here, with
// their parameters as recorded.
func planCells(r *scenario.Resolved, targets []scenario.Target) ([]cell, error) {
	var cells []cell
	for _, c := range r.Cells {
		kept := func(label string) bool {
			return slices.ContainsFunc(targets, func(t scenario.Target) bool { return t.Spec.Label() == label })
		}
		// A cell runs only if its target, and the one beside it, can run here.
		if !kept(c.Target.Spec.Label()) || c.CompanionTarget != nil && !kept(c.CompanionTarget.Spec.Label()) {
			continue
		}
		params, err := workload.Record(c.Params)
		if err != nil {
			return nil, err
		}
		if c.Net != nil {
			maps.Copy(params, (&target.Network{Asked: *c.Net}).AskedParams())
		}
		if c.Stall != nil {
			params["stall_after"], params["stall_for"] = c.Stall.After.String(), c.Stall.For.String()
		}
		cells = append(cells, cell{Cell: c, params: params})
	}
	return cells, nil
}

// env is what a cell runs against on inst.
func env(inst *target.Instance) workload.Env {
	e := workload.Env{Store: inst.Store, Kind: inst.Kind.Name, Info: inst.Info}
	if inst.Server != nil {
		e.Server = inst.Server
	}
	if inst.Cluster != nil {
		e.Cluster = inst.Cluster
	}
	return e
}

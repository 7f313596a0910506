package run

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/netem"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/hotkey"
	"github.com/storebench/storebench/internal/workload/kv"
	"github.com/storebench/storebench/internal/workload/mix"
	"github.com/storebench/storebench/internal/workload/throughput"
	"github.com/storebench/storebench/internal/workload/web"
)

// cell is one planned measurement: a target, a workload and its parameters.
type cell struct {
	target   scenario.Target
	workload string // the type: kv, throughput, …
	name     string // the scenario's name for this workload entry

	params map[string]any
	run    func(ctx context.Context, inst *target.Instance, h workload.Hooks) ([]metrics.Phase, error)
	// annotate, if set, adds the workload's own summary to the result cell
	// after run (payments: transfers, declines, invariants).
	annotate func(rc *result.Cell)
	// killsServer marks a workload that kills its managed server on purpose.
	killsServer bool
	// net is the network between the clients and the target; nil: direct (network.go).
	net *netem.Config
	// stall stops the managed server in each measured phase; nil: none (stall.go).
	stall *target.Stall
	// rep is the cell's round in a run with --repeat (repeatCells); 0: none.
	rep int
}

// id names the cell in tables and in the result: target/workload/param=value…
// with the parameters that vary inside a scenario.
func (c cell) id() string {
	var keys []string
	for k := range c.params {
		if idParams[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := []string{c.target.Spec.Label(), c.name}
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%v", k, c.params[k]))
	}
	return strings.Join(parts, "/")
}

// record starts the cell's result with params (the cell's, or as the
// network set-up completed them).
func (c cell) record(params map[string]any) result.Cell {
	return result.Cell{ID: c.id(), Target: c.target.Spec.Label(), Workload: c.workload, Name: c.entryName(), Params: params, Repeat: c.rep, StartedAt: time.Now().UTC()}
}

// failed is the result of a cell that could not run.
func (c cell) failed(params map[string]any, err error) result.Cell {
	rc := c.record(params)
	rc.Status, rc.Error = result.CellFailed, err.Error()
	return rc
}

// label is the cell's id with its round in a repeated run.
func (c cell) label() string { return c.id() + result.RepeatSuffix(c.rep) }

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
		for end < len(cells) && cells[end].target.Spec.Label() == cells[start].target.Spec.Label() {
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

// entryName is the workload entry's name when it is not just its type.
func (c cell) entryName() string {
	if c.name == c.workload {
		return ""
	}
	return c.name
}

// idParams are the parameters that name a cell.
// mix's read_ratio and key_dist name what it measures, as keys does for kv:
// two mixes of one run differ by them.
var idParams = map[string]bool{"keys": true, "mode": true, "durability": true, "variant": true, "design": true, "replica": true, "read_ratio": true, "key_dist": true}

// planner expands one workload entry of a scenario into cells for a target.
type planner func(s *scenario.Scenario, w scenario.Workload, t scenario.Target) []cell

// planners maps each workload type to its planner.
var planners = map[string]planner{
	"kv":         planKV,
	"throughput": planThroughput,
	"mix":        planMix,
	"hotkey":     planHotkey,
	"web":        planWeb,
	"payments":   planPayments,
	"durability": planDurability,
	"sessions":   planSessions,
}

// planCells expands targets × workloads × parameters into cells, grouped by target
// so each managed server starts once.
func planCells(s *scenario.Scenario, targets []scenario.Target) []cell {
	var cells []cell
	for _, t := range targets {
		for _, w := range s.Workloads {
			if !w.AppliesTo(t.Spec.Label()) {
				continue
			}
			cells = append(cells, withStall(withNetwork(planners[w.Type](s, w, t), s.EffectiveLoad(w)), w.Stall)...)
		}
	}
	return cells
}

func planKV(s *scenario.Scenario, w scenario.Workload, t scenario.Target) []cell {
	var cells []cell
	for _, n := range w.Keys {
		p := s.KVParams(w, n)
		params := map[string]any{"keys": n, "value_size": p.ValueSize, "key_mode": string(p.KeyMode), "clients": p.Clients, "warmup_ops": p.WarmupOps, "seed": p.Seed}
		if p.Batch > 0 {
			params["batch"] = p.Batch
		}
		cells = append(cells, cell{
			target: t, workload: w.Type, name: w.Label(),
			params: params,
			run: func(ctx context.Context, inst *target.Instance, h workload.Hooks) ([]metrics.Phase, error) {
				return kv.Run(ctx, inst.Store, p, h)
			},
		})
	}
	return cells
}

// loadParams records a workload's effective load in a cell's parameters.
func loadParams(params map[string]any, l workload.Load) map[string]any {
	params["clients"] = l.Clients
	if l.Pipeline > 1 {
		params["pipeline"] = l.Pipeline
	}
	params["connect_per_op"] = l.ConnectPerOp
	if l.Rate > 0 {
		params["rate"] = l.Rate
	}
	if l.Ops > 0 {
		params["ops"] = l.Ops
	}
	if l.Duration > 0 {
		params["duration"] = l.Duration.String()
	}
	if l.Warmup > 0 {
		params["warmup"] = l.Warmup.String()
	}
	if l.WarmupOps > 0 {
		params["warmup_ops"] = l.WarmupOps
	}
	return params
}

func planWeb(s *scenario.Scenario, w scenario.Workload, t scenario.Target) []cell {
	p := s.WebParams(w)
	return []cell{{
		target: t, workload: w.Type, name: w.Label(),
		params: loadParams(map[string]any{"value_bytes": len(p.Value), "seed": s.Seed}, p.Load),
		run: func(ctx context.Context, inst *target.Instance, h workload.Hooks) ([]metrics.Phase, error) {
			return web.Run(ctx, inst.Store, p, h)
		},
	}}
}

// keyspaceParams are the cell parameters that say which data a cell reads.
func keyspaceParams(ks workload.Keyspace) map[string]any {
	return map[string]any{"keyspace": ks.Keys, "value_size": ks.ValueSize, "key_mode": string(ks.KeyMode), "seed": ks.Seed}
}

func planThroughput(s *scenario.Scenario, w scenario.Workload, t scenario.Target) []cell {
	p := s.ThroughputParams(w)
	params := keyspaceParams(p.Keyspace)
	params["operations"] = p.Operations
	return []cell{{
		target: t, workload: w.Type, name: w.Label(), params: loadParams(params, p.Load),
		run: func(ctx context.Context, inst *target.Instance, h workload.Hooks) ([]metrics.Phase, error) {
			return throughput.Run(ctx, inst.Store, p, h)
		},
	}}
}

func planMix(s *scenario.Scenario, w scenario.Workload, t scenario.Target) []cell {
	p := s.MixParams(w)
	params := keyspaceParams(p.Keyspace)
	params["read_ratio"], params["key_dist"] = p.Ratio(), string(p.KeyDist)
	return []cell{{
		target: t, workload: w.Type, name: w.Label(), params: loadParams(params, p.Load),
		run: func(ctx context.Context, inst *target.Instance, h workload.Hooks) ([]metrics.Phase, error) {
			return mix.Run(ctx, inst.Store, p, h)
		},
	}}
}

func planHotkey(s *scenario.Scenario, w scenario.Workload, t scenario.Target) []cell {
	p := s.HotkeyParams(w) // hotkey.Run spells the value out, which can be 512 MiB: not the plan's work
	params := map[string]any{"value_bytes": p.Size(), "seed": p.Seed}
	return []cell{{
		target: t, workload: w.Type, name: w.Label(), params: loadParams(params, p.EffectiveLoad()),
		run: func(ctx context.Context, inst *target.Instance, h workload.Hooks) ([]metrics.Phase, error) {
			return hotkey.Run(ctx, inst.Store, p, h)
		},
	}}
}

package scenario

import (
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/hotkey"
	"github.com/storebench/storebench/internal/workload/keydist"
	"github.com/storebench/storebench/internal/workload/kv"
	"github.com/storebench/storebench/internal/workload/mix"
	"github.com/storebench/storebench/internal/workload/payments"
	"github.com/storebench/storebench/internal/workload/sessions"
	"github.com/storebench/storebench/internal/workload/throughput"
	"github.com/storebench/storebench/internal/workload/web"
)

// The parameters of a workload entry's cells, built in one place for
// Validate, which checks them, and the planner, which runs them.

// KVParams are the parameters of w's kv cell of keys keys.
func (s *Scenario) KVParams(w Workload, keys int64) kv.Params {
	l := s.EffectiveLoad(w)
	return kv.Params{Keys: keys, ValueSize: w.ValueSize, KeyMode: workload.KeyMode(w.KeyMode), Seed: s.Seed, Clients: l.Clients, WarmupOps: l.WarmupOps, Batch: w.Batch}
}

// Keyspace is w's keyspace, seeded by the scenario.
func (s *Scenario) Keyspace(w Workload) workload.Keyspace {
	return workload.Keyspace{Keys: w.Keyspace, ValueSize: w.ValueSize, KeyMode: workload.KeyMode(w.KeyMode), Seed: s.Seed}
}

// ThroughputParams are the parameters of w's throughput cell, defaults applied.
func (s *Scenario) ThroughputParams(w Workload) throughput.Params {
	return throughput.Params{Keyspace: s.Keyspace(w), Operations: w.Operations, Load: s.EffectiveLoad(w).Workload()}.WithDefaults()
}

// MixParams are the parameters of w's mix cell, defaults applied.
func (s *Scenario) MixParams(w Workload) mix.Params {
	return mix.Params{Keyspace: s.Keyspace(w), ReadRatio: w.ReadRatio, KeyDist: keydist.Dist(w.KeyDist), Load: s.EffectiveLoad(w).Workload()}.WithDefaults()
}

// HotkeyParams are the parameters of w's hotkey cell, without defaults:
// WithDefaults spells out the value, which only a valid size should.
func (s *Scenario) HotkeyParams(w Workload) hotkey.Params {
	return hotkey.Params{ValueSize: w.ValueSize, Value: w.Value, Seed: s.Seed, Load: s.EffectiveLoad(w).Workload()}
}

// WebParams are the parameters of w's web cell.
func (s *Scenario) WebParams(w Workload) web.Params {
	return web.Params{Value: w.Value, Load: s.EffectiveLoad(w).Workload()}
}

// estimates are the memory estimates of w's cells on a store of kind
// storeKind, for a plan that Validate has checked otherwise.
func (s *Scenario) estimates(w Workload, storeKind string) []workload.Estimate {
	var out []workload.Estimate
	switch w.Type {
	case "kv":
		for _, n := range w.Keys {
			out = append(out, s.KVParams(w, n).Memory())
		}
	case "throughput":
		out = append(out, s.ThroughputParams(w).Memory())
	case "mix":
		out = append(out, s.MixParams(w).Memory())
	case "hotkey":
		out = append(out, s.HotkeyParams(w).Memory())
	case "web":
		out = append(out, s.WebParams(w).Memory())
	case "durability":
		out = append(out, s.DurabilityParams(w).Memory())
	case "payments":
		spec := w.PaymentsSpec()
		for _, v := range spec.Variants(storeKind) {
			if p, err := payments.PlanParams(spec, v, s.Seed, s.EffectiveLoad(w).Workload()); err == nil {
				out = append(out, p.Memory())
			}
		}
	case "sessions":
		for _, c := range w.Sessions.Cells(storeKind, s.Replica) {
			if p, err := sessions.PlanParams(*w.Sessions, c, s.Seed, s.EffectiveLoad(w).Workload()); err == nil {
				out = append(out, p.Memory())
			}
		}
	}
	return out
}

package durability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/storebench/storebench/internal/powercut"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
)

// Type is the durability workload's registration. It runs on a managed
// server, or on files and SQLite (written by a child process storebench
// kills); whether a given target is managed is Cells' to check.
var Type = workload.Define("durability",
	"acknowledged writes lost when the server (or the writing process) is SIGKILLed, per profile",
	workload.Load{Clients: DefaultWriters}, func() workload.Spec { return &Spec{} },
	func(k target.Kind) error { return Check(k, target.Spec{Store: k.Name}) })

// Spec is a durability entry of a scenario: one cell of Trials crashes.
type Spec struct {
	ValueSize  int      `yaml:"value_size,omitempty" json:"value_size,omitempty"`
	Durability *Section `yaml:"durability,omitempty" json:"durability,omitempty"`
}

// Section is the entry's durability section: how many crashes and when
// (zero fields take the Default constants).
type Section struct {
	Trials          int           `yaml:"trials,omitempty" json:"trials,omitempty"`
	MinAcked        int64         `yaml:"min_acked,omitempty" json:"min_acked,omitempty"`
	KillWindow      time.Duration `yaml:"kill_window,omitempty" json:"kill_window,omitempty"`
	TrialTimeout    time.Duration `yaml:"trial_timeout,omitempty" json:"trial_timeout,omitempty"`
	RecoveryTimeout time.Duration `yaml:"recovery_timeout,omitempty" json:"recovery_timeout,omitempty"`
	// Fault is kill (default) or power (--fault power).
	Fault string `yaml:"fault,omitempty" json:"fault,omitempty"`
}

func (s *Spec) Defaults() {}

func (s *Spec) params(l workload.Load, seed uint64) Params {
	var d Section
	if s.Durability != nil {
		d = *s.Durability
	}
	return Params{
		Trials: d.Trials, Writers: l.Clients, ValueSize: s.ValueSize, MinAcked: d.MinAcked,
		KillWindow: d.KillWindow, Seed: seed, TrialTimeout: d.TrialTimeout, RecoveryTimeout: d.RecoveryTimeout, Fault: d.Fault,
	}.WithDefaults()
}

func (s *Spec) Validate(l workload.Load, seed uint64) error {
	if l.Ops != 0 || l.Duration != 0 || l.Rate != 0 || l.Pipeline > 1 || l.ConnectPerOp || l.Warmup != 0 || l.WarmupOps != 0 {
		return errors.New("durability: writers write until the kill; ops, duration, rate, pipeline, connect_per_op and warm-up do not apply (set clients and the durability section)")
	}
	if l.Clients <= 0 {
		return fmt.Errorf("durability: clients must be positive, got %d", l.Clients)
	}
	return s.params(l, seed).Validate()
}

// Cells makes one cell, which kills the server on purpose.
func (s *Spec) Cells(p workload.Plan) ([]workload.Cell, error) {
	if err := Check(p.Kind, p.Spec); err != nil {
		return nil, err
	}
	params := s.params(p.Load, p.Seed)
	if params.Fault == FaultPower {
		if p.Kind.Cluster {
			return nil, fmt.Errorf("durability --fault power: %s is a cluster; a power cut under a cluster's nodes is not measured (the node kill is: drop --fault power)", p.Spec.Label())
		}
		if !p.Spec.Managed() {
			return nil, fmt.Errorf("durability: a power cut needs a data dir of storebench's own, which it mounts: a managed server, or files and sqlite without a URL; %s is given by URL", p.Spec.Label())
		}
		if err := powercut.Check(); err != nil {
			return nil, fmt.Errorf("durability --fault power: %w", err)
		}
	}
	return []workload.Cell{{
		Params: params, Names: []string{"fault"}, Memory: params.Memory(), KillsServer: true,
		Run: func(ctx context.Context, env workload.Env, h workload.Hooks) (workload.Outcome, error) {
			sum, phases, err := Run(ctx, env, p.Kind, params, h)
			return workload.Outcome{Phases: phases, Summary: func(c *result.Cell) { c.Durability = &sum }}, err
		},
	}}, nil
}

// MarshalJSON records the parameters as a result cell's params.
func (p Params) MarshalJSON() ([]byte, error) {
	m := map[string]any{"trials": p.Trials, "writers": p.Writers, "value_size": p.ValueSize,
		"min_acked": p.MinAcked, "kill_window": p.KillWindow.String(), "seed": p.Seed}
	if p.Fault == FaultPower {
		m["fault"] = p.Fault // names the cell; a kill is the default
	}
	return json.Marshal(m)
}

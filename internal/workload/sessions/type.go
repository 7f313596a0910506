package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
)

// Type is the sessions workload's registration.
var Type = workload.Define("sessions",
	"web sessions: create, read, keepalive, expiry and reaping; naive vs tuned PostgreSQL knob by knob",
	workload.Load{}, func() workload.Spec { return &Spec{} },
	workload.Requires[store.Sessions]("sessions", "it cannot keep sessions"))

// Spec is a sessions entry of a scenario: one cell per phase-A variant or
// phase-B design of the store (and per replica design with replica).
type Spec struct {
	Sessions *Section `yaml:"sessions,omitempty" json:"sessions,omitempty"`
}

func (e *Spec) Defaults() {}

func (e *Spec) Validate(l workload.Load, seed uint64) error {
	if e.Sessions == nil {
		return errors.New("sessions: the sessions section is required (phase: insert or churn, …)")
	}
	return e.Sessions.Check(seed, l)
}

func (e *Spec) Cells(p workload.Plan) ([]workload.Cell, error) {
	spec := *e.Sessions
	var cells []workload.Cell
	for _, sc := range spec.Cells(KindOf(p.Kind), spec.Replica) {
		params, err := PlanParams(spec, sc, p.Seed, p.Load)
		if err != nil {
			return nil, err
		}
		if sc.Replica && (!p.Spec.Managed() || p.Kind.Server == "") {
			return nil, fmt.Errorf("sessions: --replica needs a managed PostgreSQL primary; %s is not one", p.Spec.Label())
		}
		names := []string{"design", "replica"}
		if sc.Phase == PhaseInsert {
			names = []string{"variant"}
		}
		cells = append(cells, workload.Cell{
			Params: params, Names: names, Memory: params.Memory(), Replica: sc.Replica,
			Run: func(ctx context.Context, env workload.Env, h workload.Hooks) (workload.Outcome, error) {
				senv := Env{Store: env.Store, ReplicaURL: env.ReplicaURL}
				if env.Server != nil {
					senv.Server = env.Server
				}
				out, err := Run(ctx, senv, params, h)
				return workload.Outcome{Phases: out.Phases, Summary: func(c *result.Cell) { c.Sessions = out.Summary }}, err
			},
		})
	}
	return cells, nil
}

// MarshalJSON records p as a result cell's params (CellParams).
func (p Params) MarshalJSON() ([]byte, error) { return json.Marshal(CellParams(p)) }

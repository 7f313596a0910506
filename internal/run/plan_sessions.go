package run

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result"
	schema "github.com/storebench/storebench/internal/result/sessions"
	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/sessions"
)

// planSessions makes one cell per phase-A variant or phase-B design of the
// store (and per replica design with --replica).
func planSessions(s *scenario.Scenario, w scenario.Workload, t scenario.Target) []cell {
	spec := *w.Sessions
	load := s.EffectiveLoad(w).Workload()
	var cells []cell
	for _, sc := range spec.Cells(t.Spec.Store, s.Replica) {
		p, _ := sessions.PlanParams(spec, sc, s.Seed, load) // checked by scenario validation
		var sum *schema.Summary
		cells = append(cells, cell{
			target: t, workload: w.Type, name: w.Label(), params: sessions.CellParams(p),
			run: func(ctx context.Context, inst *target.Instance, h workload.Hooks) ([]metrics.Phase, error) {
				env := sessions.Env{Store: inst.Store}
				if inst.Server != nil {
					env.Server = inst.Server
				}
				if p.Replica {
					if inst.Server == nil || inst.Server.Kind != server.Postgres {
						return nil, fmt.Errorf("sessions: --replica needs a managed PostgreSQL primary; %s is not one", inst.Spec.Label())
					}
					replica, err := server.StartReplica(ctx, inst.Server, server.Options{BaseDir: filepath.Dir(inst.Server.DataDir), CPUs: inst.Server.CPUs})
					if err != nil {
						return nil, err
					}
					defer func() {
						stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
						defer cancel()
						replica.Stop(stopCtx)
					}()
					env.ReplicaURL = replica.URL
				}
				out, err := sessions.Run(ctx, env, p, h)
				sum = out.Summary
				return out.Phases, err
			},
			annotate: func(rc *result.Cell) { rc.Sessions = sum },
		})
	}
	return cells
}

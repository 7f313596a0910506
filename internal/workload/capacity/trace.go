package capacity

import (
	"context"
	"fmt"
	"time"

	"github.com/storebench/storebench/internal/metrics"
	schema "github.com/storebench/storebench/internal/result/capacity"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/replay"
)

// traceRecorded is what result.json keeps of a capacity cell over a trace:
// the trace and the search (the mix's fields do not apply).
type traceRecorded struct {
	Trace       string   `json:"trace"`
	TraceFormat string   `json:"trace_format,omitempty"`
	Clients     int      `json:"clients"`
	SLO         []string `json:"slo"`
	Need        float64  `json:"need,omitempty"`
}

// traceParams is the replay a capacity cell over a trace searches the
// speed of.
func (e *Spec) traceParams(l workload.Load, seed uint64) replay.Params {
	return replay.Params{Trace: e.Trace, Format: e.TraceFormat, Seed: seed, Load: workload.Load{Clients: l.Clients}}.WithDefaults()
}

// SearchTrace searches the highest speed at which the trace's replay meets
// each SLO: the search over rates, each step a replay of the step's
// duration at speed = the step's rate / the trace's own mean rate (the
// trace read again from its start when it ends first), on the store
// emptied once before the first step. A capacity of R requests/s is the
// trace at speed R / its rate.
func SearchTrace(ctx context.Context, st store.Store, rp replay.Params, s Search, h workload.Hooks) ([]metrics.Phase, *schema.Summary, error) {
	if err := rp.Validate(); err != nil {
		return nil, nil, err
	}
	rate, spanned, err := rp.TraceRate()
	if err != nil {
		return nil, nil, fmt.Errorf("capacity: trace: %w", err)
	}
	// The search starts at the recorded pace (speed 1), whatever start rate
	// an entry gives its mix; no closed-loop sweep (it keeps no pace).
	s.StartRate = 0
	sp, err := s.Params(rp.Load.Clients, nil)
	if err != nil {
		return nil, nil, err
	}
	sp.StartRate = rate
	sp.MinRate = min(sp.MinRate, rate)
	sp.MaxRate = max(sp.MaxRate, rate)
	clients, closeAll, err := replay.Clients(ctx, st, rp)
	if err != nil {
		return nil, nil, err
	}
	defer closeAll()
	step := func(ctx context.Context, r StepRequest) (metrics.Phase, error) {
		speed := r.Rate / rate
		ph, err := replay.Step(ctx, clients, rp, r.Name, speed, r.Duration, h)
		// Every request due before the step's end is sent (late, if the
		// store falls behind, which its latency then shows): offered at
		// the step's rate, the trace's own ups and downs within it, none
		// unsent. Ops over the duration would judge a rising trace's
		// first second short of the mean.
		ph.OpenLoop = &metrics.OpenLoop{TargetOpsS: r.Rate}
		ph.Notes = append(ph.Notes, fmt.Sprintf("speed %.3g: the trace's %.0f requests/s (%s of it) at %.0f", speed, rate, spanned.Round(time.Millisecond), r.Rate))
		return ph, err
	}
	sum, phases, err := Run(ctx, Drive{Step: step}, sp)
	if sum != nil {
		sum.Notes = append(sum.Notes, fmt.Sprintf("rates are the trace's own mean rate (%.0f requests/s over %s) times a speed factor: a capacity of R requests/s is speed R/%.0f", rate, spanned.Round(time.Millisecond), rate))
		for i := range sum.Capacity {
			if c := &sum.Capacity[i]; c.Found {
				c.Speed = c.OpsS / rate
			}
		}
	}
	return phases, sum, err
}

package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/storebench/storebench/internal/metrics"
	capschema "github.com/storebench/storebench/internal/result/capacity"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/trace"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/capacity"
)

// SpeedSearch is Params.Speed of a cell that searches its speed: the
// highest speed factor whose replay meets each SLO (capacity's search,
// over the trace's own request rate times the factor).
const SpeedSearch = "search"

// traceRate is the trace's mean rate of requests sent (unsupported ones
// left out) over its span, read through once; an error when it has no
// times to scale.
func (p Params) traceRate() (float64, time.Duration, error) {
	r, err := p.open()
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	var n int64
	var first, last time.Duration = -1, 0
	for {
		q, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, 0, err
		}
		if q.Op == trace.OpNone || q.At < 0 {
			continue
		}
		if first < 0 {
			first = q.At
		}
		last, n = q.At, n+1
	}
	if n < 2 || last <= first {
		return 0, 0, errors.New("a speed search needs a trace with times over more than an instant (kvcache v1 has none)")
	}
	return float64(n) / (last - first).Seconds(), last - first, nil
}

// runSearch searches the highest speed at which the trace's replay meets
// each SLO: capacity's search, each step a replay of the step's duration
// at speed = the step's rate / the trace's own rate (the trace read again
// from its start when it ends first), on the store emptied once before the
// first. An SLO no speed met is the cell's error (capacity.Unmet).
func runSearch(ctx context.Context, st store.Store, p Params, h workload.Hooks) ([]metrics.Phase, *capschema.Summary, error) {
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	p = p.WithDefaults()
	rate, spanned, err := p.traceRate()
	if err != nil {
		return nil, nil, fmt.Errorf("replay: %w", err)
	}
	sp, err := p.Search.Params(p.Load.Clients, nil)
	if err != nil {
		return nil, nil, err
	}
	if p.Search.StartRate == 0 {
		sp.StartRate = rate // speed 1
		sp.MinRate = min(sp.MinRate, rate)
	}
	clients, closeAll, err := workload.FreshClients(ctx, "replay", st, p.Load)
	if err != nil {
		return nil, nil, err
	}
	defer closeAll()
	step := func(ctx context.Context, r capacity.StepRequest) (metrics.Phase, error) {
		speed := r.Rate / rate
		ph, _, err := replayPhase(ctx, clients, p, span{name: r.Name, speed: speed, until: r.Duration}, h)
		// Every request due before the step's end is sent (late, if the
		// store falls behind, which its latency then shows): offered at
		// the step's rate, the trace's own ups and downs within it, none
		// unsent. Ops over the duration would judge a rising trace's
		// first second short of the mean.
		ph.OpenLoop = &metrics.OpenLoop{TargetOpsS: r.Rate}
		ph.Notes = append(ph.Notes, fmt.Sprintf("speed %.3g: the trace's %.0f requests/s (%s of it) at %.0f", speed, rate, spanned.Round(time.Millisecond), r.Rate))
		return ph, err
	}
	sum, phases, err := capacity.Run(ctx, capacity.Drive{Step: step}, sp)
	if sum != nil {
		sum.Notes = append(sum.Notes, fmt.Sprintf("rates are the trace's own mean rate (%.0f requests/s over %s) times a speed factor: a capacity of R requests/s is speed R/%.0f", rate, spanned.Round(time.Millisecond), rate))
		if err == nil {
			err = capacity.Unmet(sum, sp)
		}
	}
	return phases, sum, err
}

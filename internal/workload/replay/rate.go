package replay

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/trace"
	"github.com/storebench/storebench/internal/workload"
)

// TraceRate is the trace's mean rate of requests sent (unsupported ones
// left out) over its span, read through once; an error when it has no
// times to scale (a speed search needs them).
func (p Params) TraceRate() (float64, time.Duration, error) {
	r, err := p.Open()
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

// Clients opens the connections a replay of p sends on, on the store
// emptied first.
func Clients(ctx context.Context, st store.Store, p Params) ([]store.KV, func(), error) {
	return workload.FreshClients(ctx, "replay", st, p.WithDefaults().Load)
}

// Step replays the trace on clients as one phase named name, at speed,
// for the requests whose scaled time falls before until (the trace read
// again from its start, after one mean gap, when it ends sooner): a step
// of a search over the trace's speed (capacity's, with a trace). Every
// request due before until is sent, late if the store falls behind.
func Step(ctx context.Context, clients []store.KV, p Params, name string, speed float64, until time.Duration, h workload.Hooks) (metrics.Phase, error) {
	ph, _, err := replayPhase(ctx, clients, p.WithDefaults(), span{name: name, speed: speed, until: until}, h)
	return ph, err
}

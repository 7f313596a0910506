package workload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/blockio"
)

// Load is how hard a workload's measured phases drive a target; every
// workload that runs timed or counted phases takes it.
type Load struct {
	Clients      int           // connections, one per worker
	Pipeline     int           // ops per round trip (Batcher); 1 = none
	ConnectPerOp bool          // connect, do one op, close: no connection reuse
	Rate         float64       // open loop: total ops/s; 0 = closed loop
	Ops          int64         // measured ops per phase; 0 = run for Duration
	Duration     time.Duration // measured time per phase, when Ops is 0
	Warmup       time.Duration // timed warm-up (with Duration)
	WarmupOps    int64         // counted warm-up (with Ops)
}

// Validate rejects out-of-bounds values and impossible combinations before
// any work.
func (l Load) Validate() error {
	var errs []error
	for _, err := range []error{
		CheckClients("clients", l.Clients), CheckPipeline("pipeline", l.Pipeline),
		l.checkOps(), CheckOps("warmup_ops", l.WarmupOps, 0),
		CheckDuration("duration", l.Duration), CheckDuration("warmup", l.Warmup),
		CheckRate("rate", l.Rate, l.Duration, l.Ops+max(l.WarmupOps, 0)),
	} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...) // the engine would repeat them
	}
	if l.Pipeline > 1 && l.ConnectPerOp {
		errs = append(errs, errors.New("pipeline and connect-per-op exclude each other"))
	}
	if l.Pipeline > 1 && l.Rate > 0 {
		errs = append(errs, errors.New("pipeline with an open-loop rate is not supported: the rate schedules single ops"))
	}
	if err := l.Config("check").Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// checkOps bounds the op count; 0 runs for the duration instead.
func (l Load) checkOps() error {
	if l.Ops == 0 {
		return nil
	}
	return CheckOps("ops", l.Ops, 1)
}

// WithDefaults returns l with Clients set to clients when unset, and Ops to
// ops when neither Ops nor Duration is set.
func (l Load) WithDefaults(clients int, ops int64) Load {
	if l.Clients == 0 {
		l.Clients = clients
	}
	if l.Ops == 0 && l.Duration == 0 {
		l.Ops = ops
	}
	return l
}

// Depth is the number of ops per call: the pipeline depth, at least 1.
func (l Load) Depth() int { return max(l.Pipeline, 1) }

// Config is the engine configuration of one phase. With a pipeline, the
// engine counts calls, so Ops and the rate are divided by the depth.
func (l Load) Config(name string) load.Config {
	d := int64(l.Depth())
	return load.Config{
		Name: name, Workers: l.Clients, Ops: (l.Ops + d - 1) / d, Duration: l.Duration,
		Warmup: l.Warmup, WarmupOps: (l.WarmupOps + d - 1) / d, Rate: l.Rate, OpsPerCall: l.Pipeline,
	}
}

// KVClients opens one KV client per worker, or, with ConnectPerOp, one
// client per worker that connects anew for every operation. The stores are
// told how many connections the phase drives (blockio.WithConnections), to
// choose how each waits for its replies.
func KVClients(ctx context.Context, st store.Store, l Load) ([]store.KV, func(), error) {
	open := st.Open
	if l.ConnectPerOp {
		open = func(context.Context) (store.Client, error) { return store.PerOpClient(st), nil }
	} else {
		ctx = blockio.WithConnections(ctx, l.Clients)
	}
	out, closeAll, err := OpenKV(ctx, open, l.Clients)
	if err != nil {
		return nil, nil, err
	}
	if l.Pipeline > 1 {
		if _, ok := out[0].(store.Batcher); !ok {
			closeAll()
			return nil, nil, fmt.Errorf("pipeline: %w", store.ErrUnsupported)
		}
	}
	return out, closeAll, nil
}

// OpenKV opens n clients with open, each of which must do key-value
// operations, and the function that closes them; when one fails, those
// already open are closed.
func OpenKV(ctx context.Context, open func(context.Context) (store.Client, error), n int) ([]store.KV, func(), error) {
	out := make([]store.KV, 0, n)
	closeAll := func() {
		for _, c := range out {
			c.(store.Client).Close()
		}
	}
	for i := range n {
		c, err := open(ctx)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("open client %d of %d: %w", i+1, n, err)
		}
		kv, ok := c.(store.KV)
		if !ok {
			c.Close()
			closeAll()
			return nil, nil, fmt.Errorf("key-value operations: %w", store.ErrUnsupported)
		}
		out = append(out, kv)
	}
	return out, closeAll, nil
}

// ClientIO is how clients' connections wait for the server, for the phase
// (load.Config.ClientIO): the mode every client reports (blockio.Mode*),
// "mixed" if they differ, "" if none reports one (in-process stores,
// connect-per-op).
func ClientIO[C any](clients []C) string {
	mode := ""
	for _, c := range clients {
		r, ok := any(c).(interface{ ClientIO() string })
		if !ok {
			return ""
		}
		switch m := r.ClientIO(); {
		case mode == "":
			mode = m
		case m != mode:
			return "mixed"
		}
	}
	return mode
}

// MarshalJSON records the load as a cell's params show it: what is set,
// durations as "30s".
func (l Load) MarshalJSON() ([]byte, error) {
	m := map[string]any{"clients": l.Clients, "connect_per_op": l.ConnectPerOp}
	if l.Pipeline > 1 {
		m["pipeline"] = l.Pipeline
	}
	if l.Rate > 0 {
		m["rate"] = l.Rate
	}
	if l.Ops > 0 {
		m["ops"] = l.Ops
	}
	if l.Duration > 0 {
		m["duration"] = l.Duration.String()
	}
	if l.Warmup > 0 {
		m["warmup"] = l.Warmup.String()
	}
	if l.WarmupOps > 0 {
		m["warmup_ops"] = l.WarmupOps
	}
	return json.Marshal(m)
}

// FreshClients opens l's clients (KVClients) and resets the store, for a
// workload that starts from an empty namespace; errors name the workload.
func FreshClients(ctx context.Context, name string, st store.Store, l Load) ([]store.KV, func(), error) {
	clients, closeAll, err := KVClients(ctx, st, l)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := st.Reset(ctx); err != nil {
		closeAll()
		return nil, nil, fmt.Errorf("%s: reset store: %w", name, err)
	}
	return clients, closeAll, nil
}

// ValueOr is *v when a section sets v, def when it leaves it out: the
// pointer fields of a section tell "unset" from a meaningful zero.
func ValueOr[T any](v *T, def T) T {
	if v == nil {
		return def
	}
	return *v
}

// SliceOr is cmp.Or for slices: a when it has elements, else b (a
// section's list overlaid on another's, or a default list).
func SliceOr[S ~[]E, E any](a, b S) S {
	if len(a) > 0 {
		return a
	}
	return b
}

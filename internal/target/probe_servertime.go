package target

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/store"
)

// probes runs several probes as one: Begin in order, End in reverse, so the
// first probe's readings enclose the others'.
type probes []load.Probe

func (ps probes) Begin() {
	for _, p := range ps {
		p.Begin()
	}
}

func (ps probes) End(ph *metrics.Phase) {
	for i := len(ps) - 1; i >= 0; i-- {
		ps[i].End(ph)
	}
}

// serverTimeTimeout bounds each reading of the server's counters.
const serverTimeTimeout = ExternalTimeout

// timeProbe reads the store's server-side counters once when the measured
// part begins and once when it ends (one query each, on the store's admin
// connection), and attaches the difference to the phase.
type timeProbe struct {
	st     store.ServerTimer
	before store.ServerTime
	err    error
}

func (p *timeProbe) read() (store.ServerTime, error) {
	ctx, cancel := context.WithTimeout(context.Background(), serverTimeTimeout)
	defer cancel()
	return p.st.ServerTime(ctx)
}

func (p *timeProbe) Begin() { p.before, p.err = p.read() }

func (p *timeProbe) End(ph *metrics.Phase) {
	err := p.err
	if err == nil {
		var after store.ServerTime
		if after, err = p.read(); err == nil {
			var warn string
			ph.ServerTime, warn, err = summarizeServerTime(p.before, after, ph)
			if warn != "" {
				ph.Warnings = append(ph.Warnings, warn)
			}
		}
	}
	if err != nil {
		ph.Warnings = append(ph.Warnings, serverTimeWarning(err))
	}
}

// serverTimeWarning phrases a failed reading for the phase's warnings.
func serverTimeWarning(err error) string {
	if errors.Is(err, store.ErrNoServerTime) {
		return err.Error() // "server-side time unavailable: <why>"
	}
	return store.ErrNoServerTime.Error() + ": " + err.Error()
}

// summarizeServerTime turns two readings around a phase into the phase's
// server time, set beside its client latency. It returns a nil summary and
// an error when the difference means nothing (counters reset, or none of
// the operations of a phase that uses the store counted), and a warning when the server counted more
// operations than the client made (other clients of a shared server).
func summarizeServerTime(before, after store.ServerTime, ph *metrics.Phase) (*metrics.ServerTimeSummary, string, error) {
	s := &metrics.ServerTimeSummary{Source: after.Source, Ops: map[string]metrics.ServerOpTime{}}
	var total time.Duration
	for name, a := range after.Ops {
		b := before.Ops[name]
		calls, t := a.Calls-b.Calls, a.Total-b.Total
		if calls < 0 || t < 0 {
			return nil, "", fmt.Errorf("the server's statistics were reset during the phase (%s calls went from %d to %d)", name, b.Calls, a.Calls)
		}
		if calls == 0 {
			continue
		}
		s.Ops[name] = metrics.ServerOpTime{Calls: calls, MeanUs: usPer(t, calls)}
		s.Calls += calls
		total += t
	}
	if s.Calls == 0 {
		if ph.Ops == 0 || ph.NoStore {
			return nil, "", nil
		}
		return nil, "", fmt.Errorf("the server counted none of the phase's %d operations", ph.Ops)
	}
	s.MeanUs = usPer(total, s.Calls)
	opc := int64(max(ph.OpsPerCall, 1))
	var failed int64
	for _, n := range ph.Errors {
		failed += n
	}
	if calls := ph.Ops/opc - failed; calls > 0 {
		s.PerCallUs = usPer(total, calls)
		s.ClientOverheadUs = ph.LatencyUs.Mean - s.PerCallUs
	}
	var warn string
	if s.Calls > ph.Ops && !ph.MultiCall {
		warn = fmt.Sprintf("server-side time: the server counted %d operations for the phase's %d; it includes other clients' (source: %s)", s.Calls, ph.Ops, s.Source)
	}
	return s, warn, nil
}

func usPer(d time.Duration, n int64) float64 { return float64(d) / 1e3 / float64(n) }

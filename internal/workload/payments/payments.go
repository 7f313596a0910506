// Package payments is the payments OLTP workload of the "Fastest
// Open-Source Databases" article (the Reserva tool), fixed as
// workloads/payments.md specifies: the same generated data on every engine,
// the four round trips of a transfer (authenticate the requester, read card
// and account, authenticate the approver, transfer in one transaction),
// declines as outcomes with reasons, deadlocks and serialization failures
// retried and counted, deletes of random earlier transfers journaled, both
// transaction modes, one durability setting mapped to each engine, and the
// invariants checked after every run.
//
// One engine op (phase "payments") is one transfer attempt, followed by the
// delete that every 1/DeleteFraction-th commit owes; the phases "transfer"
// (end to end, committed transfers only), "rt1".."rt4" and "delete" time
// each step on its own. Summary carries everything else.
package payments

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	schema "github.com/storebench/storebench/internal/result/payments"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/tick"
	"github.com/storebench/storebench/internal/workload"
)

// Sentinel errors of Run; the summary and phases are returned with them.
var (
	// ErrErrors means some attempts failed with errors (not declines, not
	// retried conflicts); the figures are complete but the run is not clean.
	ErrErrors = errors.New("payments: transfers failed with errors")
)

// PhaseName is the engine's phase: one op per transfer attempt.
const PhaseName = "payments"

// Hooks are the shared workload hooks.
type Hooks = workload.Hooks

func (p Params) loadConfig() load.Config {
	return load.Config{Name: PhaseName, Workers: p.Workers, Ops: p.Transfers, Duration: p.Duration,
		Warmup: p.Warmup, WarmupOps: p.WarmupTransfers}
}

// Run sets up the data, runs the transfers, samples server statistics,
// checks the invariants and drops the tables (unless p.Keep). It returns
// the summary and phases measured so far also when it fails; attempts
// that failed are ErrErrors, after everything was measured and checked. A
// violated invariant is in the summary (Invariants), not an error.
func Run(ctx context.Context, st store.Store, p Params, h Hooks) (*schema.Summary, []metrics.Phase, error) {
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	pay, ok := st.(store.Payments)
	if !ok {
		return nil, nil, fmt.Errorf("payments: %w", store.ErrUnsupported)
	}
	settings, err := pay.PaymentsPrepare(ctx, p.config())
	if err != nil {
		return nil, nil, err
	}
	sum := &schema.Summary{Mode: p.Mode, Durability: p.Durability, Isolation: p.isolationName(), LockOrder: p.LockOrder, MaxTries: p.MaxTries,
		Settings: settings, Workers: p.Workers,
		Data: schema.DataSummary{Orgs: p.Orgs, Users: int64(p.Orgs) * int64(p.UsersPerOrg), Accounts: p.Accounts, InitialBalance: p.InitialBalance,
			AmountMin: p.AmountMin, AmountMax: p.AmountMax, Selection: p.Selection, Seed: p.Seed, DeleteFraction: p.DeleteFraction, Faults: p.Faults}}

	runStart := time.Now()
	d := newDataSet(p, runStart)
	stats := startSampler(ctx, pay, p.StatsInterval, sum)
	setup, err := pay.PaymentsSetup(ctx, d.data())
	sum.Data.SetupS = time.Since(runStart).Seconds()
	if err != nil {
		stats.stop(time.Time{})
		return sum, nil, fmt.Errorf("payments: set up data: %w", err)
	}
	sum.Data.DDL = setup.DDL
	if !p.Keep {
		defer func() {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if derr := pay.PaymentsDrop(dctx); derr != nil {
				sum.Notes = append(sum.Notes, "drop tables: "+derr.Error())
			}
		}()
	}

	s := &shared{p: p, d: d}
	ws := make([]*worker, 0, p.Workers)
	lws := make([]load.Worker, 0, p.Workers)
	defer func() {
		for _, w := range ws {
			w.conn.Close()
		}
	}()
	for i := 0; i < p.Workers; i++ {
		conn, err := pay.PaymentsOpen(ctx, p.config())
		if err != nil {
			stats.stop(time.Time{})
			return sum, nil, fmt.Errorf("payments: open connection %d of %d: %w", i+1, p.Workers, err)
		}
		w := newWorker(s, conn, i)
		ws = append(ws, w)
		lws = append(lws, w)
	}

	cfg := h.Apply(p.loadConfig())
	cfg.Probe = &probe{inner: cfg.Probe, s: s}
	phase, runErr := load.Run(ctx, cfg, lws)
	stats.stop(s.t0)

	phases := []metrics.Phase{phase}
	dur := time.Duration(phase.DurationS * float64(time.Second))
	for step := range nSteps {
		recs := make([]*metrics.Recorder, len(ws))
		for i, w := range ws {
			recs[i] = w.rec[step]
		}
		phases = append(phases, metrics.Merge(recs, metrics.Meta{Name: stepNames[step], Duration: dur, ClientCPU: -1}))
	}

	var all, warm counts
	var committed, deleted int64
	var journal []store.PaymentsDeleted
	minutes := map[int64]int64{}
	for _, w := range ws {
		warm.add(&w.warm)
		all.add(&w.warm)
		for i := range w.buckets {
			all.add(&w.buckets[i])
		}
		committed += w.committed
		journal = append(journal, w.journal...)
		for k, v := range w.minutes {
			minutes[k] += v
		}
		for _, m := range w.retrySamples {
			if len(sum.RetrySamples) < 5 && !slices.Contains(sum.RetrySamples, m) {
				sum.RetrySamples = append(sum.RetrySamples, m)
			}
		}
	}
	deleted = int64(len(journal))
	measured := all
	measured.committed -= warm.committed
	measured.declined -= warm.declined
	measured.retries -= warm.retries
	measured.errors -= warm.errors
	measured.deletes -= warm.deletes
	measured.deleteMisses -= warm.deleteMisses
	measured.redraws -= warm.redraws
	for i := range measured.reasons {
		measured.reasons[i] -= warm.reasons[i]
	}
	sum.DurationS, sum.WarmupS = phase.DurationS, phase.Warmup.DurationS
	sum.Committed, sum.Declined, sum.Retries, sum.Errors = measured.committed, measured.declined, measured.retries, measured.errors
	sum.Attempts = measured.committed + measured.declined + measured.errors
	sum.DeclinedBy = reasonMap(&measured)
	sum.Redraws, sum.Deletes, sum.DeleteMisses = measured.redraws, measured.deletes, measured.deleteMisses
	sum.Warmup = schema.WarmupCounts{Committed: warm.committed, Declined: warm.declined, Retries: warm.retries, Errors: warm.errors, Deletes: warm.deletes}
	if phase.DurationS > 0 {
		sum.CommittedPerS = float64(sum.Committed) / phase.DurationS
	}
	fillSeries(sum, ws, dur, p.SteadyWindow)
	if runErr != nil {
		sum.Notes = append(sum.Notes, "run interrupted: invariants not checked (a transfer in flight may have committed unseen)")
		return sum, phases, runErr
	}

	facts, err := pay.PaymentsCheck(ctx, &store.PaymentsCheckInput{InitialBalance: p.InitialBalance, AmountMin: p.AmountMin, AmountMax: p.AmountMax,
		WindowStartUs: setup.ServerNowUs, Journal: journal, Limit: maxRows})
	if err != nil {
		return sum, phases, fmt.Errorf("payments: check invariants: %w", err)
	}
	// Violated invariants are a finding the summary shows (the data the
	// store kept is wrong), not a failure to measure: a threshold judges
	// them (--assert 'invariants==ok').
	sum.Invariants = evaluate(p, facts, committed, deleted, minutes, journal)
	if n := all.errors; n > 0 {
		return sum, phases, fmt.Errorf("%w: %d of %d attempts (warm-up included); see the phases' error samples", ErrErrors, n, all.committed+all.declined+all.errors)
	}
	return sum, phases, nil
}

// probe marks the end of the warm-up for the workers and passes the
// engine's calls on to the caller's probe.
type probe struct {
	inner load.Probe
	s     *shared
}

func (pr *probe) Begin() {
	if pr.inner != nil {
		pr.inner.Begin()
	}
	pr.s.t0 = time.Now() // the engine takes its own t0 right after
	pr.s.measuring.Store(true)
}

func (pr *probe) End(p *metrics.Phase) {
	if pr.inner != nil {
		pr.inner.End(p)
	}
}

// sampler reads server statistics every interval on its own goroutine.
type sampler struct {
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	at      []time.Time
	samples []map[string]float64
	err     error
	pay     store.Payments
	sum     *schema.Summary
	enabled bool
}

func startSampler(ctx context.Context, pay store.Payments, every time.Duration, sum *schema.Summary) *sampler {
	ctx, cancel := context.WithCancel(ctx)
	sp := &sampler{cancel: cancel, done: make(chan struct{}), pay: pay, sum: sum, enabled: every > 0}
	if every <= 0 {
		close(sp.done)
		return sp
	}
	go func() {
		defer close(sp.done)
		tick.Every(ctx, every, func() { sp.take(ctx) })
	}()
	return sp
}

func (sp *sampler) take(ctx context.Context) {
	v, err := sp.pay.PaymentsStats(ctx)
	now := time.Now()
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if err != nil {
		if sp.err == nil && ctx.Err() == nil {
			sp.err = err
		}
		return
	}
	sp.at = append(sp.at, now)
	sp.samples = append(sp.samples, v)
}

// stop ends sampling, takes a last sample and files the samples in the
// summary relative to t0 (the measured start; zero when the run never got
// there).
func (sp *sampler) stop(t0 time.Time) {
	sp.cancel()
	<-sp.done
	if !sp.enabled || t0.IsZero() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	sp.take(ctx)
	cancel()
	for i, at := range sp.at {
		sp.sum.ServerStats = append(sp.sum.ServerStats, schema.StatsSample{TS: at.Sub(t0).Seconds(), Values: sp.samples[i]})
	}
	if sp.err != nil {
		sp.sum.Notes = append(sp.sum.Notes, "server statistics: "+sp.err.Error())
	}
}

package sessions

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	schema "github.com/storebench/storebench/internal/result/sessions"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/tick"
)

// replicaLagGrace is how soon after its last write a session may still be
// missing on a replica without counting as lost: replication lag.
const replicaLagGrace = 2 * time.Second

// churn is one phase B run.
type churn struct {
	p      Params
	env    Env
	t      schema.Timing
	design Design
	sd     store.SessionDesign
	caps   store.SessionCaps
	// kaOnRead: reads extend their sessions (V10 naive)
	kaOnRead bool
	tr       *tracker
	sum      *schema.Summary
	nextID   atomic.Int64
	mStart   time.Time // start of the measured part

	mu      sync.Mutex // guards the counters below and sum.Samples
	kaCalls int64
	kaIDs   int64
	kaExt   int64
	kaErrs  int64
	reaps   int64
	reaped  int64
	reapErr int64
}

// open opens a session handle on the primary.
func (c *churn) open(ctx context.Context) (store.SessionClient, error) {
	h, err := c.env.Store.(store.Sessions).OpenSessions(ctx, c.sd)
	if err != nil {
		return nil, fmt.Errorf("sessions: open: %w", err)
	}
	return h, nil
}

// runChurn is phase B (see the package doc).
func runChurn(ctx context.Context, env Env, p Params, hooks Hooks) (out Outcome, err error) {
	info, err := env.Store.Info(ctx)
	if err != nil {
		return Outcome{}, fmt.Errorf("sessions: %w", err)
	}
	d, _ := ParseDesign(p.Design) // checked by Validate
	t := p.Timing()
	c := &churn{p: p, env: env, t: t, design: d, sd: d.Store(t), kaOnRead: d.KeepaliveOnRead()}
	c.sum = &schema.Summary{Phase: PhaseChurn, Store: info.Kind, Design: d.Spec, Knobs: knobValues(d, env.Store), Timing: &t}
	out.Summary = c.sum
	if p.Replica {
		if _, ok := env.Store.(store.SessionReplicas); !ok || env.ReplicaURL == "" {
			return out, fmt.Errorf("sessions: reads on a replica need a %s store with a replica started: %w", info.Kind, store.ErrUnsupported)
		}
	}

	admin, err := c.open(ctx)
	if err != nil {
		return out, err
	}
	defer func() {
		if admin != nil {
			admin.Close()
		}
	}()
	if admin, err = c.serverSettings(ctx, admin); err != nil {
		return out, err
	}
	if err := admin.Setup(ctx); err != nil {
		return out, fmt.Errorf("sessions: %w", err)
	}
	if c.sum.Catalog, err = admin.Describe(ctx); err != nil {
		return out, fmt.Errorf("sessions: %w", err)
	}
	c.caps = admin.Caps()
	slackLo, slackHi := c.caps.Resolution+5*time.Millisecond, 2*c.caps.Resolution+5*time.Millisecond
	window := t.TTL
	if d.SkipFresh() {
		window = t.RefreshBelow
	}
	c.tr = newTracker(int64(t.TTL), int64(window), int64(slackLo), int64(slackHi))
	c.sum.Counters = &schema.Counters{EarlySlackS: slackLo.Seconds(), LateSlackS: slackHi.Seconds()}
	if d.KeepaliveOnRead() {
		c.sum.Notes = append(c.sum.Notes, "keepalive on every read (V10 naive): the read phase's latency includes the extension; no keepalive phase")
	}
	if c.caps.NativeExpiry {
		c.sum.Notes = append(c.sum.Notes, info.Kind+" expires sessions itself: no reaper")
	}
	c.sum.Notes = append(c.sum.Notes, "server cost in the read phase covers everything the server did meanwhile: creates, keepalives, reaps, vacuum")

	// Every connection is opened before the clock starts.
	creators, readers, err := c.openWorkers(ctx)
	defer func() {
		for _, w := range creators {
			w.h.Close()
		}
		for _, w := range readers {
			w.h.Close()
		}
	}()
	if err != nil {
		return out, err
	}
	// The observer has a handle of its own: cancelling a query closes a
	// PostgreSQL connection, and the final sample uses admin.
	obsH, err := c.open(ctx)
	if err != nil {
		return out, err
	}
	defer obsH.Close()
	var flushH, reapH store.SessionClient
	if !d.KeepaliveOnRead() {
		if flushH, err = c.open(ctx); err != nil {
			return out, err
		}
		defer flushH.Close()
	}
	if !c.caps.NativeExpiry {
		if reapH, err = c.open(ctx); err != nil {
			return out, err
		}
		defer reapH.Close()
	}

	bg, stopBG := context.WithCancel(ctx)
	defer stopBG()
	start := time.Now()
	c.mStart = start.Add(t.Warmup)
	kaRec, reapRec := metrics.NewRecorder(nil), metrics.NewRecorder(nil)
	var wg sync.WaitGroup
	if flushH != nil {
		wg.Go(func() { c.flusher(bg, flushH, kaRec) })
	}
	if reapH != nil {
		wg.Go(func() { c.reaper(bg, reapH, reapRec) })
	}
	wg.Go(func() { c.observer(bg, obsH) })

	createCfg := hooks.Apply(load.Config{Name: "create", Workers: len(creators), Duration: t.Duration, Warmup: t.Warmup, Rate: p.CreateRate})
	createCfg.Probe = nil // the read phase's probe already sees the whole server
	readCfg := hooks.Apply(load.Config{Name: "read", Workers: len(readers), Duration: t.Duration, Warmup: t.Warmup, Rate: p.ReadRate})
	cw := make([]load.Worker, len(creators))
	for i, w := range creators {
		cw[i] = w
	}
	rw := make([]load.Worker, len(readers))
	for i, w := range readers {
		rw[i] = w
	}
	var createPh, readPh metrics.Phase
	var createErr, readErr error
	var runs sync.WaitGroup
	runs.Go(func() { createPh, createErr = load.Run(ctx, createCfg, cw) })
	runs.Go(func() { readPh, readErr = load.Run(ctx, readCfg, rw) })
	runs.Wait()
	end := time.Now()
	stopBG()
	wg.Wait()
	c.sample(context.WithoutCancel(ctx), admin, end)

	meta := func(name string) metrics.Meta {
		return metrics.Meta{Name: name, Duration: end.Sub(c.mStart), ClientCPU: -1}
	}
	out.Phases = []metrics.Phase{createPh, readPh}
	if flushH != nil {
		out.Phases = append(out.Phases, metrics.Merge([]*metrics.Recorder{kaRec}, meta("keepalive")))
	}
	if reapH != nil {
		out.Phases = append(out.Phases, metrics.Merge([]*metrics.Recorder{reapRec}, meta("reap")))
	}
	c.finish(creators, readers, createPh, readPh)
	if err := errors.Join(createErr, readErr); err != nil {
		return out, fmt.Errorf("sessions churn (%s): %w", p.Design, err)
	}
	return out, nil
}

// serverSettings sets the server to what the design needs (V14, a scaled
// autovacuum_naptime) when storebench manages it, and notes it when it
// cannot. It returns the admin handle, reopened after the change (nil, and
// the first one closed, on error).
func (c *churn) serverSettings(ctx context.Context, admin store.SessionClient) (store.SessionClient, error) {
	want, err := admin.ServerSettings(ctx)
	if err != nil {
		return admin, fmt.Errorf("sessions: %w", err)
	}
	if len(want) == 0 {
		return admin, nil
	}
	c.sum.ServerSettings = want
	var kv []string
	for k, v := range want {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	if c.env.Server == nil {
		c.sum.Notes = append(c.sum.Notes, "NOT in effect (storebench does not change the settings of a server it does not manage): "+strings.Join(kv, ", "))
		return admin, nil
	}
	admin.Close()
	if err := c.env.Server.Reconfigure(ctx, want); err != nil {
		return nil, fmt.Errorf("sessions: set the server's %s: %w", strings.Join(kv, ", "), err)
	}
	if r, ok := c.env.Store.(store.Reconnector); ok {
		if err := r.Reconnect(ctx); err != nil {
			return nil, fmt.Errorf("sessions: after setting %s: %w", strings.Join(kv, ", "), err)
		}
	}
	c.sum.Notes = append(c.sum.Notes, "server set to "+strings.Join(kv, ", ")+" (reloaded, or restarted where a reload does not apply)")
	return c.open(ctx)
}

// openWorkers opens the creators' and readers' handles; readers on the
// replica when asked.
func (c *churn) openWorkers(ctx context.Context) ([]*creator, []*reader, error) {
	var creators []*creator
	var readers []*reader
	for i := range c.p.CreateClients {
		h, err := c.open(ctx)
		if err != nil {
			return creators, readers, err
		}
		creators = append(creators, &creator{c: c, h: h, rng: rand.New(rand.NewPCG(c.p.Seed, uint64(i))), buf: make([]byte, 0, c.p.PayloadSize)})
	}
	for i := range c.p.Clients {
		var h store.SessionClient
		var err error
		if c.p.Replica {
			h, err = c.env.Store.(store.SessionReplicas).OpenReplicaSessions(ctx, c.env.ReplicaURL, c.sd)
		} else {
			h, err = c.open(ctx)
		}
		if err != nil {
			return creators, readers, fmt.Errorf("sessions: open reader %d: %w", i+1, err)
		}
		readers = append(readers, &reader{c: c, h: h, rng: rand.New(rand.NewPCG(c.p.Seed, 1<<32+uint64(i)))})
	}
	return creators, readers, nil
}

// creator creates sessions.
type creator struct {
	c   *churn
	h   store.SessionClient
	rng *rand.Rand
	buf []byte

	creates int64
}

func (w *creator) Do(ctx context.Context, seq int64) error {
	c := w.c
	nonce := uint64(seq)<<8 | uint64(w.rng.IntN(256))
	w.buf = appendPayload(w.buf[:0], nonce, c.p.PayloadSize)
	t1 := time.Now().UnixNano()
	id, err := w.h.Create(ctx, c.nextID.Add(1), w.buf)
	t2 := time.Now().UnixNano()
	if err != nil {
		return err
	}
	w.creates++
	active := -math.Log(1-w.rng.Float64()) * float64(c.t.ActiveMean)
	c.tr.add(id, nonce, t1, t2, int64(min(active, 10*float64(c.t.ActiveMean))))
	return nil
}

// reader reads sessions and judges every read.
type reader struct {
	c   *churn
	h   store.SessionClient
	rng *rand.Rand
	buf []byte

	reads, hits, misses, errs, activeReads, expiredReads int64
	stale, lost, unjudged, lagMisses                     int64
	staleMax                                             int64
	errSample                                            string
}

var errWrongSession = errors.New("read returned another session's payload")

func (w *reader) Do(ctx context.Context, _ int64) error {
	c := w.c
	pk, ok := c.tr.pick(w.rng, time.Now().UnixNano(), c.p.ExpiredReads)
	if !ok { // nothing created yet: the very start of the warm-up
		time.Sleep(time.Millisecond)
		return nil
	}
	t1 := time.Now().UnixNano()
	got, hit, err := w.h.Read(ctx, pk.id, w.buf)
	t2 := time.Now().UnixNano()
	w.buf = got
	w.reads++
	if pk.expired {
		w.expiredReads++
	} else {
		w.activeReads++
	}
	if err != nil {
		w.errs++
		if w.errSample == "" && ctx.Err() == nil {
			w.errSample = err.Error()
		}
		return err
	}
	if hit && !holds(got, pk.nonce) {
		return errclass.WithClass(errclass.ClassMismatch, fmt.Errorf("%w: session %d", errWrongSession, pk.id))
	}
	if hit {
		w.hits++
	} else {
		w.misses++
	}
	v := c.tr.afterRead(pk, hit, t1, t2, c.kaOnRead)
	switch {
	case v.unjudged:
		w.unjudged++
	case v.stale:
		w.stale++
		w.staleMax = max(w.staleMax, v.late)
	case v.lost && c.p.Replica && v.sinceWrite < int64(replicaLagGrace):
		w.lagMisses++
	case v.lost:
		w.lost++
	}
	return nil
}

// measured reports whether a call that started at t1 belongs to the
// measured part.
func (c *churn) measured(t1 time.Time) bool { return !t1.Before(c.mStart) }

// record records a background call of [t1, t2] that ended with err, if it
// belongs to the measured part.
func (c *churn) record(rec *metrics.Recorder, t1, t2 time.Time, err error) {
	switch {
	case !c.measured(t1):
	case err != nil:
		rec.RecordError(err, t2.Sub(t1))
	default:
		rec.Record(t2.Sub(t1))
	}
}

// flusher is the application's keepalive buffer: every KeepaliveEvery it
// extends the sessions read since the last flush, in chunks.
func (c *churn) flusher(ctx context.Context, h store.SessionClient, rec *metrics.Recorder) {
	var slots []int32
	var ids []int64
	tick.Every(ctx, c.t.KeepaliveEvery, func() {
		slots, ids = c.tr.takeDirty(slots, ids)
		for i := 0; i < len(ids); i += c.p.KeepaliveChunk {
			j := min(i+c.p.KeepaliveChunk, len(ids))
			t1 := time.Now()
			n, err := h.KeepAlive(ctx, ids[i:j])
			t2 := time.Now()
			if ctx.Err() != nil {
				c.tr.afterKeepalive(slots[i:], ids[i:], t1.UnixNano(), t2.UnixNano(), false)
				return
			}
			c.tr.afterKeepalive(slots[i:j], ids[i:j], t1.UnixNano(), t2.UnixNano(), err == nil)
			c.mu.Lock()
			c.kaCalls++
			c.kaIDs += int64(j - i)
			switch {
			case err != nil:
				c.kaErrs++
			case n < 0 || c.kaExt < 0:
				c.kaExt = -1
			default:
				c.kaExt += n
			}
			c.mu.Unlock()
			c.record(rec, t1, t2, err)
		}
	})
}

// reaper deletes expired sessions every ReapEvery: one unbounded DELETE
// (V9 naive), or capped batches until one comes back short or
// ReapMaxBatches were run.
func (c *churn) reaper(ctx context.Context, h store.SessionClient, rec *metrics.Recorder) {
	limit := 0
	if c.design.ReapBatched() {
		limit = c.p.ReapBatch
	}
	tick.Every(ctx, c.t.ReapEvery, func() {
		for b := 1; ; b++ {
			t1 := time.Now()
			n, err := h.Reap(ctx, limit)
			t2 := time.Now()
			if ctx.Err() != nil {
				return
			}
			c.mu.Lock()
			c.reaps++
			c.reaped += n
			if err != nil {
				c.reapErr++
			}
			c.mu.Unlock()
			c.record(rec, t1, t2, err)
			if err != nil || limit == 0 || n < int64(limit) || c.p.ReapMaxBatches > 0 && b >= c.p.ReapMaxBatches {
				break
			}
		}
	})
}

// observer samples the store every ObserveEvery, and once right when the
// measured part begins.
func (c *churn) observer(ctx context.Context, h store.SessionClient) {
	every := time.NewTicker(c.t.ObserveEvery)
	defer every.Stop()
	atStart := time.NewTimer(time.Until(c.mStart))
	defer atStart.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-every.C:
			c.sample(ctx, h, now)
		case now := <-atStart.C:
			c.sample(ctx, h, now)
		}
	}
}

func (c *churn) sample(ctx context.Context, h store.SessionClient, now time.Time) {
	o, err := h.Observe(ctx)
	if err != nil {
		if ctx.Err() == nil {
			c.mu.Lock()
			if len(c.sum.Notes) < 20 {
				c.sum.Notes = append(c.sum.Notes, "observation failed: "+err.Error())
			}
			c.mu.Unlock()
		}
		return
	}
	s := schema.Sample{T: now.Sub(c.mStart).Seconds(), Rows: o.Rows, Expired: o.Expired, OldestExpiredS: o.OldestExpired.Seconds(), Bytes: o.Bytes, Metrics: o.Metrics}
	if s.T < 0 && s.T > -0.05 {
		s.T = 0 // the sample taken as the measured part begins
	}
	c.mu.Lock()
	c.sum.Samples = append(c.sum.Samples, s)
	c.mu.Unlock()
}

// finish adds the workers' counts to the summary and derives the figures.
func (c *churn) finish(creators []*creator, readers []*reader, createPh, readPh metrics.Phase) {
	k := c.sum.Counters
	for _, w := range creators {
		k.Creates += w.creates
	}
	var rep *schema.Replica
	if c.p.Replica {
		rep = &schema.Replica{URL: c.env.ReplicaURL}
		c.sum.Replica = rep
	}
	var lag int64
	for _, w := range readers {
		k.Reads += w.reads
		k.Hits += w.hits
		k.Misses += w.misses
		k.ReadErrors += w.errs
		k.ActiveReads += w.activeReads
		k.ExpiredReads += w.expiredReads
		k.Stale += w.stale
		k.StaleMaxS = max(k.StaleMaxS, time.Duration(w.staleMax).Seconds())
		k.Lost += w.lost
		k.Unjudged += w.unjudged
		lag += w.lagMisses
		if rep != nil && rep.ErrorSample == "" {
			rep.ErrorSample = w.errSample
		}
	}
	c.mu.Lock()
	k.Keepalives, k.KeepaliveIDs, k.KeepaliveExtended, k.KeepaliveErrors = c.kaCalls, c.kaIDs, c.kaExt, c.kaErrs
	k.Reaps, k.Reaped, k.ReapErrors = c.reaps, c.reaped, c.reapErr
	samples := c.sum.Samples
	c.mu.Unlock()
	if rep != nil {
		rep.Reads, rep.Hits, rep.Misses, rep.Errors = k.Reads, k.Hits, k.Misses+k.ReadErrors, k.ReadErrors
		rep.LagMisses, rep.LagGraceS = lag, replicaLagGrace.Seconds()
	}
	sort.SliceStable(samples, func(i, j int) bool { return samples[i].T < samples[j].T })
	c.sum.Figures = derive(samples, createPh.Ops+readPh.Ops+k.KeepaliveIDs)
	if active, tracked := c.tr.counts(); tracked > 0 {
		c.sum.Notes = append(c.sum.Notes, fmt.Sprintf("at the end: %d sessions active, %d tracked by the client", active, tracked))
	}
}

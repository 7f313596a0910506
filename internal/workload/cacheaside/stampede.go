package cacheaside

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	schema "github.com/storebench/storebench/internal/result/cacheaside"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/keydist"
)

// The stampede phases' kinds of request: a hit, or a refill (OpRefill).
const (
	OpRefill = "refill" // did not find a fresh entry at once
)

// StampedeKinds are a stampede phase's kinds, indexed by hotWorker.kind.
var StampedeKinds = []string{OpHit, OpRefill}

const (
	stampedeHit = iota
	stampedeRefill
)

// StampedePhase is the phase name of a protection's stampede phase.
func StampedePhase(protection string) string { return "stampede-" + protection }

// hot is what the clients of one stampede phase share.
type hot struct {
	p          *Params
	protection string
	index      int64 // the hot key's index: Keys, one past the keyspace
	key, lease []byte
	size       int

	fillGen  atomic.Uint64 // the last fill's generation
	lastSeen atomic.Uint64 // the newest generation a hit returned
	expired  atomic.Uint64 // the newest generation counted as expired
	expiries atomic.Int64
	waits    atomic.Int64
	early    atomic.Int64

	mu      sync.Mutex
	queries map[uint64]int64 // database queries by the generation whose expiry caused them
	flight  flight
}

// expire counts generation g's expiry once, whichever client meets it first.
func (h *hot) expire(g uint64) {
	for {
		e := h.expired.Load()
		if e >= g {
			return
		}
		if h.expired.CompareAndSwap(e, g) {
			h.expiries.Add(1)
			return
		}
	}
}

// saw records that a hit returned generation g.
func (h *hot) saw(g uint64) {
	for {
		s := h.lastSeen.Load()
		if s >= g || h.lastSeen.CompareAndSwap(s, g) {
			return
		}
	}
}

// queried counts a database query against the current expiry.
func (h *hot) queried() {
	h.mu.Lock()
	h.queries[h.expired.Load()]++
	h.mu.Unlock()
}

// hotWorker is one client of a stampede phase.
type hotWorker struct {
	h     *hot
	db    store.KV
	cache store.KV
	adder store.Adder // the lease's
	rand  keydist.Rand
	timer *time.Timer
	kind  int

	got, scratch []byte
}

func (w *hotWorker) Kind() int { return w.kind }

func (w *hotWorker) Do(ctx context.Context, _ int64) error {
	h := w.h
	gen := h.lastSeen.Load() // before the get: a miss is the expiry of what was there then
	ok, err := w.get(ctx, w.cache)
	if err != nil {
		return err
	}
	if ok {
		hd, err := w.check()
		if err != nil {
			return err
		}
		if h.protection == ProtectXFetch && w.early(hd) {
			h.early.Add(1)
			h.expire(hd.fillGen)
			w.kind = stampedeRefill
			return w.fill(ctx)
		}
		h.saw(hd.fillGen)
		w.kind = stampedeHit
		return nil
	}
	h.expire(gen)
	w.kind = stampedeRefill
	switch h.protection {
	case ProtectLease:
		return w.lease(ctx)
	case ProtectCoalesce:
		return h.flight.do(func() error { return w.fill(ctx) })
	}
	return w.fill(ctx)
}

// get reads the hot key from kv (the cache or the database) into w.got.
func (w *hotWorker) get(ctx context.Context, kv store.KV) (ok bool, err error) {
	w.got, ok, err = kv.Get(ctx, w.h.key, w.got[:0])
	return ok, err
}

// check verifies the value just read and returns its header.
func (w *hotWorker) check() (header, error) {
	hd, scratch, err := parseValue(w.h.key, w.got, w.h.p.Seed, w.h.index, w.h.size, w.scratch)
	w.scratch = scratch
	return hd, err
}

// early is XFetch's test: recompute now when now − δ·β·ln(u) ≥ expiry,
// u uniform in (0, 1].
func (w *hotWorker) early(hd header) bool {
	u := 1 - w.rand.Float64()
	return float64(time.Now().UnixNano())-float64(hd.delta)*XFetchBeta*math.Log(u) >= float64(hd.expiry)
}

// fill reads the hot row from the database and writes it to the cache as a
// new generation, its recompute time (δ) in the header.
func (w *hotWorker) fill(ctx context.Context) error {
	h := w.h
	start := time.Now()
	h.queried()
	ok, err := w.get(ctx, w.db)
	if err != nil {
		return err
	}
	if !ok {
		return workload.Missing(h.key)
	}
	if _, err := w.check(); err != nil {
		return err
	}
	now := time.Now()
	ttl := h.p.Stampede.TTL
	restamp(w.got, now.Add(ttl).UnixNano(), int64(now.Sub(start)), h.fillGen.Add(1))
	keep := ttl
	if h.protection == ProtectXFetch {
		// XFetch decides by the expiry in the value; the cache keeps the
		// entry twice as long, so a coarse expiry clock (Memcached's whole
		// seconds) cannot remove it before XFetch has had its chance.
		keep = 2 * ttl
	}
	return w.cache.Set(ctx, h.key, w.got, keep)
}

// lease refills under a lease: the client whose Add of the lease key
// succeeds reads the cache once more (another holder may have filled it
// since this client's miss), fills it if still empty and drops the lease;
// the others wait LeasePoll and re-read the cache, and try for the lease
// again, until the entry is there.
func (w *hotWorker) lease(ctx context.Context) error {
	h := w.h
	s := h.p.Stampede
	for {
		added, err := w.adder.Add(ctx, h.lease, leaseValue, s.LeaseTTL)
		if err != nil {
			return err
		}
		if added {
			ok, err := w.get(ctx, w.cache)
			if err == nil && ok {
				_, err = w.check()
			} else if err == nil {
				err = w.fill(ctx)
			}
			if derr := w.cache.Delete(ctx, h.lease); err == nil {
				err = derr
			}
			return err
		}
		h.waits.Add(1)
		w.timer.Reset(s.LeasePoll)
		select {
		case <-ctx.Done():
			w.timer.Stop()
			return ctx.Err()
		case <-w.timer.C:
		}
		ok, err := w.get(ctx, w.cache)
		if err != nil {
			return err
		}
		if ok {
			_, err := w.check()
			return err
		}
	}
}

// leaseValue is what the lease key holds: only its presence matters.
var leaseValue = []byte("held")

// runStampede measures one protection's stampede phase on fresh clients,
// the hot entry filled once before it starts.
func runStampede(ctx context.Context, env Env, p Params, protection string, hooks workload.Hooks) (metrics.Phase, schema.Stampede, error) {
	name := StampedePhase(protection)
	out := schema.Stampede{Protection: protection, Phase: name}
	s := p.Stampede
	db, ca, closeAll, err := clients(ctx, env, s.Clients, true)
	if err != nil {
		return metrics.Phase{Name: name}, out, err
	}
	defer closeAll()
	h := &hot{p: &p, protection: protection, index: p.Keys, size: p.sizeOf(p.Keys), queries: map[uint64]int64{}}
	h.key = workload.AppendKey(nil, p.KeyMode, p.Seed, h.index)
	h.lease = append([]byte("lease:"), h.key...)
	workers := make([]load.Worker, len(db))
	for i := range db {
		w := &hotWorker{h: h, db: db[i], cache: ca[i], rand: keydist.NewRand(p.Seed, opStreams/2+uint64(i)), timer: time.NewTimer(time.Hour),
			got: make([]byte, 0, h.size), scratch: make([]byte, 0, h.size)}
		w.timer.Stop()
		if protection == ProtectLease {
			a, ok := ca[i].(store.Adder)
			if !ok {
				return metrics.Phase{Name: name}, out, fmt.Errorf("the lease needs add-if-absent on the cache (store.Adder): %w", store.ErrUnsupported)
			}
			w.adder = a
		}
		workers[i] = w
	}
	// A fresh entry to begin with, generation 1, unmeasured.
	w0 := workers[0].(*hotWorker)
	if err := w0.cache.Delete(ctx, h.lease); err != nil {
		return metrics.Phase{Name: name}, out, err
	}
	if err := w0.fill(ctx); err != nil {
		return metrics.Phase{Name: name}, out, err
	}
	h.lastSeen.Store(1)
	clear(h.queries)

	cfg := hooks.Apply(load.Config{Name: name, Workers: len(db), Duration: s.Duration, Rate: s.Rate, Kinds: StampedeKinds})
	cfg.ClientIO = workload.ClientIO(ca)
	ph, err := load.Run(ctx, cfg, workers)

	out.DurationS, out.Requests = ph.DurationS, ph.Ops
	out.Expiries = h.expiries.Load()
	for _, n := range h.queries {
		out.DBQueries += n
		out.MaxDBQueriesPerExpiry = max(out.MaxDBQueriesPerExpiry, n)
	}
	out.DBQueriesPerExpiry = ratio(out.DBQueries, out.Expiries)
	out.Refills = ph.ByOp[OpRefill].Ops
	out.RefillP99Us = ph.ByOp[OpRefill].LatencyUs.P99
	out.P99Us = ph.LatencyUs.P99
	out.LeaseWaits, out.EarlyRecomputes = h.waits.Load(), h.early.Load()
	return ph, out, err
}

// flight is request coalescing in one process (single flight): the first
// caller runs fn, the callers that arrive while it runs wait and share its
// error. One flight per phase: the phase reads one key.
type flight struct {
	mu  sync.Mutex
	cur *call // nil: no flight
}

type call struct {
	done chan struct{}
	err  error
}

func (f *flight) do(fn func() error) error {
	f.mu.Lock()
	if c := f.cur; c != nil {
		f.mu.Unlock()
		<-c.done
		return c.err
	}
	c := &call{done: make(chan struct{})}
	f.cur = c
	f.mu.Unlock()
	c.err = fn()
	f.mu.Lock()
	f.cur = nil
	f.mu.Unlock()
	close(c.done)
	return c.err
}

// Package cacheaside is the cache-aside workload: the application loop a
// client library runs in front of a database, measured end to end. A read
// gets the key from the cache; on a miss it reads the row from the
// database and fills the cache with a TTL. A write updates the database
// row, then invalidates (deletes) or updates the cache entry, per Policy.
//
// Every value carries its version (value.go); the workload keeps, per key,
// the last committed version and when recent versions committed (track.go),
// so every read is checked: a read returning a version older than the last
// one committed when it started is stale, and its age is the time since the
// first newer version committed; a read older than one the same client had
// already read of that key breaks monotonic reads.
//
// The main phase ("cache-aside") runs on the engine, closed or open loop,
// with three kinds of request (hit, miss, write) recorded apart. Then, for
// each stampede protection asked, a phase ("stampede-<protection>") has
// every client read one hot key whose cache entry expires every
// Stampede.TTL, and counts the database queries each expiry caused
// (stampede.go).
package cacheaside

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	schema "github.com/storebench/storebench/internal/result/cacheaside"
	capschema "github.com/storebench/storebench/internal/result/capacity"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/keydist"
)

// Phase names and the kinds of request of the main phase.
const (
	PhaseMain = "cache-aside"
	OpHit     = "hit"
	OpMiss    = "miss"
	OpWrite   = "write"
)

// Kinds are the main phase's kinds of request, indexed by mainWorker.kind.
var Kinds = []string{OpHit, OpMiss, OpWrite}

const (
	kindHit = iota
	kindMiss
	kindWrite
)

// Env is the two stores of a cell: the database, the truth, and the cache
// in front of it; Cache nil runs the database alone.
type Env struct {
	DB    store.Store
	Cache store.Store
}

// Results are what a cell measured beside its phases: the cache-aside
// summary, and the capacity search's when Params.Search asks for one.
type Results struct {
	CacheAside *schema.Summary
	Capacity   *capschema.Summary
}

// Run checks p, writes the database's rows (unmeasured: keys [0, Keys) and
// the stampede's hot key, version 0), measures the main phase, then one
// stampede phase per protection, then the capacity search over the main
// phase's loop when p.Search asks for one. It returns the summaries and
// the phases measured so far, also on an error.
func Run(ctx context.Context, env Env, p Params, hooks workload.Hooks) (Results, []metrics.Phase, error) {
	if err := p.Validate(); err != nil {
		return Results{}, nil, err
	}
	if env.DB == nil {
		return Results{}, nil, errors.New("cache-aside: no database")
	}
	var res Results
	phases, err := runCell(ctx, env, p, hooks, &res)
	return res, phases, err
}

func runCell(ctx context.Context, env Env, p Params, hooks workload.Hooks, res *Results) ([]metrics.Phase, error) {
	p = p.WithDefaults()
	sum := &schema.Summary{Params: p.CellParams(), CacheUsed: env.Cache != nil && p.ttl() > 0}
	if info, err := env.DB.Info(ctx); err == nil {
		sum.Database = info.Kind
	}
	if env.Cache != nil {
		if info, err := env.Cache.Info(ctx); err == nil {
			sum.Cache = info.Kind
		}
	}
	switch {
	case env.Cache == nil:
		sum.Notes = append(sum.Notes, "the database alone: every read is a database query")
	case p.ttl() == 0:
		sum.Notes = append(sum.Notes, "TTL 0: the cache is not used, every read is a database query")
	}
	sp, err := keydist.NewTheta(p.KeyDist, p.Keys, p.Theta)
	if err != nil {
		return nil, fmt.Errorf("cache-aside: %w", err)
	}
	if env.Cache != nil {
		if err := env.Cache.Reset(ctx); err != nil {
			return nil, fmt.Errorf("cache-aside: reset the cache: %w", err)
		}
	}
	if err := populate(ctx, env.DB, p); err != nil {
		return nil, err
	}
	var src *traceSource
	if p.Trace != "" {
		src = newTraceSource(p.trace(), p.Keys)
		defer src.close()
		defer func() { sum.Notes = append(sum.Notes, src.note()) }()
	}
	l, err := openLoop(ctx, env, &p, sp, src, sum.CacheUsed)
	if err != nil {
		return nil, fmt.Errorf("cache-aside: %s phase: %w", PhaseMain, err)
	}
	defer l.closeAll()
	ph, c, secs, err := l.run(ctx, p.Load.Config(PhaseMain), hooks)
	if err == nil && src != nil {
		err = src.failed() // a corrupt line deep in the trace: what came before it was measured
	}
	summarize(sum, &ph, c, secs)
	res.CacheAside = sum
	phases := []metrics.Phase{ph}
	if err != nil {
		return phases, fmt.Errorf("cache-aside: %s phase: %w", PhaseMain, err)
	}
	if len(p.Stampede.Protections) > 0 && !sum.CacheUsed {
		sum.Notes = append(sum.Notes, "no stampede phases: there is no cache to stampede")
	} else {
		for _, pr := range p.Stampede.Protections {
			ph, st, err := runStampede(ctx, env, p, pr, hooks)
			phases = append(phases, ph)
			if err != nil {
				return phases, fmt.Errorf("cache-aside: %s phase: %w", ph.Name, err)
			}
			sum.Stampede = append(sum.Stampede, st)
		}
	}
	if p.Search == nil {
		return phases, nil
	}
	search := *p.Search
	search.Connections = len(l.ws)
	var searched []metrics.Phase
	res.Capacity, searched, err = runSearch(ctx, l, search, hooks, sum)
	return append(phases, searched...), err
}

// populateBytes is populate's memory (workload.PopulateBytes for its
// largest values).
func populateBytes(valueSize int64) int64 {
	return workload.PopulateBytes(workload.Keyspace{ValueSize: int(valueSize)}, populateConns)
}

// populateConns are the connections that write the rows.
const populateConns = 4

// populate empties the database and writes every row, version 0: keys
// [0, Keys) and the hot key Keys, in chunks through the store's bulk path
// where it has one (workload.PopulateRows).
func populate(ctx context.Context, db store.Store, p Params) error {
	err := workload.PopulateRows(ctx, db, p.Keys+1, populateConns, max(p.ValueSize, p.ValueSizeMax), func(buf []byte, i int64) ([]byte, int) {
		at := len(buf)
		buf = workload.AppendKey(buf, p.KeyMode, p.Seed, i)
		keyLen := len(buf) - at
		return appendValue(buf, p.Seed, i, header{fillSize: p.sizeOf(i)}), keyLen
	})
	if err != nil {
		return fmt.Errorf("cache-aside: write the rows: %w", err)
	}
	return nil
}

// clients opens n clients of the database and, when used, of the cache;
// close them with the returned func.
func clients(ctx context.Context, env Env, n int, cache bool) (db, ca []store.KV, closeAll func(), err error) {
	l := workload.Load{Clients: n}
	db, closeDB, err := workload.KVClients(ctx, env.DB, l)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("database: %w", err)
	}
	if !cache {
		return db, nil, closeDB, nil
	}
	ca, closeCache, err := workload.KVClients(ctx, env.Cache, l)
	if err != nil {
		closeDB()
		return nil, nil, nil, fmt.Errorf("cache: %w", err)
	}
	return db, ca, func() { closeDB(); closeCache() }, nil
}

// gate tells the workers when the measured part began: the engine calls
// Begin after the warm-up, right before the first measured op. It passes
// Begin and End on to the caller's probe.
type gate struct {
	t0    atomic.Int64 // Unix ns of the measured start; 0 during the warm-up
	inner load.Probe
}

func (g *gate) Begin() {
	if g.inner != nil {
		g.inner.Begin()
	}
	g.t0.Store(time.Now().UnixNano())
}

func (g *gate) End(p *metrics.Phase) {
	if g.inner != nil {
		g.inner.End(p)
	}
}

// counts are one worker's measured figures, summed after the phase.
type counts struct {
	reads, writes, hits, misses int64
	dbReads, dbWrites           int64
	stale, lowerBound, broken   int64
	ageSum, ageMax              time.Duration
}

func (c *counts) add(o counts) {
	c.reads += o.reads
	c.writes += o.writes
	c.hits += o.hits
	c.misses += o.misses
	c.dbReads += o.dbReads
	c.dbWrites += o.dbWrites
	c.stale += o.stale
	c.lowerBound += o.lowerBound
	c.broken += o.broken
	c.ageSum += o.ageSum
	c.ageMax = max(c.ageMax, o.ageMax)
}

// second is one worker's second of the measured part.
type second struct{ reads, hits, dbQueries, stale int64 }

// mainWorker is one application client of the main phase.
type mainWorker struct {
	p     *Params
	tr    *tracker
	g     *gate
	db    store.KV
	cache store.KV // nil: the database alone
	ttl   time.Duration
	keys  keydist.Gen
	ops   keydist.Rand
	// src, when the entry has a trace, gives the rows and kinds instead of
	// keys and ops; batch[next:] are its requests taken and not yet done.
	src     *traceSource
	batch   []traceOp
	next    int
	reads   float64
	seen    *seen
	c       counts
	perSec  []second
	kind    int
	measure bool // this op is measured
	t0      int64

	key, val, got, scratch []byte
}

// opStreams sets the read-or-write draws apart from the key streams.
const opStreams = 1 << 62

// loop is the main phase's application clients, kept open for the
// capacity search's phases after it: they share the tracker, so versions
// keep counting up across phases.
type loop struct {
	ws       []*mainWorker
	workers  []load.Worker
	g        *gate
	clientIO string
	closeAll func()
}

func openLoop(ctx context.Context, env Env, p *Params, sp *keydist.Space, src *traceSource, cacheUsed bool) (*loop, error) {
	db, ca, closeAll, err := clients(ctx, env, p.Load.Clients, cacheUsed)
	if err != nil {
		return nil, err
	}
	tr := newTracker(p.Keys)
	l := &loop{g: &gate{}, clientIO: workload.ClientIO(db), closeAll: closeAll}
	size := max(p.ValueSize, p.ValueSizeMax)
	for i := range db {
		w := &mainWorker{
			p: p, tr: tr, g: l.g, db: db[i], ttl: p.ttl(), keys: sp.Gen(p.Seed, uint64(i), i, len(db)),
			ops: keydist.NewRand(p.Seed, opStreams+uint64(i)), reads: p.readRatio(), seen: newSeen(p.Keys),
			key: make([]byte, 0, workload.KeyBytes), val: make([]byte, 0, size), got: make([]byte, 0, size), scratch: make([]byte, 0, size),
		}
		if src != nil {
			w.src, w.batch = src, make([]traceOp, 0, traceBatch)
		}
		if ca != nil {
			w.cache = ca[i]
		}
		l.ws = append(l.ws, w)
		l.workers = append(l.workers, w)
	}
	return l, nil
}

// run measures one phase of the loop: the workers' counts start again, and
// the gate stays shut until the phase's measured part begins.
func (l *loop) run(ctx context.Context, cfg load.Config, hooks workload.Hooks) (metrics.Phase, counts, []second, error) {
	for _, w := range l.ws {
		w.c, w.perSec = counts{}, w.perSec[:0]
	}
	l.g.t0.Store(0)
	cfg = hooks.Apply(cfg)
	cfg.Workers = len(l.workers)
	cfg.Kinds = Kinds
	cfg.ClientIO = l.clientIO
	l.g.inner, cfg.Probe = cfg.Probe, l.g
	ph, err := load.Run(ctx, cfg, l.workers)
	var c counts
	var secs []second
	for _, w := range l.ws {
		c.add(w.c)
		for s, v := range w.perSec {
			for len(secs) <= s {
				secs = append(secs, second{})
			}
			secs[s].reads += v.reads
			secs[s].hits += v.hits
			secs[s].dbQueries += v.dbQueries
			secs[s].stale += v.stale
		}
	}
	return ph, c, secs, err
}

// Kind is the kind of the last op, an index into Kinds.
func (w *mainWorker) Kind() int { return w.kind }

func (w *mainWorker) Do(ctx context.Context, _ int64) error {
	w.t0 = w.g.t0.Load()
	w.measure = w.t0 != 0
	var i int64
	var write bool
	if w.src != nil {
		if w.next == len(w.batch) {
			b, err := w.src.take(w.batch)
			w.batch, w.next = b, 0
			if len(b) == 0 {
				return err
			}
		}
		op := w.batch[w.next]
		w.next++
		i, write = op.i, op.write
	} else {
		i = w.keys.Next()
		write = w.ops.Float64() >= w.reads
	}
	w.key = workload.AppendKey(w.key[:0], w.p.KeyMode, w.p.Seed, i)
	if write {
		w.kind = kindWrite
		return w.write(ctx, i)
	}
	return w.read(ctx, i)
}

// write commits the next version of row i, then invalidates or updates its
// cache entry. Writes to one key are serialized in this process (a lock
// per stripe of keys, held across the commit as the row lock would be), so
// the versions commit in order.
func (w *mainWorker) write(ctx context.Context, i int64) error {
	m := w.tr.lock(i)
	v := w.tr.next(i)
	w.val = appendValue(w.val[:0], w.p.Seed, i, header{version: v, fillSize: w.p.sizeOf(i)})
	err := w.db.Set(ctx, w.key, w.val, 0)
	if err == nil {
		w.tr.commit(i, v, time.Now())
	}
	m.Unlock()
	if w.measure {
		w.c.writes++
		w.c.dbWrites++
		w.tick(0, 1, 0)
	}
	if err != nil || w.cache == nil {
		return err
	}
	if w.p.Policy == Invalidate {
		return w.cache.Delete(ctx, w.key)
	}
	restamp(w.val, time.Now().Add(w.ttl).UnixNano(), 0, 0)
	return w.cache.Set(ctx, w.key, w.val, w.ttl)
}

// read gets row i through the cache and checks the version it returns.
func (w *mainWorker) read(ctx context.Context, i int64) error {
	committed := w.tr.last(i) // at the read's start
	size := w.p.sizeOf(i)
	w.kind = kindMiss
	if w.cache != nil {
		got, ok, err := w.cache.Get(ctx, w.key, w.got[:0])
		w.got = got
		if err != nil {
			return err
		}
		if ok {
			w.kind = kindHit
		}
	}
	if w.kind == kindMiss {
		start := time.Now()
		got, ok, err := w.db.Get(ctx, w.key, w.got[:0])
		w.got = got
		if w.measure {
			w.c.dbReads++
		}
		if err != nil {
			return err
		}
		if !ok {
			return workload.Missing(w.key)
		}
		if w.cache != nil {
			now := time.Now()
			restamp(w.got, now.Add(w.ttl).UnixNano(), int64(now.Sub(start)), 0)
			if err := w.cache.Set(ctx, w.key, w.got, w.ttl); err != nil {
				return err
			}
		}
	}
	h, scratch, err := parseValue(w.key, w.got, w.p.Seed, i, size, w.scratch)
	w.scratch = scratch
	if err != nil {
		return err
	}
	if !w.measure {
		w.seen.read(i, h.version)
		return nil
	}
	w.c.reads++
	stale := int64(0)
	if h.version < committed {
		stale = 1
		age, exact := w.tr.age(i, h.version, time.Now())
		w.c.stale++
		w.c.ageSum += age
		w.c.ageMax = max(w.c.ageMax, age)
		if !exact {
			w.c.lowerBound++
		}
		if w.p.onStale != nil {
			w.p.onStale(i, h.version, committed)
		}
	}
	if w.seen.read(i, h.version) {
		w.c.broken++
	}
	hit := int64(0)
	if w.kind == kindHit {
		w.c.hits++
		hit = 1
	} else {
		w.c.misses++
	}
	w.tick(hit, 1-hit, stale)
	return nil
}

// tick adds a measured request to its second: hits and database queries,
// and whether it was a stale read; a read is any request but a write.
func (w *mainWorker) tick(hit, dbQueries, stale int64) {
	s := int((time.Now().UnixNano() - w.t0) / int64(time.Second))
	for len(w.perSec) <= s {
		w.perSec = append(w.perSec, second{})
	}
	sec := &w.perSec[s]
	if w.kind != kindWrite {
		sec.reads++
	}
	sec.hits += hit
	sec.dbQueries += dbQueries
	sec.stale += stale
}

// summarize fills the summary from the main phase and its counts.
func summarize(sum *schema.Summary, ph *metrics.Phase, c counts, secs []second) {
	sum.DurationS = ph.DurationS
	sum.Reads, sum.Writes, sum.Hits, sum.Misses = c.reads, c.writes, c.hits, c.misses
	sum.Requests = c.reads + c.writes
	sum.HitRatio = ratio(c.hits, c.reads)
	for _, n := range ph.Errors {
		sum.Errors += n
	}
	sum.DBReads, sum.DBWrites = c.dbReads, c.dbWrites
	if ph.DurationS > 0 {
		sum.DBQueriesPerS = float64(c.dbReads+c.dbWrites) / ph.DurationS
	}
	sum.DBQueriesPerRequest = ratio(c.dbReads+c.dbWrites, sum.Requests)
	sum.DBReadsPerRead = ratio(c.dbReads, c.reads)
	sum.Latency = schema.Latencies{
		Hit: ph.ByOp[OpHit].LatencyUs, Miss: ph.ByOp[OpMiss].LatencyUs, Write: ph.ByOp[OpWrite].LatencyUs, All: ph.LatencyUs,
	}
	st := &sum.Staleness
	st.Checked, st.Stale, st.AgesLowerBound, st.MonotonicBroken = c.reads, c.stale, c.lowerBound, c.broken
	st.MaxAgeUs = float64(c.ageMax) / 1e3
	if c.stale > 0 {
		st.MeanAgeUs = float64(c.ageSum) / float64(c.stale) / 1e3
	}
	st.MonotonicSlots = monotonicSlots(sum.Params.Keys)
	sum.PerSecond = make([]schema.Second, len(secs))
	for i, s := range secs {
		sum.PerSecond[i] = schema.Second{Reads: s.reads, Hits: s.hits, HitRatio: ratio(s.hits, s.reads), DBQueries: s.dbQueries, Stale: s.stale}
	}
}

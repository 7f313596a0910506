// Package replay replays recorded traffic (a trace: package trace reads
// its formats) against a store at its recorded pace: each request is sent
// at its recorded time, scaled by the speed, through the engine's paced
// open loop (load.PacedWorker), so its latency counts from that time and a
// store that falls behind cannot hide it. One reader streams the trace and
// hands each request to the connection its client hashes to (every
// request of a client on one connection, in order), through bounded
// queues: the client's memory does not grow with the trace.
//
// What is sent: a trace's keys keep their identity and their recorded size
// (anonymized keys are mapped to keys of that size, trace.MapKey), values
// have the recorded size, TTLs are passed to the store's Set. A get of a
// key the trace never set is a miss, as it was in the recorded system. A
// command with no key-value meaning is counted by name, not sent.
package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/result/replay"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/trace"
	"github.com/storebench/storebench/internal/trace/tracegen"
	"github.com/storebench/storebench/internal/workload"
)

// Defaults and bounds.
const (
	DefaultClients = 4
	// queueLen is each connection's queue of requests read ahead: enough
	// to ride out the reader's pauses, bounded so the trace is streamed.
	// The reader hands them over batchLen at a time (a batch is sent
	// sooner when it spans batchSpan of the trace), so a connection and
	// the reader wake each other once a batch, not once a request.
	queueLen  = 4096
	batchLen  = 64
	batchSpan = 20 * time.Millisecond
	// checkLines are the lines of a trace read before the run, so a bad
	// format or a corrupt head is refused before any work.
	checkLines = 10000
	// PhaseReplay is the phase's name.
	PhaseReplay = "replay"
	// SpeedMax sends as fast as the connections allow.
	SpeedMax = "max"
)

// Params are one replay cell's parameters.
type Params struct {
	// Trace is the trace file's path; Format its format, "" to detect it.
	Trace  string `json:"trace"`
	Format string `json:"trace_format,omitempty"`
	// Speed scales the recorded times (2: twice as fast), or "max".
	Speed string `json:"speed"`
	Seed  uint64 `json:"seed"`
	// Load: Clients only (the trace gives the ops and their times).
	Load workload.Load `json:"load"`
}

// factor is the speed as a number; 0 for max.
func (p Params) factor() (float64, error) {
	if p.Speed == SpeedMax {
		return 0, nil
	}
	f, err := strconv.ParseFloat(p.Speed, 64)
	if err != nil || !(f >= 0.01 && f <= 1e4) {
		return 0, fmt.Errorf("speed %q: want a factor from 0.01 to 10000 (2: twice as fast as recorded), or max", p.Speed)
	}
	return f, nil
}

// WithDefaults fills the speed (1) and the clients.
func (p Params) WithDefaults() Params {
	if p.Speed == "" {
		p.Speed = "1"
	}
	if p.Load.Clients == 0 {
		p.Load.Clients = DefaultClients
	}
	return p
}

// Validate refuses what cannot run, before any work: a trace that cannot
// be opened, an unknown format, a corrupt line in its first lines (named
// by file and line), a load the trace decides.
func (p Params) Validate() error {
	p = p.WithDefaults()
	var errs []error
	if err := p.CheckTrace(); err != nil {
		errs = append(errs, err)
	}
	if _, err := p.factor(); err != nil {
		errs = append(errs, err)
	}
	l := p.Load
	if l.Ops > 0 || l.Duration > 0 || l.Rate > 0 || l.Warmup > 0 || l.WarmupOps > 0 || l.Pipeline > 1 || l.ConnectPerOp {
		errs = append(errs, errors.New("the trace gives the requests and their times: no ops, duration, rate, warm-up, pipeline or connect-per-op (--speed scales the times)"))
	}
	if err := workload.CheckClients("clients", l.Clients); err != nil {
		errs = append(errs, err)
	}
	return workload.Refuse("replay", errs...)
}

// CheckTrace opens the trace and reads its first lines: a file that
// cannot be opened, an unknown format or a corrupt line near its head
// (named by file and line) is refused before any work.
func (p Params) CheckTrace() error {
	if p.Trace == "" {
		return errors.New("no trace: give --trace FILE")
	}
	r, err := p.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	return r.Check(checkLines)
}

// SamplePrefix names a built-in sample trace (--trace sample:twitter):
// generated in the process by tracegen, nothing downloaded.
const SamplePrefix = "sample:"

// The kvcache samples are the format's two versions.
const (
	sampleKVCacheV1 = string(trace.KVCache) + "-v1"
	sampleKVCacheV2 = string(trace.KVCache) + "-v2"
)

// Samples are the built-in sample traces' names: one per format, the
// formats' own names (trace's), kvcache's two versions apart.
var Samples = []string{string(trace.Twitter), sampleKVCacheV1, sampleKVCacheV2, string(trace.RedisMonitor), string(trace.CSV)}

// Open opens the trace: a file, or a built-in sample.
func (p Params) Open() (*trace.Reader, error) {
	format, err := trace.ParseFormat(p.Format)
	if err != nil {
		return nil, err
	}
	name, ok := strings.CutPrefix(p.Trace, SamplePrefix)
	if !ok {
		return trace.Open(p.Trace, format)
	}
	cfg := tracegen.Config{Seed: max(p.Seed, 1)}
	f := trace.Format(name)
	switch name {
	case sampleKVCacheV1, sampleKVCacheV2:
		f, cfg.KVCacheV1 = trace.KVCache, name == sampleKVCacheV1
	case string(trace.Twitter), string(trace.RedisMonitor), string(trace.CSV):
	default:
		return nil, fmt.Errorf("unknown sample trace %q (valid: %s%s)", name, SamplePrefix, strings.Join(Samples, ", "+SamplePrefix))
	}
	var buf bytes.Buffer
	if _, err := tracegen.Write(&buf, f, cfg); err != nil {
		return nil, err
	}
	return trace.NewReader(&buf, p.Trace, format)
}

// Memory estimates a cell's memory: each connection's queue of requests
// (a request and its key) and its value buffer. The data set is the
// trace's, which its size does not tell (a line records a value's size,
// not its bytes): not estimated.
func (p Params) Memory() workload.Estimate {
	p = p.WithDefaults()
	return workload.Estimate{
		Clients:   p.Load.Clients,
		PerClient: workload.ClientBytes(int(trace.NumOps), queueLen*(128+workload.KeyBytes)+(1<<20)),
		Shared:    256 << 10, // the reader's buffers
	}
}

// item is a request as a connection replays it: its own copy of the keys.
type item struct {
	at     time.Duration
	op     trace.Op
	change trace.Change
	delta  int64
	keys   [][]byte
	size   int
	ttl    time.Duration
}

// feed is the reader's side: what it counted of the trace.
type feed struct {
	requests    int64
	unsupported map[string]int64
	rate        []int64 // requests per second of scaled time
	span        time.Duration
	err         error
}

// Run empties the store and replays the trace on it. It returns the phase
// and summary measured so far also when it fails (a corrupt line deep in
// the trace: the error names it).
func Run(ctx context.Context, st store.Store, p Params, h workload.Hooks) ([]metrics.Phase, *replay.Summary, error) {
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	p = p.WithDefaults()
	speed, _ := p.factor()
	clients, closeAll, err := workload.FreshClients(ctx, "replay", st, p.Load)
	if err != nil {
		return nil, nil, err
	}
	defer closeAll()
	ph, sum, err := replayPhase(ctx, clients, p, span{name: PhaseReplay, speed: speed}, h)
	if sum == nil {
		return nil, nil, err
	}
	return []metrics.Phase{ph}, sum, err
}

// span is what one replay phase sends: the trace at speed (0: max) and,
// with until, only the requests whose scaled time is before it, the trace
// replayed again from its start (after one mean gap) when it ends sooner.
type span struct {
	name  string
	speed float64
	until time.Duration
}

// replayPhase replays the trace once on clients (a phase of the engine's
// paced open loop) and sums it up.
func replayPhase(ctx context.Context, clients []store.KV, p Params, sp span, h workload.Hooks) (metrics.Phase, *replay.Summary, error) {
	r, err := p.Open()
	if err != nil {
		return metrics.Phase{Name: sp.name}, nil, fmt.Errorf("replay: %w", err)
	}
	defer func() { r.Close() }()
	workers := make([]*worker, len(clients))
	ws := make([]load.Worker, len(clients))
	for i, c := range clients {
		workers[i] = newWorker(c, sp.speed)
		ws[i] = workers[i]
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	f := &feed{unsupported: map[string]int64{}}
	reopen := func() (*trace.Reader, error) {
		again, err := p.Open()
		if err == nil {
			r.Close()
			r = again
		}
		return again, err
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		f.read(rctx, r, reopen, workers, sp)
	}()
	kinds := make([]string, 0, trace.NumOps-1)
	for op := trace.OpGet; op < trace.NumOps; op++ {
		kinds = append(kinds, op.String())
	}
	cfg := h.Apply(load.Config{Name: sp.name, Workers: len(ws), Paced: true, Kinds: kinds, ClientIO: workload.ClientIO(clients)})
	ph, runErr := load.Run(ctx, cfg, ws)
	stop() // a reader still sending (the run was cancelled) stops
	wg.Wait()

	sum := summarize(p, r, f, workers, ph, sp.speed)
	ph.Notes = append(ph.Notes, sum.Notes...)
	switch {
	case runErr != nil:
		return ph, sum, fmt.Errorf("replay: %w", runErr)
	case f.err != nil:
		return ph, sum, fmt.Errorf("replay: trace %w (what came before it was replayed)", f.err)
	}
	return ph, sum, nil
}

// batch is requests handed to a connection at once; their keys share an
// arena (appending never moves a key already taken: a grown arena is a
// new array, the old one stays with the keys in it).
type batch struct {
	items []item
	arena []byte
	refs  [][]byte
}

func (b *batch) add(it item, keys [][]byte) {
	start := len(b.refs)
	for _, k := range keys {
		b.arena = append(b.arena, k...)
		b.refs = append(b.refs, b.arena[len(b.arena)-len(k):len(b.arena):len(b.arena)])
	}
	it.keys = b.refs[start:len(b.refs):len(b.refs)]
	b.items = append(b.items, it)
}

// full: the batch has batchLen requests, or spans batchSpan of the
// trace's (scaled) time.
func (b *batch) full() bool {
	n := len(b.items)
	return n >= batchLen || n > 1 && b.items[0].at >= 0 && b.items[n-1].at-b.items[0].at >= batchSpan
}

// read streams the trace into the workers' queues, then closes them; with
// sp.until, it stops there, reading the trace again (reopen) as often as
// it ends before.
func (f *feed) read(ctx context.Context, r *trace.Reader, reopen func() (*trace.Reader, error), workers []*worker, sp span) {
	speed := sp.speed
	var offset, last time.Duration // the pass's start, the last request's time
	var passN int64                // the pass's requests sent
	pending := make([]*batch, len(workers))
	send := func(i int) bool {
		b := pending[i]
		pending[i] = nil
		select {
		case workers[i].queue <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	defer func() {
		for i, w := range workers {
			if pending[i] != nil && ctx.Err() == nil {
				send(i)
			}
			close(w.queue)
		}
	}()
	for {
		q, err := r.Next()
		if err == io.EOF && sp.until > 0 && passN > 0 {
			// Again from the start, one mean gap after the pass's last.
			offset = last + max((last-offset)/time.Duration(passN), time.Millisecond)
			passN = 0
			if r, err = reopen(); err == nil {
				continue
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			f.err = err
			return
		}
		at := q.At
		if at >= 0 && speed > 0 {
			at = offset + time.Duration(float64(at)/speed)
			if sp.until > 0 && at >= sp.until {
				return
			}
		}
		f.requests++
		if q.Op == trace.OpNone {
			f.unsupported[q.Cmd]++
			continue
		}
		if at >= 0 && speed > 0 {
			last, passN = at, passN+1
			f.span = max(f.span, at)
			sec := int(at / time.Second)
			for len(f.rate) <= sec {
				f.rate = append(f.rate, 0)
			}
			f.rate[sec]++
		} else {
			at = -1
		}
		i := trace.Connection(q.Client, len(workers))
		if pending[i] == nil {
			pending[i] = &batch{items: make([]item, 0, batchLen), arena: make([]byte, 0, 2048)}
		}
		pending[i].add(item{at: at, op: q.Op, change: q.Change, delta: q.Delta, size: q.ValueSize, ttl: q.TTL}, q.Keys)
		if pending[i].full() && !send(i) {
			return
		}
	}
}

func summarize(p Params, r *trace.Reader, f *feed, workers []*worker, ph metrics.Phase, speed float64) *replay.Summary {
	s := &replay.Summary{
		Trace: filepath.Base(p.Trace), Format: string(r.Format()), Compression: r.Compression, Speed: p.Speed,
		Requests: f.requests, DurationS: ph.DurationS, TraceRate: f.rate,
	}
	if len(f.unsupported) > 0 {
		s.Unsupported = f.unsupported
	}
	lag := newLagHistogram()
	timed := false
	for _, w := range workers {
		s.Replayed += w.sent
		s.Hits += w.hits
		s.Misses += w.misses
		lag.Merge(w.lag)
		timed = timed || w.timed
	}
	s.Untimed = !timed && speed > 0 && s.Replayed > 0
	s.Spread = r.Spread() && timed
	if speed > 0 {
		s.TraceDurationS = f.span.Seconds()
	}
	if lag.TotalCount() > 0 {
		us := func(ns int64) float64 { return float64(ns) / 1e3 }
		s.LatenessUs = &replay.Lateness{P50: us(lag.ValueAtQuantile(50)), P99: us(lag.ValueAtQuantile(99)), Max: us(lag.Max())}
	}
	if s.Spread && speed > 0 {
		s.Notes = append(s.Notes, "the trace's times are whole seconds: each second's requests were spread evenly over it")
	}
	if s.Untimed {
		s.Notes = append(s.Notes, "the trace has no times (kvcache v1): its requests were sent as fast as the connections allow")
	}
	return s
}

// worker replays one connection's requests, in the order read.
type worker struct {
	kv    store.KV
	speed float64
	queue chan *batch
	b     *batch
	next  int // b's next item
	cur   item
	kind  int

	sent, hits, misses int64
	lag                *hdr.Histogram // ns
	timed              bool

	val, got []byte
	gets     [][]byte
	found    []bool
}

func newWorker(kv store.KV, speed float64) *worker {
	return &worker{kv: kv, speed: speed, queue: make(chan *batch, queueLen/batchLen), lag: newLagHistogram()}
}

// newLagHistogram holds sends' lateness in ns, up to an hour (a later
// send is recorded as an hour).
func newLagHistogram() *hdr.Histogram { return hdr.New(1, int64(time.Hour), 3) }

func (w *worker) Next(ctx context.Context) (time.Duration, bool) {
	for w.b == nil || w.next >= len(w.b.items) {
		select {
		case b, ok := <-w.queue:
			if !ok {
				return 0, false
			}
			w.b, w.next = b, 0
		case <-ctx.Done():
			return 0, false
		}
	}
	w.cur = w.b.items[w.next]
	w.next++
	w.timed = w.timed || w.cur.at >= 0
	return w.cur.at, true
}

func (w *worker) Late(lag time.Duration) {
	if w.cur.at >= 0 {
		_ = w.lag.RecordValue(min(max(int64(lag), 1), int64(time.Hour))) // in range: cannot fail
	}
}

// Kind is the last request's op, an index into the phase's kinds.
func (w *worker) Kind() int { return w.kind }

// value is a value of n bytes: the same filler for every request, so no
// request pays for making its own.
func (w *worker) value(n int) []byte {
	if cap(w.val) < n {
		w.val = make([]byte, n)
		for i := range w.val {
			w.val[i] = 'a' + byte(i%26)
		}
	}
	return w.val[:n]
}

func (w *worker) Do(ctx context.Context, _ int64) error {
	it := &w.cur
	w.kind = int(it.op) - 1
	w.sent++
	switch it.op {
	case trace.OpGet:
		return w.get(ctx, it.keys)
	case trace.OpSet:
		var errs []error
		for _, k := range it.keys {
			if err := w.kv.Set(ctx, k, w.value(it.size), it.ttl); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	case trace.OpDelete:
		var errs []error
		for _, k := range it.keys {
			if err := w.kv.Delete(ctx, k); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	case trace.OpRMW:
		return w.rmw(ctx, it)
	}
	return fmt.Errorf("replay: op %v cannot be sent", it.op)
}

// get reads keys: one Get each, or one GetBatch where the store has it.
func (w *worker) get(ctx context.Context, keys [][]byte) error {
	if b, ok := w.kv.(store.Batcher); ok && len(keys) > 1 {
		w.gets = slices.Grow(w.gets[:0], len(keys))[:len(keys)]
		w.found = slices.Grow(w.found[:0], len(keys))[:len(keys)]
		var err error
		if w.gets, err = b.GetBatch(ctx, keys, w.gets, w.found); err != nil {
			return err
		}
		for _, f := range w.found {
			w.count(f)
		}
		return nil
	}
	for _, k := range keys {
		got, ok, err := w.kv.Get(ctx, k, w.got[:0])
		w.got = got
		if err != nil {
			return err
		}
		w.count(ok)
	}
	return nil
}

func (w *worker) count(hit bool) {
	if hit {
		w.hits++
	} else {
		w.misses++
	}
}

// rmw reads a key and writes it back changed, one request (INCR, APPEND,
// GETSET, GETDEL, EXPIRE). The key's TTL is not kept across the write
// (a store's Set takes one, and the value read carries none).
func (w *worker) rmw(ctx context.Context, it *item) error {
	k := it.keys[0]
	got, ok, err := w.kv.Get(ctx, k, w.got[:0])
	w.got = got
	if err != nil {
		return err
	}
	w.count(ok)
	switch it.change {
	case trace.ChangeIncr:
		n, _ := strconv.ParseInt(string(got), 10, 64) // not a number: from 0, as a replay can do no better
		if !ok {
			n = 0
		}
		if it.delta > 0 && n > math.MaxInt64-it.delta || it.delta < 0 && n < math.MinInt64-it.delta {
			n = 0
		}
		w.got = strconv.AppendInt(w.got[:0], n+it.delta, 10)
		return w.kv.Set(ctx, k, w.got, 0)
	case trace.ChangeAppend:
		if !ok {
			w.got = w.got[:0]
		}
		w.got = append(w.got, w.value(it.size)...)
		return w.kv.Set(ctx, k, w.got, 0)
	case trace.ChangeReplace:
		return w.kv.Set(ctx, k, w.value(it.size), it.ttl)
	case trace.ChangeTTL:
		if !ok {
			return nil
		}
		return w.kv.Set(ctx, k, got, it.ttl)
	case trace.ChangeDelete:
		if !ok {
			return nil
		}
		return w.kv.Delete(ctx, k)
	}
	return fmt.Errorf("replay: change %d is not built", it.change)
}

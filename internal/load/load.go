// Package load is the engine that drives workers against a store and measures
// them: a closed model (each worker starts its next operation when the last
// one ends) or an open model (operations start on a fixed schedule, and
// latency counts from the intended start, so a stall cannot hide).
//
// The per-operation path takes no lock and allocates nothing: a shared atomic
// hands out sequence numbers, latency goes into the worker's own
// metrics.Recorder, and the per-second series is handed off once per second.
package load

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storebench/storebench/internal/metrics"
)

// Worker does one operation. It owns its connection and is used by one
// goroutine. Do must return promptly once ctx is cancelled.
type Worker interface {
	Do(ctx context.Context, seq int64) error
}

// KindedWorker is a Worker whose operations are of several kinds, such as
// the gets and sets of a read/write mix: after each Do, Kind returns the
// kind of the operation it just did, as an index into Config.Kinds. The
// engine then records each kind's ops, errors and latency apart
// (Phase.ByOp) besides the phase's own figures, so a mixed phase does not
// hide that its kinds cost differently. An index out of range is a bug: the
// phase fails as on a panic.
type KindedWorker interface {
	Worker
	Kind() int
}

// PacedWorker is a Worker whose ops each have an intended start of their
// own (a replayed trace's recorded times): with Config.Paced the engine
// asks Next before each op, waits for its start as the open loop waits
// for a slot, counts the op's latency from it, and tells the worker how
// late the op was sent (Late, before Do). The phase ends when every
// worker's Next says it has no more.
type PacedWorker interface {
	Worker
	// Next is the next op's intended start, from the phase's start; a
	// negative one is sent as soon as the worker is free (closed loop).
	// false: no more ops (or ctx is done).
	Next(ctx context.Context) (at time.Duration, ok bool)
	// Late is how far behind its intended start the op Do is about to do
	// is sent (0 for one sent as soon as free).
	Late(lag time.Duration)
}

// lateThreshold is how late an open-loop start must be to count as late.
const lateThreshold = time.Millisecond

// How an open-loop worker waits for an intended start: a cancellable Go
// timer until timerMargin before it (timers can wake ~1 ms late), then short
// naps (a timerfd on Linux: sleep_linux.go) until its spin window before
// it, then yielding in a loop.
//
// The window is learned per worker from how late its naps wake
// (learnWake), because that depends on the machine and its load: a timerfd
// wakes within ~10 µs on a busy machine, 20–50 µs late from an idle CPU
// (a fixed 20 µs window spun on no wait of a 500 ops/s run: each start was
// as late as its nap), and on this 2-vCPU VM beside a neighbour's load
// p50 20–30 µs, p90 ~40 µs, 1–8% beyond 200 µs. The fixed 100 µs window
// it replaces spun 0.47–0.65 s of each second at 8,000 ops/s (8 workers
// doing a map write or a Redis PING, one thread: client CPU 0.68–0.82
// s/s); the learned one 0.17–0.23 s (client CPU 0.39–0.61 s/s), with p50
// start lateness unchanged at 0.3 µs (issue 31). In capacity --quick
// against Redis (a get/set mix, one thread) the client's CPU at 8,000
// ops/s fell from 0.95 to 0.66 s/s in a quiet spell (5 of 6 such steps
// client-limited before, none after), 0.76 to 0.73 under heavy other load.
const (
	timerMargin = 2 * time.Millisecond
	// maxSpinWindow bounds the window: a nap later than this is a
	// preemption or a deep idle state, which no affordable spin covers.
	maxSpinWindow = 100 * time.Microsecond
	// spinMargin is added to the learned lateness for a yield round, the
	// clock read and the jitter from one nap to the next (a guess, not
	// tuned: the measured windows were set by the lateness).
	spinMargin = 5 * time.Microsecond
	// wakeDecayShift: the learned lateness loses 1/64 per nap, so a late
	// nap keeps the window wide for ~100 naps (0.4 s at 2,000 ops/s over 8
	// workers). 1/16 spun less (0.07 against 0.16 s/s at 8,000 ops/s) at
	// a lateness the neighbour's noise did not let us tell apart: the
	// slower decay is the safe side.
	wakeDecayShift = 6
)

type engine struct {
	seq  atomic.Int64
	_    [56]byte // keep the hot counter off the cache line of the fields below
	cfg  Config
	ivNs float64   // open loop: ns between one worker's starts; 0 = closed loop
	t0   time.Time // measured start, written before the workers are released
	// yieldCost is what one round of a spin loop (a clock read and a
	// yield) costs the thread when nothing else is runnable, measured
	// before the workers start (yieldCost()).
	yieldCost time.Duration
}

// span is one part of a worker's run: the warm-up or the measured phase.
type span struct {
	start    time.Time // origin of the open-loop schedule
	deadline time.Time // zero: none
	limit    int64     // seqs >= limit are not run in this span
	hold     bool      // keep a seq >= limit for the next span
	record   bool
}

type runner struct {
	id      int
	w       Worker
	rec     *metrics.Recorder
	e       *engine
	timer   *time.Timer
	napper  *napper
	offNs   float64 // open loop: this worker's offset in the combined schedule
	held    int64   // seq drawn at the end of the warm-up, -1 if none
	warmOps int64
	late    int64
	maxLag  time.Duration
	// clientLate counts the ops the client itself started late: more than
	// lateThreshold after both their intended start and the previous reply;
	// clientMaxLag is the largest such delay.
	clientLate   int64
	clientMaxLag time.Duration
	unsent       int64 // ops due before the deadline but never sent
	// spin is the wall time the worker spent yielding in a loop just before
	// intended starts (waitUntil's spin window); spinYields counts its
	// yields there, each of which costs the thread about e.yieldCost: the
	// CPU the client burns waiting, not working.
	spin       time.Duration
	spinYields int64
	// wake is how late this worker's recent naps woke: a decaying max
	// (learnWake) that sets its spin window (spinWindow). It starts at
	// maxSpinWindow, the safe side, and falls to the machine's figure
	// within the first few hundred naps.
	wake    time.Duration
	lastEnd time.Time
	panic   error
	// kinded is w when it reports kinds and Config.Kinds names them, with
	// one recorder per kind (no per-second series); nil otherwise.
	kinded KindedWorker
	kinds  []*metrics.Recorder
	_      [64]byte // the fields above change per op: keep other workers' data off their cache line
}

// Run drives workers (one goroutine each) as cfg says and returns the merged
// measurements. All workers finish their warm-up before the measured part
// starts at a common instant. If ctx is cancelled, Run stops the workers and
// returns what was measured so far together with ctx.Err(); the caller decides
// whether to keep it. Errors returned by Do are counted by class, never stop
// the run, and are not counted when caused by the cancellation.
func Run(ctx context.Context, cfg Config, workers []Worker) (metrics.Phase, error) {
	if err := cfg.Validate(); err != nil {
		return metrics.Phase{Name: cfg.Name}, err
	}
	if len(workers) != cfg.Workers {
		return metrics.Phase{Name: cfg.Name}, fmt.Errorf("load: %d workers configured but %d given", cfg.Workers, len(workers))
	}
	for i, w := range workers {
		if w == nil {
			return metrics.Phase{Name: cfg.Name}, fmt.Errorf("load: worker %d is nil", i)
		}
		if _, ok := w.(PacedWorker); cfg.Paced && !ok {
			return metrics.Phase{Name: cfg.Name}, fmt.Errorf("load: worker %d of a paced phase has no intended starts (not a PacedWorker)", i)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	e := &engine{cfg: cfg}
	if cfg.Rate > 0 {
		e.ivNs = float64(cfg.Workers) / cfg.Rate * 1e9
	}
	if cfg.Rate > 0 || cfg.Paced {
		e.yieldCost = yieldCost()
	}
	col := metrics.NewCollector(cfg.OnSecond)
	defer col.Close()
	rs := make([]*runner, cfg.Workers)
	recs := make([]*metrics.Recorder, cfg.Workers)
	byKind := make([][]*metrics.Recorder, len(cfg.Kinds)) // [kind][kinded worker]
	for i := range rs {
		t := time.NewTimer(time.Hour)
		t.Stop()
		recs[i] = metrics.NewRecorder(col)
		rs[i] = &runner{id: i, w: workers[i], rec: recs[i], e: e, timer: t, held: -1, wake: maxSpinWindow}
		if cfg.Rate > 0 || cfg.Paced {
			rs[i].napper = newNapper()
			defer rs[i].napper.close()
		}
		if kw, ok := workers[i].(KindedWorker); ok && len(cfg.Kinds) > 0 {
			rs[i].kinded = kw
			rs[i].kinds = make([]*metrics.Recorder, len(cfg.Kinds))
			for k := range cfg.Kinds {
				rs[i].kinds[k] = metrics.NewRecorder(nil)
				byKind[k] = append(byKind[k], rs[i].kinds[k])
			}
		}
		if cfg.Rate > 0 {
			// Stagger the workers so the combined schedule is evenly spaced.
			rs[i].offNs = float64(i) / cfg.Rate * 1e9
			recs[i].SetSchedule(time.Duration(e.ivNs))
		}
	}

	start := make(chan struct{})
	var warm, done sync.WaitGroup
	warm.Add(len(rs))
	done.Add(len(rs))
	runStart := time.Now()
	for _, r := range rs {
		go r.run(ctx, cancel, runStart, start, &warm, &done)
	}
	warm.Wait()
	// Collect now what setting up the phase and its warm-up allocated
	// (recorders, schedules, the store client's buffers: 6–8 MB a
	// capacity step): left to the pacer, a GC cycle started in the first
	// milliseconds of every measured step, with one thread taking a
	// quarter of it and the workers' allocations assisting (issue 31).
	// The measured phase allocates nothing, so none starts in it; Go's
	// testing package does the same before each benchmark.
	runtime.GC()
	if cfg.Probe != nil {
		cfg.Probe.Begin()
	}
	cpu0, cpuOK := metrics.ProcessCPU()
	e.t0 = time.Now() // published to the workers by close(start)
	close(start)
	done.Wait()
	cpu1, _ := metrics.ProcessCPU()

	end := time.Time{}
	var warmOps, late, clientLate, unsent int64
	var maxLag, clientMaxLag, spin time.Duration
	var spinYields int64
	var firstPanic error
	for _, r := range rs {
		if r.lastEnd.After(end) {
			end = r.lastEnd
		}
		warmOps += r.warmOps
		late += r.late
		maxLag = max(maxLag, r.maxLag)
		clientLate += r.clientLate
		clientMaxLag = max(clientMaxLag, r.clientMaxLag)
		unsent += r.unsent
		spin += r.spin
		spinYields += r.spinYields
		if firstPanic == nil {
			firstPanic = r.panic
		}
	}
	// The spin's CPU: its yields at what one costs, at most its wall time
	// (which overcounts when several workers spin on one thread, each
	// yielding to the others).
	spinCPU := min(time.Duration(spinYields)*e.yieldCost, spin)
	if end.IsZero() { // nothing measured
		end = time.Now()
	}
	meta := metrics.Meta{
		Name:           cfg.Name,
		Start:          e.t0,
		Duration:       end.Sub(e.t0),
		WarmupDuration: e.t0.Sub(runStart),
		WarmupOps:      warmOps,
		ClientCPU:      -1,
		OpsPerCall:     cfg.OpsPerCall,
	}
	if cpuOK {
		meta.ClientCPU = cpu1 - cpu0
	}
	p := metrics.Merge(recs, meta)
	p.ByOp = metrics.MergeByOp(cfg.Kinds, byKind, meta)
	p.ClientIO = cfg.ClientIO
	p.NoStore = cfg.NoStore
	p.MultiCall = cfg.MultiCall
	var lateShare float64 // of the ops, those the client itself started late
	if p.Ops > 0 {
		lateShare = float64(clientLate) / float64(p.Ops)
	}
	saturation := saturationWarning(p.ClientCPUS, spinCPU.Seconds(), p.DurationS, runtime.GOMAXPROCS(0), lateShare)
	if saturation != "" {
		p.Warnings = append(p.Warnings, saturation)
	}
	if cfg.Probe != nil {
		cfg.Probe.End(&p)
	}
	if cfg.Rate > 0 {
		p.OpenLoop = &metrics.OpenLoop{
			TargetOpsS: cfg.Rate, LateOps: late, MaxLagUs: float64(maxLag) / 1e3,
			ClientLateOps: clientLate, ClientMaxLagUs: float64(clientMaxLag) / 1e3,
			UnsentOps: unsent, ClientSaturated: saturation != "", WaitSpinS: spinCPU.Seconds(),
		}
		if saturation != "" {
			if advice := shardAdvice(cfg.Rate, p.ClientCPUS-spinCPU.Seconds(), p.Ops, runtime.GOMAXPROCS(0)); advice != "" {
				p.Warnings = append(p.Warnings, advice)
			}
		}
		if p.ThroughputOpsS < 0.95*cfg.Rate {
			p.Warnings = append(p.Warnings, fmt.Sprintf(
				"client could not keep the asked rate: achieved %.0f of %.0f ops/s", p.ThroughputOpsS, cfg.Rate))
		}
		if w := lateWarning(late, p.Ops, maxLag); w != "" {
			p.Warnings = append(p.Warnings, w)
		}
	} else if cfg.Paced {
		if w := lateWarning(late, p.Ops, maxLag); w != "" {
			p.Warnings = append(p.Warnings, w)
		}
	}
	switch {
	case firstPanic != nil:
		return p, firstPanic
	case ctx.Err() != nil:
		// Our own cancel only runs on a worker panic, handled above, so this
		// is the caller's cancellation.
		return p, ctx.Err()
	}
	return p, nil
}

func (r *runner) run(ctx context.Context, cancel context.CancelFunc, runStart time.Time, start <-chan struct{}, warm, done *sync.WaitGroup) {
	warmed := false
	defer func() {
		if p := recover(); p != nil {
			r.panic = fmt.Errorf("load: worker %d panicked: %v\n%s", r.id, p, debug.Stack())
			cancel()
		}
		if !warmed {
			warm.Done()
		}
		r.rec.Done()
		done.Done()
	}()

	cfg := r.e.cfg
	switch {
	case cfg.Ops > 0 && cfg.WarmupOps > 0:
		r.loop(ctx, &span{start: runStart, limit: cfg.WarmupOps, hold: true})
	case cfg.Duration > 0 && cfg.Warmup > 0:
		r.loop(ctx, &span{start: runStart, deadline: runStart.Add(cfg.Warmup), limit: math.MaxInt64})
	}
	paced, _ := r.w.(PacedWorker)
	if !cfg.Paced {
		paced = nil
	}
	warmed = true
	warm.Done()
	select {
	case <-start:
	case <-ctx.Done():
		return
	}
	t0 := r.e.t0
	r.rec.Start(t0)
	s := &span{start: t0, limit: math.MaxInt64, record: true}
	if cfg.Ops > 0 {
		s.limit = cfg.WarmupOps + cfg.Ops
	} else {
		s.deadline = t0.Add(cfg.Duration)
	}
	r.spin, r.spinYields = 0, 0 // the measured part's only
	if paced != nil {
		r.pacedLoop(ctx, s, paced)
		return
	}
	r.loop(ctx, s)
}

// pacedLoop runs a PacedWorker's ops, each at its own intended start, until
// it has no more: the open loop's wait and accounting, with the schedule
// the worker's. Hot path: no lock, no allocation.
func (r *runner) pacedLoop(ctx context.Context, s *span, w PacedWorker) {
	prevEnd := s.start
	for ctx.Err() == nil {
		at, ok := w.Next(ctx)
		if !ok {
			return
		}
		var intended, t1 time.Time
		timed := at >= 0
		if timed {
			intended = s.start.Add(at)
			r.rec.Idle(intended)
			if t1, ok = r.waitUntil(ctx, intended); !ok {
				return
			}
		} else {
			t1 = time.Now()
			intended = t1
		}
		lag := t1.Sub(intended)
		w.Late(lag)
		r.e.seq.Add(1)
		err := r.w.Do(ctx, 0)
		t2 := time.Now()
		r.rec.Tick(t2)
		r.countLag(lag, t1.Sub(prevEnd))
		// Coordinated omission: from the intended start.
		if !r.record(ctx, err, t2.Sub(intended)) {
			return
		}
		r.lastEnd = t2
		prevEnd = t2
	}
}

// countLag counts an op sent lag after its intended start, idle for idle
// since the previous reply, and returns lag.
func (r *runner) countLag(lag, idle time.Duration) time.Duration {
	if lag > lateThreshold {
		r.late++
		// The worker could start once the op was due and its previous
		// reply was in; any later is the client's.
		if d := min(lag, idle); d > lateThreshold {
			r.clientLate++
			r.clientMaxLag = max(r.clientMaxLag, d)
		}
	}
	r.maxLag = max(r.maxLag, lag)
	return lag
}

// record records an op's latency d (or its error) in the phase and its
// kind; false when the op was interrupted by the cancellation (not the
// store's failure), recorded nowhere.
func (r *runner) record(ctx context.Context, err error, d time.Duration) bool {
	var kr *metrics.Recorder // the op's kind, timed from the same start
	if r.kinded != nil {
		kr = r.kinds[r.kinded.Kind()]
	}
	switch {
	case err == nil:
		r.rec.Record(d)
		if kr != nil {
			kr.Record(d)
		}
	case ctx.Err() != nil:
		return false
	default:
		r.rec.RecordError(err, d)
		if kr != nil {
			kr.RecordError(err, d)
		}
	}
	return true
}

// loop runs operations until the span ends. This is the hot path: no lock,
// no allocation.
func (r *runner) loop(ctx context.Context, s *span) {
	ivNs := r.e.ivNs
	open := ivNs > 0
	hasDeadline := !s.deadline.IsZero()
	prevEnd := s.start // the worker is free from the span's start
	for k := int64(0); ctx.Err() == nil; k++ {
		var intended, t1 time.Time
		if open {
			var ok bool
			if intended, ok = slot(s.start, r.offNs+float64(k)*ivNs); !ok || hasDeadline && !intended.Before(s.deadline) {
				return
			}
			if s.record {
				r.rec.Idle(intended)
			}
			if t1, ok = r.waitUntil(ctx, intended); !ok {
				return
			}
		}
		seq := r.held
		if seq >= 0 {
			r.held = -1
		} else {
			seq = r.e.seq.Add(1) - 1
		}
		if seq >= s.limit {
			if s.hold {
				r.held = seq
			}
			return
		}
		if !open {
			t1 = time.Now()
		}
		err := r.w.Do(ctx, seq)
		t2 := time.Now()
		if !s.record {
			r.warmOps++
		} else {
			from := t1
			r.rec.Tick(t2)
			if open {
				// Coordinated omission: count from when the op should have
				// started, so time spent behind schedule is not hidden.
				from = intended
				lag := r.countLag(t1.Sub(intended), t1.Sub(prevEnd))
				r.rec.Lag(lag) // the ops due by t1 besides this one wait in the schedule
			}
			if !r.record(ctx, err, t2.Sub(from)) {
				return // interrupted by the cancellation: not the store's failure
			}
			r.lastEnd = t2
		}
		prevEnd = t2
		if hasDeadline && !t2.Before(s.deadline) {
			if open && s.record {
				r.unsent = dueBefore(s.deadline.Sub(s.start), r.offNs, ivNs) - (k + 1)
			}
			return
		}
	}
}

// lateWarning says when more than 1% of a schedule's ops started late;
// "" otherwise.
func lateWarning(late, ops int64, maxLag time.Duration) string {
	if ops == 0 || late*100 <= ops {
		return ""
	}
	return fmt.Sprintf("%d of %d ops (%.1f%%) started more than %v after their intended start (max lag %v); their latency counts from the intended start",
		late, ops, 100*float64(late)/float64(ops), lateThreshold, maxLag.Round(time.Microsecond))
}

// dueBefore counts the ops of a worker's schedule (offNs + k*ivNs after the
// span's start, k = 0, 1, ...) whose intended start is before end.
func dueBefore(end time.Duration, offNs, ivNs float64) int64 {
	if float64(end) <= offNs {
		return 0
	}
	return int64(math.Ceil((float64(end) - offNs) / ivNs))
}

// slot is the intended start of an op offNs after start; false when that
// is further ahead than a time.Duration holds (~292 years), rather than a
// converted value wrapped into the past, which would make every op late and
// the loop run flat out.
func slot(start time.Time, offNs float64) (time.Time, bool) {
	if offNs >= maxScheduleNs {
		return time.Time{}, false
	}
	return start.Add(time.Duration(offNs)), true
}

// waitUntil waits for t and returns the time it saw then, or false if ctx
// was cancelled first. The time it spends yielding in a loop adds to r.spin.
func (r *runner) waitUntil(ctx context.Context, t time.Time) (time.Time, bool) {
	var spinFrom, napEnd time.Time
	for {
		now := time.Now()
		if !napEnd.IsZero() {
			r.learnWake(now.Sub(napEnd))
			napEnd = time.Time{}
		}
		d := t.Sub(now)
		w := r.spinWindow()
		switch {
		case d <= 0:
			if !spinFrom.IsZero() {
				r.spin += now.Sub(spinFrom)
			}
			return now, true
		case d > timerMargin:
			r.timer.Reset(d - timerMargin)
			select {
			case <-r.timer.C:
			case <-ctx.Done():
				r.timer.Stop()
				return now, false
			}
		case d > w:
			napEnd = now.Add(d - w)
			r.napper.nap(d - w)
		default:
			if ctx.Err() != nil {
				return now, false
			}
			if spinFrom.IsZero() {
				spinFrom = now
			}
			r.spinYields++
			// On one thread this also holds off the netpoller (a yielded
			// goroutine is run again before it is polled), so the other
			// workers' naps and replies wait for the spin to end: their
			// lateness, and so their windows, include it.
			runtime.Gosched()
		}
	}
}

// spinWindow is how long before an intended start the worker stops
// napping and yields in a loop: as late as its naps recently woke, plus
// spinMargin.
func (r *runner) spinWindow() time.Duration {
	return min(r.wake+spinMargin, maxSpinWindow)
}

// learnWake folds how late a nap woke into r.wake: a new high at once, so
// the next start is on time again, and every nap takes 1/2^wakeDecayShift
// off, so the window narrows again once naps wake sooner. A nap later than
// maxSpinWindow is left out: counted, the 1–8% of such naps above kept
// the window near its maximum (0.17–0.46 s of spin per second at 8,000
// ops/s against 0.11–0.16 s without them), and it started late all the
// same.
func (r *runner) learnWake(late time.Duration) {
	r.wake -= r.wake >> wakeDecayShift
	if late <= maxSpinWindow {
		r.wake = max(r.wake, late)
	}
}

// saturatedWork is a CPU's worth of the client's real work that is
// saturated on its own (saturationWarning).
const saturatedWork = 0.9

// yieldCost measures one round of a spin loop (a clock read and a yield)
// with nothing else to run: the best of three batches, so that a
// preemption does not count.
func yieldCost() time.Duration {
	const rounds = 200
	best := time.Duration(math.MaxInt64)
	for range 3 {
		t0 := time.Now()
		for range rounds {
			_ = time.Now()
			runtime.Gosched()
		}
		best = min(best, time.Since(t0)/rounds)
	}
	return best
}

// shardBusy is the share of its CPUs a shard is sized to keep busy:
// headroom for the bursts of an open loop and the runtime's own work.
const shardBusy = 0.7

// shardAdvice says how many client processes (run --shard) a saturated
// open loop needs for its rate: rate × the client CPU per op it measured
// (workCPUS: without the time spent spinning for intended starts, which
// more processes would not need) ÷ (its CPUs × shardBusy). "" when it
// cannot tell, or one process would do.
func shardAdvice(rate, workCPUS float64, ops int64, procs int) string {
	if rate <= 0 || workCPUS <= 0 || ops <= 0 || procs < 1 {
		return ""
	}
	perOp := workCPUS / float64(ops)
	n := math.Ceil(rate * perOp / (float64(procs) * shardBusy))
	if n <= 1 || math.IsInf(n, 0) || math.IsNaN(n) {
		return ""
	}
	return fmt.Sprintf("at %.1f µs of client CPU per op, %.0f ops/s needs about %.0f client processes of %d CPUs each (each %.0f%% busy): run it as that many shards, --shard I/N on machines of their own, merged with storebench merge",
		perOp*1e6, rate, n, procs, shardBusy*100)
}

// saturationWarning says when the client used nearly all the CPU it may use:
// then the client, not the store, may have set the pace, and on a machine
// shared with the server every µs it burned was taken from the server.
//
// Saturated is a whole CPU's worth of real work (saturatedWork), or
// more of one than a shard is sized for (shardBusy) while more than 1% of
// ops started late by the client's own doing (clientLateShare: after both their intended start and
// the previous reply): then it queued its own work. The open loop's spin
// before intended starts (spinS, its CPU: yields counted at what one
// costs) is waiting, not work, and a spinning worker yields to any other
// that has work. Counted as busy, a client spinning 0.6 s of each second
// at 8,000 ops/s looked 0.96 CPUs busy (issue 31), and one thread looked
// saturated from 20,000 ops/s against Redis with half of it spin; a client
// burning 200 µs per op on one thread started 4–5% of ops late at 0.72–0.84
// CPU of work.
func saturationWarning(cpuS, spinS, durationS float64, procs int, clientLateShare float64) string {
	if durationS < 0.5 || procs < 1 {
		return "" // too short to judge
	}
	busy := cpuS / durationS                      // CPUs' worth on average
	work := (cpuS - min(spinS, cpuS)) / durationS // of which not spinning
	if work < saturatedWork && (work < shardBusy || clientLateShare <= 0.01) {
		return ""
	}
	return fmt.Sprintf("the client kept %.2f CPUs busy on average (%.2f without its spin-wait before intended starts; GOMAXPROCS %d): it may have been the bottleneck, and it competed with the server for CPU (--client-threads and --client-cpus set how much it may use)", busy, work, procs)
}

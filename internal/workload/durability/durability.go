// Package durability is the crash-loss workload: clients write, each its
// own sequence of keys one at a time, and keep a journal of the writes the
// store acknowledged; at a seeded random moment storebench SIGKILLs the
// server (or, for files and SQLite, the process that writes them), restarts
// it on the same data dir, times the recovery (restart → first successful
// read) and reads every acknowledged write back: those missing or holding
// another value are lost, and the journal says how long before the kill
// they were acknowledged.
//
// Trials share one server and one namespace: each trial writes keys of its
// own ("durability:<trial>:<writer>:<seq>") and counts only those, so it is
// independent of the others, yet the server recovers a data dir that
// earlier crashes went through, as a production server does. A fresh server
// per trial would cost an initdb or mariadb-install-db each time and
// measure the same crash.
//
// The kill is SIGKILL of a process: the OS page cache survives it. See
// NotPowerLoss and Summary.PowerLoss.
package durability

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	schema "github.com/storebench/storebench/internal/result/durability"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
)

// Hooks are the shared workload hooks.
type Hooks = workload.Hooks

// maxConsecutiveErrors aborts a trial whose writes fail before any kill:
// the store is broken, and retrying for the whole trial timeout helps no one.
const maxConsecutiveErrors = 1000

// Check reports, before any work, whether the workload can crash a target
// of kind k: a managed server, or an in-process store another process can
// reopen (files, SQLite: run in a child writer process; managed or given by
// URL alike). External servers cannot be
// killed by storebench, and the memory store lives in the writer's process.
func Check(k target.Kind, spec target.Spec) error {
	switch {
	case k.Cluster && k.NoFailover:
		return fmt.Errorf("durability: %s is a primary with replicas, which has no automatic failover: killing its primary stops every write until it is back (measure the primary's durability on its single-server store)", spec.Label())
	case k.Cluster && !spec.Managed():
		return fmt.Errorf("durability: %s is a cluster given by URL, whose nodes storebench cannot kill and restart; use a managed cluster", spec.Label())
	case k.Cluster:
		return nil // one node is killed, the writers go on through the others
	case k.Server != "" && spec.Managed():
		return nil
	case k.Server != "":
		return fmt.Errorf("durability: %s is an external server, which storebench cannot kill and restart; use a managed target", spec.Label())
	case k.Reattach != nil:
		return nil
	}
	return fmt.Errorf("durability: store %s cannot be crashed and reopened (supported: managed servers, files, sqlite)", k.Name)
}

// Run runs p.Trials crashes against a store of kind k and returns the summary, one write
// phase per trial ("write-1", ...), and the first error. The store is never
// reset: the keys of every trial stay until the store is closed. A managed
// server is running again when Run returns, unless Run failed half-way.
func Run(ctx context.Context, env workload.Env, k target.Kind, p Params, h Hooks) (schema.Summary, []metrics.Phase, error) {
	if err := p.Validate(); err != nil {
		return schema.Summary{}, nil, err
	}
	p = p.WithDefaults()
	r := &runner{env: env, kind: k, p: p, h: h}
	var plain *metrics.Phase
	if p.Fault == FaultPower {
		// The plain side of the filesystem's cost, before the mount.
		ph, err := r.measureWrites(ctx, env.Store, phaseFSPlain)
		if err != nil {
			return schema.Summary{}, nil, err
		}
		plain = &ph
	}
	c, err := newCrasher(ctx, env, k, p)
	if err != nil {
		return schema.Summary{}, nil, err
	}
	r.crash = c
	return r.run(ctx, plain)
}

// crasher is what differs between a managed server and an in-process store.
type crasher interface {
	// clients opens the trial's n write clients.
	clients(ctx context.Context, n int) ([]store.KV, func(), error)
	// kill crashes the store; writes in flight fail.
	kill() error
	// restart brings the store back and says how long the server took to
	// answer (0 for an in-process store).
	restart(ctx context.Context) (time.Duration, error)
	// readStore is the store to read back through after restart.
	readStore() store.Store
	// close ends what the crasher started (a writer process).
	close()
	crash() string
	dataDir() string
	// logTail is the last lines of the server's log ("" without one).
	logTail() string
}

// logTailLines is how much of a server's log an unrecovered store shows.
const logTailLines = 20

// notRecovered marks an error of the store itself coming back after a
// crash (it refused to start, or failed to read back): a finding the
// summary records, not a failure of the run.
type notRecovered struct{ err error }

func (e *notRecovered) Error() string { return e.err.Error() }
func (e *notRecovered) Unwrap() error { return e.err }

func newCrasher(ctx context.Context, env workload.Env, k target.Kind, p Params) (crasher, error) {
	if env.Store == nil {
		return nil, errors.New("durability: no store")
	}
	if env.Cluster != nil {
		return newNodeCrasher(env, p)
	}
	if p.Fault == FaultPower && env.Server != nil {
		return newPowerCrasher(ctx, env.Store, env.Server)
	}
	if env.Server != nil {
		return &serverCrasher{st: env.Store, srv: env.Server}, nil
	}
	spec, err := childSpecFor(k, env.Info)
	if err != nil {
		return nil, err
	}
	spec.Writers = p.Writers
	if p.Fault == FaultPower {
		return newChildPowerCrasher(ctx, spec, p.ChildCommand)
	}
	return &childCrasher{st: env.Store, spec: spec, argv: p.ChildCommand}, nil
}

// serverCrasher kills a managed server's whole process tree.
type serverCrasher struct {
	st  store.Store
	srv workload.Server
}

func (s *serverCrasher) clients(ctx context.Context, n int) ([]store.KV, func(), error) {
	return workload.OpenKV(ctx, s.st.Open, n)
}

func (s *serverCrasher) kill() error { return s.srv.Kill() }

func (s *serverCrasher) restart(ctx context.Context) (time.Duration, error) {
	t0 := time.Now()
	if err := s.srv.Restart(ctx); err != nil {
		return time.Since(t0), &notRecovered{err}
	}
	d := time.Since(t0)
	// The store's own connection (Info, Reset, Close) died with the server.
	if rc, ok := s.st.(store.Reconnector); ok {
		if err := rc.Reconnect(ctx); err != nil {
			return d, fmt.Errorf("durability: reconnect after the restart: %w", err)
		}
	}
	return d, nil
}

func (s *serverCrasher) readStore() store.Store { return s.st }

func (s *serverCrasher) close() {}

func (s *serverCrasher) crash() string {
	kind, pid := s.srv.Describe()
	return fmt.Sprintf("SIGKILL of the %s server's processes (pid %d and its children), then a restart on the same data dir and port", kind, pid)
}

func (s *serverCrasher) dataDir() string { return s.srv.Dir() }

func (s *serverCrasher) logTail() string { return s.srv.LogTail(logTailLines) }

// childCrasher runs the writes in a child process and kills that.
type childCrasher struct {
	st    store.Store // the parent's own, read back through
	spec  *childSpec
	argv  []string
	child *childProc
}

func (c *childCrasher) clients(ctx context.Context, n int) ([]store.KV, func(), error) {
	c.close()
	ch, err := startChild(ctx, c.argv, c.spec)
	if err != nil {
		return nil, nil, err
	}
	c.child = ch
	out := make([]store.KV, n)
	for i := range out {
		out[i] = ch.kv(i)
	}
	return out, func() {}, nil
}

func (c *childCrasher) kill() error {
	if c.child == nil {
		return nil
	}
	return c.child.kill()
}

func (c *childCrasher) restart(context.Context) (time.Duration, error) { return 0, nil }

func (c *childCrasher) readStore() store.Store { return c.st }

func (c *childCrasher) close() {
	if c.child != nil {
		_ = c.child.kill()
		c.child = nil
	}
}

func (c *childCrasher) crash() string {
	return "SIGKILL of the writer process (a child of storebench that has the " + c.spec.Store +
		" store open and writes through it); storebench then reads through its own handle"
}

func (c *childCrasher) logTail() string { return "" }

func (c *childCrasher) dataDir() string {
	return c.spec.parentDir()
}

type runner struct {
	env   workload.Env
	kind  target.Kind
	p     Params
	h     Hooks
	crash crasher
}

// run plays the trials; plain is the plain directory's side of a power
// cut's filesystem cost, the mount's side is measured here.
func (r *runner) run(ctx context.Context, plain *metrics.Phase) (schema.Summary, []metrics.Phase, error) {
	defer r.crash.close()
	p := r.p
	s := schema.Summary{
		TrialsAsked: p.Trials, Writers: p.Writers, ValueSize: p.ValueSize, MinAcked: p.MinAcked,
		KillWindowS: p.KillWindow.Seconds(), Seed: p.Seed,
		Fault: cmp.Or(p.Fault, FaultKill), Crash: r.crash.crash(), NotPowerLoss: schema.NotPowerLoss, Claim: r.env.Info.Durability,
		Filesystem: filesystem(r.crash.dataDir()), Phases: phasesNote,
	}
	s.ProcessCrash, s.PowerLoss = expectations(r.kind, r.env.Info.Settings)
	var phases []metrics.Phase
	if pf, ok := r.crash.(powerFS); ok {
		// Measured, not expected: the cell's losses are a power cut's.
		s.NotPowerLoss = ""
		s.PowerCuts = pf.cutsSoFar() // filled as the trials cut
		mount, err := r.measureMount(ctx, pf)
		if mount.Name != "" {
			phases = append(phases, *plain, mount)
		}
		if err != nil {
			return s, phases, err
		}
		s.FSCost = fsCost(*plain, mount)
	}
	s.Verdict = verdict(&s)
	for i := 1; i <= p.Trials; i++ {
		t, ph, err := r.trial(ctx, i)
		if ph.Name != "" {
			phases = append(phases, ph)
		}
		var nr *notRecovered
		if errors.As(err, &nr) && ctx.Err() == nil {
			// The store's own outcome: said, and the run goes on.
			// Redacted as every message is: a log may quote a connection URL.
			s.Unrecovered = &schema.Unrecovered{Trial: i, Error: store.RedactText(err.Error(), ""), LogTail: store.RedactText(r.crash.logTail(), "")}
			s.Verdict = verdict(&s)
			return s, phases, nil
		}
		if err != nil {
			return s, phases, fmt.Errorf("durability trial %d of %d: %w", i, p.Trials, err)
		}
		addTrial(&s, t)
	}
	return s, phases, nil
}

// trial state shared by the writers and the controller.
type trial struct {
	n        int
	p        Params
	start    time.Time
	total    atomic.Int64  // acknowledged writes, all writers
	reached  chan struct{} // closed at p.MinAcked acknowledgements
	stopping atomic.Bool   // set just before the kill: no new write starts
	// killed is set at a node's kill, after which the writers go on
	// (nodeCrasher); their failures from then on are the outage's.
	killed atomic.Bool
	// deadAt is when the kill returned, the killed node's processes gone
	// (since start): what it acknowledged until then, it acknowledged
	// before its death, though the writers kept writing past the signal.
	deadAt   time.Duration
	abortMu  sync.Mutex
	abortErr error
	aborted  chan struct{}
}

func (t *trial) abort(err error) {
	t.abortMu.Lock()
	defer t.abortMu.Unlock()
	if t.abortErr == nil {
		t.abortErr = err
		close(t.aborted)
	}
}

// waitEnd is how one of the controller's waits ended.
type waitEnd int

const (
	waitReady   waitEnd = iota // what it waited for came
	waitTimer                  // its time ran out
	waitStopped                // the trial aborted or the load ended
)

// wait waits for ready (nil: for the time alone) at most d. The trial's
// abort and the load's end cut every wait of the controller short.
func (t *trial) wait(ctx context.Context, ready <-chan struct{}, d time.Duration) waitEnd {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ready:
		return waitReady
	case <-timer.C:
		return waitTimer
	case <-t.aborted:
		return waitStopped
	case <-ctx.Done():
		return waitStopped
	}
}

// appendKey appends the key of writer w's write seq in this trial.
func appendKey(dst []byte, trial, w int, seq int64) []byte {
	dst = append(dst, "durability:"...)
	dst = strconv.AppendInt(dst, int64(trial), 10)
	dst = append(dst, ':')
	dst = strconv.AppendInt(dst, int64(w), 10)
	dst = append(dst, ':')
	return strconv.AppendInt(dst, seq, 10)
}

// valueIndex makes (trial, writer, seq) one index for workload.AppendValue.
func valueIndex(trial, w int, seq int64) int64 {
	return int64(trial)<<48 | int64(w)<<32 | seq
}

type writer struct {
	t        *trial
	id       int
	kv       store.KV
	j        journal
	key, val []byte
	errs     int
	// outage counts the failed writes after a node's kill, by class.
	outage map[errclass.Class]int64
}

// Do writes the writer's next seq; a failed write is retried with the same
// key and value, so the acknowledged seqs stay contiguous.
func (w *writer) Do(ctx context.Context, _ int64) error {
	if w.t.stopping.Load() {
		<-ctx.Done() // parked until the trial ends: no write may reach the restarted store
		return ctx.Err()
	}
	seq := w.j.acked
	w.key = appendKey(w.key[:0], w.t.n, w.id, seq)
	w.val = workload.AppendValue(w.val[:0], w.t.p.Seed, valueIndex(w.t.n, w.id, seq), 0, w.t.p.ValueSize)
	w.j.sent = true
	if err := w.kv.Set(ctx, w.key, w.val, 0); err != nil {
		if w.t.stopping.Load() {
			<-ctx.Done() // the kill's doing, not the store's failure
			return ctx.Err()
		}
		if w.t.killed.Load() && ctx.Err() == nil {
			// The outage's: retried until the key's node is back, paced
			// so that a refused connection does not spin a CPU.
			w.outage[errclass.Classify(err)]++
			time.Sleep(time.Millisecond)
			return err
		}
		if w.errs++; w.errs >= maxConsecutiveErrors {
			w.t.abort(fmt.Errorf("writer %d: %d writes in a row failed before any kill, the last: %w", w.id, w.errs, err))
		}
		return err
	}
	w.errs = 0
	w.j.ack(time.Since(w.t.start))
	if w.t.total.Add(1) == w.t.p.MinAcked {
		close(w.t.reached)
	}
	return nil
}

// kill is what the controller did.
type kill struct {
	done    bool
	at      time.Duration // since the trial's start
	delay   time.Duration
	err     error
	timeout bool
	// A node's kill: kill → first successful write to its keys, and how
	// they came back.
	recovery  time.Duration
	recovered string
}

func (r *runner) trial(ctx context.Context, n int) (schema.Trial, metrics.Phase, error) {
	p := r.p
	name := "write-" + strconv.Itoa(n)
	res := schema.Trial{Trial: n}
	nk, nodeKill := r.crash.(*nodeCrasher)
	if nodeKill {
		if err := nk.prepare(ctx, n); err != nil {
			return res, metrics.Phase{}, err
		}
	}
	kvs, closeClients, err := r.crash.clients(ctx, p.Writers)
	if err != nil {
		return res, metrics.Phase{}, err
	}
	closeKV := sync.OnceFunc(closeClients)
	defer closeKV()
	t := &trial{n: n, p: p, reached: make(chan struct{}), aborted: make(chan struct{})}
	writers := make([]*writer, p.Writers)
	workers := make([]load.Worker, p.Writers)
	for i := range writers {
		writers[i] = &writer{t: t, id: i, kv: kvs[i], key: make([]byte, 0, 48), val: make([]byte, 0, p.ValueSize), outage: map[errclass.Class]int64{}}
		workers[i] = writers[i]
	}
	// The phase runs until the controller cancels it after the kill; its
	// duration is only a backstop behind the controller's own timeout.
	cfg := r.h.Apply(load.Config{Name: name, Workers: p.Writers, Duration: p.TrialTimeout + p.KillWindow + time.Minute})
	var fp *freezeProbe
	if cfg.Probe != nil {
		fp = &freezeProbe{inner: cfg.Probe}
		cfg.Probe = fp
	}
	loadCtx, cancelLoad := context.WithCancel(ctx)
	defer cancelLoad()
	rng := rand.New(rand.NewPCG(p.Seed, uint64(n)))
	var k kill
	ctrlDone := make(chan struct{})
	t.start = time.Now()
	go func() {
		defer close(ctrlDone)
		defer cancelLoad()
		switch t.wait(loadCtx, t.reached, p.TrialTimeout) {
		case waitTimer:
			k.timeout = true
			return
		case waitStopped:
			return
		}
		k.delay = time.Duration(rng.Int64N(int64(p.KillWindow) + 1))
		if t.wait(loadCtx, nil, k.delay) != waitTimer {
			return
		}
		t.stopping.Store(!nodeKill)
		if fp != nil {
			fp.freeze(t.total.Load() + int64(p.Writers))
		}
		killedAt := time.Now()
		k.at = killedAt.Sub(t.start)
		t.killed.Store(true)
		k.err = r.crash.kill()
		t.deadAt = time.Since(t.start)
		k.done = true
		if nodeKill && k.err == nil {
			k.recovery, k.recovered, k.err = nk.recoverKeys(loadCtx, killedAt, p.RecoveryTimeout+nk.outage)
			if k.err != nil && ctx.Err() == nil {
				k.err = &notRecovered{k.err}
			}
		}
	}()
	ph, runErr := load.Run(loadCtx, cfg, workers)
	cancelLoad()
	<-ctrlDone
	closeKV() // their connections died with the server
	switch {
	case ctx.Err() != nil:
		return res, ph, ctx.Err()
	case t.abortErr != nil:
		return res, ph, t.abortErr
	case k.timeout:
		return res, ph, fmt.Errorf("%d writes acknowledged in %v, fewer than the %d wanted before the kill (raise trial_timeout or lower min_acked)",
			t.total.Load(), p.TrialTimeout, p.MinAcked)
	case k.err != nil:
		return res, ph, k.err
	case !k.done:
		if runErr == nil {
			runErr = errors.New("the write phase ended before the kill")
		}
		return res, ph, runErr
	}
	res.KillAfterS, res.KillDelayS = k.at.Seconds(), k.delay.Seconds()
	for _, w := range writers {
		res.Acked += w.j.acked
		if w.j.sent {
			res.InFlight++
		}
	}

	rctx, cancel := context.WithTimeout(ctx, p.RecoveryTimeout)
	defer cancel()
	restartAt := time.Now()
	restart, err := r.crash.restart(rctx)
	res.RestartS = restart.Seconds()
	if err != nil {
		return res, ph, err
	}
	if err := firstRead(rctx, r.crash.readStore(), appendKey(nil, n, 0, 0)); err != nil {
		return res, ph, &notRecovered{fmt.Errorf("no successful read within %v of the restart: %w", p.RecoveryTimeout, err)}
	}
	res.RecoveryS = time.Since(restartAt).Seconds()
	if nodeKill {
		res.RecoveryS = k.recovery.Seconds()
		res.NodeKill = &schema.NodeKill{Node: nk.addr, Role: nk.role(), Recovered: k.recovered, OutageErrors: outageErrors(writers)}
		if k.recovered == "restart" {
			res.NodeKill.OutageS = nk.outage.Seconds()
		}
	}
	if err := r.verify(ctx, t, writers, k.at, &res); err != nil {
		return res, ph, &notRecovered{err}
	}
	return res, ph, nil
}

// outageErrors sums the writers' failures after a node's kill, by class.
func outageErrors(writers []*writer) map[string]int64 {
	out := map[string]int64{}
	for _, w := range writers {
		for c, n := range w.outage {
			out[string(c)] += n
		}
	}
	return out
}

// firstRead opens a client and reads key until a read succeeds (found or
// not): the store answers again.
func firstRead(ctx context.Context, st store.Store, key []byte) error {
	var last error
	for {
		if c, err := st.Open(ctx); err != nil {
			last = err
		} else {
			kv, ok := c.(store.KV)
			if !ok {
				c.Close()
				return store.ErrUnsupported
			}
			_, _, err = kv.Get(ctx, key, nil)
			c.Close()
			if err == nil {
				return nil
			}
			last = err
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), last)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// verify reads every acknowledged write of the trial back, one client per
// writer, and fills res's losses and window.
func (r *runner) verify(ctx context.Context, t *trial, writers []*writer, killAt time.Duration, res *schema.Trial) error {
	kvs, closeKV, err := workload.OpenKV(ctx, r.crash.readStore().Open, len(writers))
	if err != nil {
		return fmt.Errorf("open clients to read back: %w", err)
	}
	defer closeKV()
	var onKilled func([]byte) bool
	if nk, ok := r.crash.(*nodeCrasher); ok && res.NodeKill != nil {
		onKilled = nk.onKilled
	}
	type outcome struct {
		// Of the killed node's keys, for a node kill.
		ackedKilled, lostKilled, ackedKilledBefore int64
		lost, wrong                                int64
		oldest                                     int64 // oldest lost seq, -1 if none
		inflightThere                              bool
		err                                        error
	}
	outs := make([]outcome, len(writers))
	var wg sync.WaitGroup
	for i, w := range writers {
		wg.Go(func() {
			o := &outs[i]
			o.oldest = -1
			kv := kvs[i]
			var key, want, got []byte
			for seq := int64(0); seq < w.j.acked; seq++ {
				key = appendKey(key[:0], t.n, w.id, seq)
				var ok bool
				if got, ok, o.err = kv.Get(ctx, key, got[:0]); o.err != nil {
					o.err = fmt.Errorf("read back %s: %w", key, o.err)
					return
				}
				want = workload.AppendValue(want[:0], t.p.Seed, valueIndex(t.n, w.id, seq), 0, t.p.ValueSize)
				killed := onKilled != nil && onKilled(key)
				if killed {
					o.ackedKilled++
					if at, ok := w.j.ackedAt(seq); ok && at < t.deadAt {
						o.ackedKilledBefore++
					}
				}
				switch {
				case !ok:
					o.lost++
				case !bytes.Equal(got, want):
					o.wrong++
				default:
					continue
				}
				if killed {
					o.lostKilled++
				}
				if o.oldest < 0 {
					o.oldest = seq
				}
			}
			if w.j.sent {
				key = appendKey(key[:0], t.n, w.id, w.j.acked)
				if _, o.inflightThere, o.err = kv.Get(ctx, key, got[:0]); o.err != nil {
					o.err = fmt.Errorf("read back %s: %w", key, o.err)
				}
			}
		})
	}
	wg.Wait()
	oldestAt := time.Duration(-1)
	for i, o := range outs {
		if o.err != nil {
			return o.err
		}
		res.Lost += o.lost
		res.Wrong += o.wrong
		if nkr := res.NodeKill; nkr != nil {
			nkr.AckedKilled += o.ackedKilled
			nkr.LostKilled += o.lostKilled
			nkr.AckedKilledBeforeKill += o.ackedKilledBefore
			nkr.AckedOther += writers[i].j.acked - o.ackedKilled
			nkr.LostOther += o.lost + o.wrong - o.lostKilled
		}
		if o.inflightThere {
			res.InFlightPresent++
		}
		if o.oldest >= 0 {
			if at, ok := writers[i].j.ackedAt(o.oldest); ok && (oldestAt < 0 || at < oldestAt) {
				oldestAt = at
				res.OldestLost = string(appendKey(nil, t.n, i, o.oldest))
			}
		}
	}
	res.LostAll = res.Acked > 0 && res.Lost+res.Wrong == res.Acked
	if oldestAt >= 0 {
		res.WindowS = max(killAt-oldestAt, 0).Seconds()
		for _, w := range writers {
			res.WindowWrites += w.j.ackedSince(oldestAt)
		}
	}
	return nil
}

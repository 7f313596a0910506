// Package run plans and runs a scenario: its cells, each target's server
// lifecycle, repeats in rounds, pinning, the network, stalls, the watch on
// servers and the result written cell by cell. It knows no command line:
// the CLI fills Options from its flags and shows what an Observer is told.
package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/storebench/storebench/internal/assert"
	"github.com/storebench/storebench/internal/doctor"
	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/netem"
	"github.com/storebench/storebench/internal/owner"
	"github.com/storebench/storebench/internal/report"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/tick"
	"github.com/storebench/storebench/internal/workload"
)

// Plan is a run read, checked and planned, before any work.
type Plan struct {
	reg            target.Registry
	s              *scenario.Scenario
	opts           Options
	targets        []scenario.Target // those that can run here
	cells          []cell
	skipped        []result.Skipped
	keep           bool // leave the targets' data in place
	repeat         int
	server, client cpuChoice
	clientCPUs     []int
	mechanism      netem.Mechanism
	serverBins     map[server.Kind]string // --server-bin
	shard          workload.Shard         // --shard
	startAt        time.Time              // --start-at
	quickChanges   []string               // what --quick changed, for the result and the log
	checkMachine   bool                   // a brief doctor before the cells (scenario.Resolved.ChecksMachine)
	asserts        []assert.Assertion     // --assert and the scenario's asserts
}

// NewPlan checks everything a run is given (the scenario, the options, the
// targets' binaries and URLs, the network) and plans its cells, starting
// nothing and writing nothing. Every error it returns is an *InputError.
// It completes s with its defaults.
func NewPlan(ctx context.Context, reg target.Registry, types workload.Registry, s *scenario.Scenario, opts Options) (*Plan, error) {
	s.Defaults()
	shard, startAt, err := opts.shardFlags(time.Now())
	if err != nil {
		return nil, err
	}
	s.Shard = shard
	resolved, err := s.Resolve(reg, types, opts.Keep || s.Keep)
	if err != nil {
		return nil, asInput(err)
	}
	s = resolved.Scenario
	repeat, err := opts.check(s)
	if err != nil {
		return nil, err
	}
	p := &Plan{reg: reg, s: s, opts: opts, repeat: repeat, shard: shard, startAt: startAt}
	for _, c := range resolved.QuickChanges {
		if opts.Repeat == nil || !strings.HasPrefix(c, "repeat ") { // --repeat says how many, not the quick section
			p.quickChanges = append(p.quickChanges, c)
		}
	}
	p.server = pickCPUs(opts.ServerCPUs, "--server-cpus", s.ServerCPUs, "server_cpus", s.Source)
	p.client = pickCPUs(opts.ClientCPUs, "--client-cpus", s.ClientCPUs, "client_cpus", s.Source)
	if _, err := p.server.cpus(); err != nil {
		return nil, err
	}
	if p.clientCPUs, err = p.client.cpus(); err != nil {
		return nil, err
	}
	if p.keep, err = keepData(reg, resolved, opts.Keep); err != nil {
		return nil, err
	}
	if p.serverBins, err = reg.ParseServerBins(opts.ServerBins); err != nil {
		return nil, asInput(err)
	}
	if p.targets, p.skipped, err = preflight(ctx, reg, s, target.StartArgs{BaseDir: opts.DataDir, CPUs: p.server.list, ServerBins: p.serverBins}); err != nil {
		return nil, err
	}
	p.checkMachine = resolved.ChecksMachine() && !opts.NoHiccup
	planned, err := planCells(resolved, p.targets)
	if err != nil {
		return nil, asInput(err)
	}
	p.cells = repeatCells(planned, repeat)
	if p.asserts, err = planAsserts(append(slices.Clone(s.Asserts), opts.Asserts...), p.cells); err != nil {
		return nil, err
	}
	if p.mechanism, err = networkMechanism(ctx, p.cells, opts.mechanism()); err != nil {
		return nil, inputf("--net-mechanism: %v", err)
	}
	return p, nil
}

// Cells describes the planned cells, in the order they run.
func (p *Plan) Cells() []CellInfo {
	infos := make([]CellInfo, len(p.cells))
	for i, c := range p.cells {
		infos[i] = CellInfo{Label: c.label(), Target: c.Target.Spec.Label(), Workload: c.Type, Weight: c.weight(), OpenLoop: c.openLoop()}
	}
	return infos
}

// Outcome is what a finished (or interrupted) run leaves.
type Outcome struct {
	Result *result.Result // the result as written, read back
	Path   string         // of result.json
	Failed int            // cells that failed
	Cells  int            // cells planned
	// Interrupted says the run's context ended before every cell ran.
	Interrupted bool
	// Aborted says a failed assertion stopped the run (--assert-abort);
	// the result's status is then interrupted, with a note.
	Aborted bool
	// Report is the path of report.html beside result.json, or ReportErr
	// why it could not be written (the result is safe all the same).
	Report    string
	ReportErr error
}

// Execute runs the plan's cells and writes the result, telling obs what
// it does; a plan is executed once. An *InputError comes before any work (the client CPUs cannot be
// pinned, the result or scratch dir cannot be made); any other error means
// the result could not be finished.
func (p *Plan) Execute(ctx context.Context, obs Observer) (*Outcome, error) {
	if p.client.list != "" {
		restore, err := pinProcess(p.client.list)
		if err != nil {
			return nil, inputf("%s: %v", p.client.origin, err)
		}
		defer restore()
	}
	threads := threadPolicy{scenario: p.s.ClientThreads, clientCPUs: p.clientCPUs, runtimeDefault: runtime.GOMAXPROCS(0)}
	if p.opts.ClientThreads != nil {
		threads.asked = *p.opts.ClientThreads
	}
	// Outside cells (and in the environment's record) the client runs as
	// beside an in-process store; each cell sets its own (runCells).
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads.outsideCells()))

	// The scratch dir first: a --data-dir nobody may write in (read-only,
	// immutable) is bad input, and must not leave a result that says
	// "running" behind it. Nothing after result.Create is an input error.
	scratch, err := owner.MakeDir(p.opts.DataDir, "storebench-run-*", "run scratch dir")
	if err != nil {
		return nil, inputf("--data-dir %s: %v", p.opts.DataDir, err)
	}
	defer os.RemoveAll(scratch)
	started := time.Now().UTC()
	w, err := result.Create(p.opts.Out, p.newResult(started))
	if err != nil {
		return nil, inputf("--out %s: %v", p.opts.Out, err)
	}
	p.logBefore(ctx, obs)
	if p.checkMachine {
		p.machineCheck(ctx, w, obs)
	}

	obs.Begin(p.Cells())
	args := target.StartArgs{Namespace: owner.Namespace(started), RunDir: scratch, BaseDir: p.opts.DataDir, CPUs: p.server.list, Network: p.mechanism, Keep: p.keep, NoHiccup: p.opts.NoHiccup, ServerBins: p.serverBins}
	j := &judge{asserts: p.asserts, judged: make([]int, len(p.asserts)), abort: p.opts.AssertAbort, started: time.Now(), w: w, logf: obs.Logf, stores: map[string]string{}}
	for _, c := range p.cells {
		j.stores[c.Target.Spec.Label()] = c.Target.Spec.Store
	}
	failed := runCells(ctx, p.reg, p.cells, w, args, threads, obs, p.opts.FailFast, &barrier{at: p.startAt}, j.cell)
	j.finish()
	return p.finish(ctx, w, failed, j.aborted)
}

// newResult is the result's head, before any cell.
func (p *Plan) newResult(started time.Time) *result.Result {
	res := &result.Result{
		Schema: result.Schema, ID: started.Format("20060102T150405Z"), Status: result.StatusRunning, StartedAt: started,
		Command: redactArgs(p.opts.Command), Suite: p.opts.Suite, Seed: p.s.Seed,
		Storebench:  result.Build{Version: p.opts.Version, Commit: p.opts.Commit, GoVersion: runtime.Version()},
		Environment: result.ReadEnvironment(p.server.list),
		Scenario:    p.s, Skipped: p.skipped, Article: p.s.Article, Quick: p.opts.Quick,
		QuickChanges: p.quickChanges,
	}
	if p.repeat > 1 {
		res.Repeat = p.repeat
	}
	res.Shard = p.shardRecord(res.Environment.Hostname)
	return res
}

// logBefore says, before the first cell, what the run leaves out: skipped
// targets, what earlier runs left behind, CPU lists it cannot apply.
func (p *Plan) logBefore(ctx context.Context, obs Observer) {
	if len(p.quickChanges) > 0 {
		obs.Logf("quick: %s", strings.Join(p.quickChanges, "; "))
	}
	for _, sk := range p.skipped {
		obs.Logf("skipping %s: %s", sk.Target, sk.Reason)
	}
	reportLeftovers(ctx, p.reg, p.opts.DataDir, specsOf(p.targets), obs.Logf)
	for _, c := range []cpuChoice{p.server, p.client} {
		if c.dropped != "" {
			obs.Logf("%s: %s not applied: %s; the run is unpinned (see the environment's CPUs)", p.s.Source, c.dropped, c.why)
		}
	}
}

// machineCheck measures what the machine adds to latency (doctor, briefly,
// before any server runs a cell) and records it in the result; a check
// that cannot be made is logged, and the run goes on without it.
func (p *Plan) machineCheck(ctx context.Context, w *result.Writer, obs Observer) {
	obs.Logf("checking the machine (storebench doctor --brief; --no-hiccup skips it)")
	m, err := doctor.Run(ctx, doctor.Options{Brief: true})
	if err != nil {
		obs.Logf("  machine check not made: %v", err)
		return
	}
	obs.Logf("  idle CPU wake-up p99 %s, max %s late; loopback round trip p50 %s", usText(m.IdleWake.P99), usText(m.IdleWake.Max), usText(rttP50(m)))
	logWriteErr(w.Update(func(r *result.Result) { r.Machine = m }), obs.Logf)
}

func rttP50(m *doctor.Report) float64 {
	if m.RTTSameCPU != nil {
		return m.RTTSameCPU.P50
	}
	return 0
}

func usText(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.1f ms", v/1000)
	}
	return fmt.Sprintf("%.0f µs", v)
}

// finish closes the result with the run's status and writes report.html.
func (p *Plan) finish(ctx context.Context, w *result.Writer, failed int, aborted bool) (*Outcome, error) {
	status := result.StatusComplete
	switch {
	case ctx.Err() != nil, aborted:
		status = result.StatusInterrupted
	case failed > 0:
		status = result.StatusFailed
	}
	if err := w.Finish(status); err != nil {
		return nil, err
	}
	final, err := result.Read(w.Path())
	if err != nil {
		return nil, err
	}
	o := &Outcome{Result: final, Path: w.Path(), Failed: failed, Cells: len(p.cells), Interrupted: ctx.Err() != nil, Aborted: aborted}
	o.Report, o.ReportErr = writeHTMLReport(final, filepath.Dir(w.Path()))
	return o, nil
}

// reportName is the HTML report's name beside result.json.
const reportName = "report.html"

// writeHTMLReport writes report.html into dir, beside result.json.
func writeHTMLReport(r *result.Result, dir string) (string, error) {
	path := filepath.Join(dir, reportName)
	if err := result.WriteFileAtomic(path, func(w io.Writer) error { return report.HTML(w, r) }); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}

// runCells runs every cell, starting each target once, and returns how many
// failed. A managed server that dies is recorded in its cell, and the next
// cell of that target gets a fresh server; with failFast the run stops at
// the first failed cell.
func runCells(ctx context.Context, reg target.Registry, cells []cell, w *result.Writer, args target.StartArgs, threads threadPolicy, obs Observer, failFast bool, start *barrier, judged func(*result.Cell) (stop bool)) int {
	logf := obs.Logf
	failed := 0
	var inst *target.Instance
	stop := func() {
		if inst == nil {
			return
		}
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		if err := inst.Stop(stopCtx); err != nil {
			logf("  %v", err)
		}
		cancel()
		inst = nil
	}
	defer stop()
	for k := 0; k < len(cells) && ctx.Err() == nil; k++ {
		c := cells[k]
		spec := c.Target.Spec
		if inst != nil && inst.Spec.Label() != spec.Label() {
			stop()
		}
		if inst == nil {
			logf("starting %s", spec.Label())
			var err error
			if inst, err = reg.Start(ctx, spec, args); err != nil {
				if ctx.Err() != nil {
					break
				}
				failed++
				logWriteErr(w.AddCell(c.failed(c.params, err)), logf)
				logf("  %v", err)
				if failFast {
					break
				}
				continue
			}
			logWriteErr(w.Update(func(r *result.Result) { r.Targets = append(r.Targets, targetRecord(inst)) }), logf)
		}
		logf("[%d/%d] %s", k+1, len(cells), c.label())
		params, err := setNetwork(ctx, inst, c, logf)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			failed++
			logWriteErr(w.AddCell(c.failed(params, err)), logf)
			logf("  %v", err)
			if inst.Store == nil {
				stop() // could not reopen the store: the next cell starts the target anew
			}
			if failFast {
				break
			}
			continue
		}
		if !start.wait(ctx, w, logf) {
			break
		}
		// GOMAXPROCS is process-wide, and cells run one at a time.
		n, why := chooseClientThreads(threads.facts(inst))
		runtime.GOMAXPROCS(n)
		obs.CellStarted(k)
		rc := runCell(ctx, inst, c, obs.Second, companionStarter(reg, args, obs, w))
		rc.Params, rc.ClientThreads, rc.ClientThreadsWhy = params, n, why
		obs.CellDone(k, rc.Seconds)
		if ctx.Err() != nil && rc.Status != result.CellOK {
			break // interrupted half-way: keep only finished cells
		}
		if rc.Status != result.CellOK {
			failed++
			logf("  failed: %s", rc.Error)
		}
		logWriteErr(w.AddCell(rc), logf)
		if judged(&rc) {
			break
		}
		if inst.Server != nil && !inst.Server.Running() {
			stop() // removes the dead server's directory; the next cell starts a fresh one
		}
		if inst != nil && inst.Cluster != nil && inst.Cluster.Running() < len(inst.Cluster.Nodes) {
			c := inst.Cluster
			// A dead node would leave the next cells a smaller cluster
			// (fewer slots served, a replica set without a replica) than
			// their target names: they get the whole cluster anew.
			logf("  %d of %d nodes of %s are down after the cell: the next cell starts it anew", len(c.Nodes)-c.Running(), len(c.Nodes), spec.Label())
			stop()
		}
		if failFast && rc.Status != result.CellOK {
			break
		}
	}
	return failed
}

// logWriteErr says when the result file could not be written (a full disk):
// the run goes on, and the next write tries again with every cell so far.
func logWriteErr(err error, logf func(string, ...any)) {
	if err != nil {
		logf("  %v", err)
	}
}

// errServerDied cancels a cell whose managed server exited under it.
var errServerDied = errors.New("the managed server died during the cell")

func runCell(ctx context.Context, inst *target.Instance, c cell, onSecond func(string, metrics.Second), companion startFunc) result.Cell {
	rc := c.record(c.params)
	cellCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if inst.Server != nil && !c.KillsServer {
		go watchServer(cellCtx, inst, cancel)
	}
	hooks := workload.Hooks{Probe: inst.Probe, OnSecond: onSecond}
	if c.Stall != nil {
		hooks.Probe = stallHook(cellCtx, inst, *c.Stall)
		defer resumeServer(inst) // a server is never left stopped, whatever happened to the phase
	}
	out, err := runWorkload(cellCtx, inst, c, hooks, companion)
	phases := out.Phases
	rc.Seconds = time.Since(rc.StartedAt).Seconds()
	rc.Phases = phases
	if out.Summary != nil {
		out.Summary(&rc)
	}
	rc.Status = result.CellOK
	died := inst.Server != nil && !c.KillsServer && (errors.Is(context.Cause(cellCtx), errServerDied) || !inst.Server.Running())
	switch {
	case died:
		rc.Status, rc.Error = result.CellFailed, errServerDied.Error()+"; the phases hold what was measured until then"
		rc.ServerLog = inst.Server.LogTail(20)
	case err != nil:
		rc.Status, rc.Error = result.CellFailed, err.Error()
	case mismatches(phases) > 0:
		rc.Status, rc.Error = result.CellFailed, fmt.Sprintf("%d reads did not return what was written", mismatches(phases))
	}
	return rc
}

// runWorkload runs the cell's workload on inst, with a streaming replica
// of its server started for it when the cell asks for one.
func runWorkload(ctx context.Context, inst *target.Instance, c cell, hooks workload.Hooks, companion startFunc) (workload.Outcome, error) {
	e := env(inst)
	if c.Net != nil {
		e.RTT = c.Net.RTT
	}
	if c.CompanionTarget != nil {
		other, stop, err := companion(ctx, c.CompanionTarget.Spec)
		if err != nil {
			return workload.Outcome{}, fmt.Errorf("start %s beside %s: %w", c.CompanionTarget.Spec.Label(), inst.Spec.Label(), err)
		}
		defer stop()
		oe := env(other)
		e.Companion = &oe
		hooks.Probe = other.Beside(hooks.Probe)
	}
	if c.Replica {
		if inst.Server == nil || inst.Server.Kind != server.Postgres {
			return workload.Outcome{}, fmt.Errorf("%s: a replica needs a managed PostgreSQL primary; %s is not one", c.Type, inst.Spec.Label())
		}
		replica, err := server.StartReplica(ctx, inst.Server, server.Options{BaseDir: filepath.Dir(inst.Server.DataDir), CPUs: inst.Server.CPUs})
		if err != nil {
			return workload.Outcome{}, err
		}
		defer func() {
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			replica.Stop(stopCtx)
		}()
		e.ReplicaURL = replica.URL
	}
	return c.Run(ctx, e, hooks)
}

// startFunc starts a target for one cell and returns how to stop it.
type startFunc func(ctx context.Context, spec target.Spec) (*target.Instance, func(), error)

// companionStarter starts a cell's second target (cache-aside's cache)
// for that cell alone: a fresh server, as every cell of a target's own
// would get after a failure, so no cell sees another's cache contents.
func companionStarter(reg target.Registry, args target.StartArgs, obs Observer, w *result.Writer) startFunc {
	return func(ctx context.Context, spec target.Spec) (*target.Instance, func(), error) {
		obs.Logf("  starting %s beside it", spec.Label())
		inst, err := reg.Start(ctx, spec, args)
		if err != nil {
			return nil, nil, err
		}
		// Recorded once, as the targets a run starts are.
		logWriteErr(w.Update(func(r *result.Result) {
			if !slices.ContainsFunc(r.Targets, func(t result.Target) bool { return t.Name == spec.Label() }) {
				r.Targets = append(r.Targets, targetRecord(inst))
			}
		}), obs.Logf)
		return inst, func() {
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if err := inst.Stop(stopCtx); err != nil {
				obs.Logf("  %v", err)
			}
		}, nil
	}
}

// watchServer cancels the cell as soon as its managed server is gone, so a
// dead server fails the cell at once instead of after every op has failed.
//
// ctx is the cell's, so cancel ends the watch too.
func watchServer(ctx context.Context, inst *target.Instance, cancel context.CancelCauseFunc) {
	tick.Every(ctx, 100*time.Millisecond, func() {
		if !inst.Server.Running() {
			cancel(errServerDied)
		}
	})
}

func mismatches(phases []metrics.Phase) int64 {
	var n int64
	for _, p := range phases {
		n += p.Errors[string(errclass.ClassMismatch)]
	}
	return n
}

func targetRecord(inst *target.Instance) result.Target {
	t := result.Target{Name: inst.Spec.Label(), Store: inst.Spec.Store, Profile: inst.Spec.Profile, Managed: inst.Spec.Managed(), Options: inst.Spec.Options, Info: inst.Info}
	if t.Managed && inst.Kind.Server != "" && t.Profile == "" {
		t.Profile = "default"
	}
	switch {
	case inst.Server != nil:
		t.ServerPID = inst.Server.PID
	case inst.Cluster != nil: // its first node's: the record says it is managed
		_, t.ServerPID = inst.Cluster.Describe()
	}
	t.Location = store.RedactURL(t.Location)
	t.Kept = inst.Kept()
	return t
}

func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = store.RedactURL(a)
	}
	return out
}

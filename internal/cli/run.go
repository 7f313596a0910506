package cli

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

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
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/suites"
)

type runFlags struct {
	stores        string
	keys          string
	valueSize     int
	keyMode       string
	batch         int
	readRatio     float64
	keyDist       string
	clients       int
	pipeline      int
	connectPerOp  bool
	rate          float64
	ops           int64
	duration      time.Duration
	warmup        time.Duration
	warmupOps     int64
	seed          uint64
	out           string
	dataDir       string
	serverCPUs    string
	clientCPUs    string
	clientThreads int
	quick         bool
	quiet         bool
	failFast      bool
	replica       bool
	timeScale     float64
	rtt           time.Duration
	jitter        time.Duration
	bandwidth     string
	netMechanism  string
	stall         string
	repeat        int
	keep          bool
}

func (a *App) runCmd() *cobra.Command {
	f := new(runFlags)
	cmd := &cobra.Command{
		Use:   "run [SUITE | SCENARIO.yaml | WORKLOAD]",
		Short: "Run a suite, a scenario file or one workload and write result.json",
		Long: `Run measures every target of a scenario and writes results/<time>/result.json,
cell by cell, then prints a summary. With no argument it runs the quick suite:
every store that can run here, the kv experiment at 1k and 10k keys.

Managed servers are started from the installed binaries on free loopback ports
in fresh temporary directories, and removed afterwards (also on Ctrl-C).`,
		Example: `  storebench run
  storebench run kv --stores memory,files,sqlite,postgres,redis,memcached --keys 1000,10000,100000
  storebench run kv --stores redis://127.0.0.1:6379,postgres://me:secret@db:5432/app --keys 1k,10k
  storebench run my-scenario.yaml --clients 4`,
		Args: cobraArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := "quick"
			if len(args) == 1 {
				name = args[0]
			}
			return a.run(cmd, name, f)
		},
	}
	f.bind(cmd)
	return cmd
}

// bind defines the run command's flags on cmd, with f receiving their values.
func (f *runFlags) bind(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.stores, "stores", "", "comma-separated targets: store[:profile] or URL (overrides the scenario's targets)")
	fl.StringVar(&f.keys, "keys", "", "kv: comma-separated key counts, e.g. 1000,10000 or 1k,10k,1M")
	fl.IntVar(&f.valueSize, "value-size", 0, "kv: bytes per value (default 100)")
	fl.StringVar(&f.keyMode, "key-mode", "", "kv: random-float (the article's keys) or sequential")
	fl.IntVar(&f.batch, "batch", 0, "kv: write in bulk, N keys per call (PostgreSQL COPY, Redis/Memcached pipelines) instead of one by one")
	fl.Float64Var(&f.readRatio, "read-ratio", 0, "mix: share of ops that are gets, 0 (all sets) to 1 (all gets) (default 0.9)")
	fl.StringVar(&f.keyDist, "key-dist", "", "mix: key distribution: uniform (default), zipfian (YCSB's, 0.99, hot keys scattered) or sequential")
	fl.IntVar(&f.clients, "clients", 0, "connections, one per worker (default: 1; throughput, mix: 50)")
	fl.IntVar(&f.pipeline, "pipeline", 0, "ops per round trip: Redis pipelines, Memcached multi-get, PostgreSQL pipeline mode")
	fl.BoolVar(&f.connectPerOp, "connect-per-op", false, "connect, do one op, close (no connection reuse, like a PHP page per request)")
	fl.Float64Var(&f.rate, "rate", 0, "open loop: total ops/s; latency counts from each op's intended start (0 = closed loop)")
	fl.Int64Var(&f.ops, "ops", 0, "measured ops per phase (throughput, mix, hotkey)")
	fl.DurationVar(&f.duration, "duration", 0, "measured time per phase instead of an op count, e.g. 30s")
	fl.DurationVar(&f.warmup, "warmup", 0, "timed warm-up before each measured phase (with --duration), not counted")
	fl.Int64Var(&f.warmupOps, "warmup-ops", 0, "ops run before each measured phase, not counted")
	fl.StringVar(&f.serverCPUs, "server-cpus", "", "pin managed servers to these CPUs, e.g. 1 or 0-1, or \"none\" to leave them unpinned where the scenario pins them (recorded)")
	fl.StringVar(&f.clientCPUs, "client-cpus", "", "pin storebench itself to these CPUs, e.g. 0, or \"none\" to leave it unpinned where the scenario pins it (recorded)")
	fl.IntVar(&f.clientThreads, "client-threads", 0, "OS threads running storebench's Go code (GOMAXPROCS; default: one per CPU it may use); with servers on the same small machine, fewer can leave them more CPU (recorded)")
	fl.Uint64Var(&f.seed, "seed", 0, "seed of keys and values (default 42; recorded)")
	fl.StringVar(&f.out, "out", "results", "directory that receives <time>/result.json")
	fl.StringVar(&f.dataDir, "data-dir", os.TempDir(), "parent of the temporary data dirs of managed servers, files and sqlite")
	fl.IntVar(&f.repeat, "repeat", 1, "run every cell N times (default: the scenario's repeat, else once), in rounds over a target's cells (one server start); tables show the median repeat, the cells table each one, and compare their spread")
	fl.BoolVar(&f.keep, "keep", false, "leave each target's data (schema, database, keys, files) in place after the run, for your own queries; targets named by URL only; recorded, and removed later by storebench clean")
	fl.BoolVar(&f.failFast, "fail-fast", false, "stop at the first failed cell instead of going on with the next")
	fl.DurationVar(&f.rtt, "rtt", 0, "put a network between the clients and every server target: each round trip pays this much more, e.g. 0.5ms (0: through the network path, no delay; recorded with the measured round trip)")
	fl.DurationVar(&f.jitter, "jitter", 0, "with --rtt: vary each round trip by up to ± this much")
	fl.StringVar(&f.bandwidth, "bandwidth", "", "with --rtt: limit each direction, e.g. 100mbit, 1gbit or 10MB/s")
	fl.StringVar(&f.netMechanism, "net-mechanism", "auto", "with --rtt: how the delay is made: netem (veth pair into a network namespace with the kernel's netem qdisc), proxy (in-process delaying TCP proxy) or auto (netem where the kernel has it)")
	fl.StringVar(&f.stall, "stall", "", "stop each managed server AFTER into every measured phase for FOR (SIGSTOP, then SIGCONT), e.g. 1s:500ms; needs --duration")
	fl.BoolVar(&f.replica, "replica", false, "sessions: also run PostgreSQL designs with reads on a managed streaming replica")
	fl.Float64Var(&f.timeScale, "time-scale", 0, "sessions: shrink the TTL and every interval by this factor (e.g. 0.01), so a short run still sees expiry and vacuum")
	fl.BoolVar(&f.quick, "quick", false, "the suite's quick mode: same shape, fewer keys and ops")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "print only the summary")
}

// loadScenario resolves the run's argument: a suite, a YAML file or a workload name.
func (a *App) loadScenario(name string, f runFlags) (*scenario.Scenario, string, error) {
	if b, ok := suites.Open(name); ok {
		s, err := scenario.Parse(name+".yaml (built-in suite)", bytes.NewReader(b))
		return s, name, err
	}
	for _, w := range a.Workloads.Names() {
		if w == name {
			stores := f.stores
			if stores == "" {
				return nil, "", usagef("run %s: say which stores with --stores (valid: %s)", name, strings.Join(a.Registry.Names(), ", "))
			}
			return &scenario.Scenario{Name: name, Source: "command line", Workloads: []scenario.Workload{{Type: name}}}, "", nil
		}
	}
	if strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") || strings.ContainsRune(name, os.PathSeparator) {
		fh, err := os.Open(name)
		if err != nil {
			return nil, "", usagef("scenario %s: %v", name, errors.Unwrap(err))
		}
		defer fh.Close()
		s, err := scenario.Parse(name, fh)
		return s, "", err
	}
	return nil, "", usagef("unknown suite, workload or scenario file %q (suites: %s; workloads: %s; or a path to a .yaml file)",
		name, strings.Join(suites.Names(), ", "), strings.Join(a.Workloads.Names(), ", "))
}

// applyFlags lets the command line override the scenario.
func applyFlags(cmd *cobra.Command, s *scenario.Scenario, f runFlags) error {
	fl := cmd.Flags()
	if fl.Changed("stores") {
		s.Targets = nil
		for _, t := range strings.Split(f.stores, ",") {
			if strings.TrimSpace(t) == "" {
				return usagef("--stores: empty entry in %q", store.RedactURL(f.stores))
			}
			s.Targets = append(s.Targets, scenario.Target{Raw: strings.TrimSpace(t)})
		}
		// Stores named on the command line are wanted: a missing one is an error.
		s.SkipUnavailable = false
	}
	if err := overrideFields(cmd, s, f); err != nil {
		return err
	}
	// Flags beat the file: they land in every workload's own load.
	var over scenario.Load
	// Each value is checked by its parameter's bound, the one a scenario
	// file's field goes through, here with the flag's name; how the values
	// combine (a rate with a duration, the memory) is Validate's to check.
	for _, c := range []struct {
		flag string
		err  error
	}{
		{"clients", workload.CheckClients("--clients", f.clients)},
		{"pipeline", workload.CheckPipeline("--pipeline", f.pipeline)},
		{"batch", workload.CheckBatch("--batch", f.batch)},
		{"value-size", workload.CheckValueSize("--value-size", f.valueSize)},
		{"ops", workload.CheckOps("--ops", f.ops, 1)},
		{"warmup-ops", workload.CheckOps("--warmup-ops", f.warmupOps, 0)},
		{"duration", workload.CheckDuration("--duration", f.duration)},
		{"warmup", workload.CheckDuration("--warmup", f.warmup)},
		{"rate", workload.CheckRate("--rate", f.rate, 0, 0)},
	} {
		if fl.Changed(c.flag) && c.err != nil {
			return &UsageError{Err: c.err}
		}
	}
	// The overlay below reads 0 as unset: the scenario's depth would stay.
	if fl.Changed("pipeline") && f.pipeline == 0 {
		return usagef("--pipeline must be positive, got 0 (1 sends one op per round trip)")
	}
	if fl.Changed("ops") && fl.Changed("duration") {
		return usagef("give --ops or --duration, not both")
	}
	over.Clients, over.Pipeline, over.Rate = f.clients, f.pipeline, f.rate
	over.Ops, over.Duration = f.ops, scenario.Duration(f.duration)
	over.Warmup, over.WarmupOps = scenario.Duration(f.warmup), f.warmupOps
	if fl.Changed("rtt") {
		rtt := scenario.Duration(f.rtt)
		over.RTT = &rtt
	}
	over.Jitter, over.Bandwidth = scenario.Duration(f.jitter), f.bandwidth
	if fl.Changed("connect-per-op") {
		over.ConnectPerOp = &f.connectPerOp
	}
	for i := range s.Workloads {
		w := &s.Workloads[i]
		merged := scenario.Load{}.Overlay(w.Load).Overlay(&over)
		w.Load = &merged
	}
	if fl.Changed("stall") {
		st, err := parseStall(f.stall)
		if err != nil {
			return usagef("--stall: %v", err)
		}
		for i := range s.Workloads {
			s.Workloads[i].Stall = &st
		}
	}
	if fl.Changed("seed") {
		s.Seed = f.seed
	}
	return nil
}

// fieldFlags are the run flags that set a workload entry's field, by its
// path in a scenario entry; each lands on every entry that has the field.
var fieldFlags = []struct {
	flag string
	path []string
	val  func(f runFlags) (any, error)
}{
	{"keys", []string{"keys"}, func(f runFlags) (any, error) {
		keys, err := parseCounts(f.keys)
		if err != nil {
			return nil, usagef("--keys: %v", err)
		}
		for _, n := range keys {
			if err := workload.CheckKeys("--keys", n); err != nil {
				return nil, &UsageError{Err: err}
			}
		}
		return keys, nil
	}},
	{"value-size", []string{"value_size"}, func(f runFlags) (any, error) { return f.valueSize, nil }},
	{"key-mode", []string{"key_mode"}, func(f runFlags) (any, error) { return f.keyMode, nil }},
	{"batch", []string{"batch"}, func(f runFlags) (any, error) { return f.batch, nil }},
	{"read-ratio", []string{"read_ratio"}, func(f runFlags) (any, error) { return f.readRatio, nil }},
	{"key-dist", []string{"key_dist"}, func(f runFlags) (any, error) { return f.keyDist, nil }},
	{"time-scale", []string{"sessions", "time_scale"}, func(f runFlags) (any, error) {
		if f.timeScale <= 0 {
			return nil, usagef("--time-scale must be positive, got %v", f.timeScale)
		}
		return f.timeScale, nil
	}},
	{"replica", []string{"sessions", "replica"}, func(f runFlags) (any, error) { return f.replica, nil }},
}

// overrideFields lays the workload-field flags given over the scenario's entries.
func overrideFields(cmd *cobra.Command, s *scenario.Scenario, f runFlags) error {
	for _, ff := range fieldFlags {
		if !cmd.Flags().Changed(ff.flag) {
			continue
		}
		v, err := ff.val(f)
		if err != nil {
			return err
		}
		for i := len(ff.path) - 1; i >= 0; i-- {
			v = map[string]any{ff.path[i]: v}
		}
		if err := s.Override("--"+ff.flag, v.(map[string]any)); err != nil {
			return &UsageError{Err: err}
		}
	}
	return nil
}

// parseCounts reads "1000,10k,1M"; workload.CheckKeys bounds the counts.
func parseCounts(s string) ([]int64, error) {
	var out []int64
	for _, count := range strings.Split(s, ",") {
		p := strings.TrimSpace(count)
		mult := int64(1)
		switch {
		case strings.HasSuffix(p, "k"), strings.HasSuffix(p, "K"):
			mult, p = 1000, p[:len(p)-1]
		case strings.HasSuffix(p, "M"), strings.HasSuffix(p, "m"):
			mult, p = 1000000, p[:len(p)-1]
		}
		n, err := strconv.ParseInt(strings.ReplaceAll(p, "_", ""), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a count", p)
		}
		if n > math.MaxInt64/mult || n < math.MinInt64/mult {
			return nil, fmt.Errorf("%q is more than a count can hold", strings.TrimSpace(count))
		}
		out = append(out, n*mult)
	}
	return out, nil
}

// preflight checks everything a run needs before any work: binaries of
// managed servers, reachability of external ones, writable directories.
func (a *App) preflight(ctx context.Context, s *scenario.Scenario, baseDir, serverCPUs string) ([]scenario.Target, []result.Skipped, error) {
	var keep []scenario.Target
	var skipped []result.Skipped
	for _, t := range s.Targets {
		k, _ := a.Registry.Lookup(t.Spec.Store)
		switch {
		case t.Spec.Managed() && k.Server != "":
			if err := server.Check(k.Server, k.ServerOptionsFor(t.Spec, target.StartArgs{BaseDir: baseDir, CPUs: serverCPUs})); err != nil {
				var missing *server.MissingError
				if !errors.As(err, &missing) {
					return nil, nil, usagef("target %s: %v", t.Spec.Label(), err)
				}
				if s.SkipUnavailable {
					skipped = append(skipped, result.Skipped{Target: t.Spec.Label(), Reason: err.Error()})
					continue
				}
				return nil, nil, usagef("target %s: %v", t.Spec.Label(), err)
			}
		case !t.Spec.Managed():
			if err := target.Probe(ctx, k, t.Spec.URL); err != nil {
				return nil, nil, usagef("target %s: %v", t.Spec.Label(), err)
			}
		}
		keep = append(keep, t)
	}
	if len(keep) == 0 {
		return nil, skipped, usagef("no target of %s can run here", s.Name)
	}
	return keep, skipped, nil
}

// runPlan is a run read, checked and planned, before any work.
type runPlan struct {
	s              *scenario.Scenario
	suite          string            // the built-in suite run, "" for a file or a workload
	targets        []scenario.Target // those that can run here
	cells          []cell
	skipped        []result.Skipped
	keep           bool // leave the targets' data in place (--keep)
	repeat         int
	server, client cpuChoice
	clientCPUs     []int
	mechanism      netem.Mechanism
}

// planRun reads and checks everything a run is given (the scenario, the
// flags, the targets' binaries and URLs, the network) and plans its cells,
// starting nothing and writing nothing: bad input is a UsageError here.
// It settles f's CPU lists.
func (a *App) planRun(cmd *cobra.Command, name string, f *runFlags) (*runPlan, error) {
	ctx := cmd.Context()
	s, suite, err := a.loadScenario(name, *f)
	if err != nil {
		return nil, asUsage(err)
	}
	if f.quick {
		if err := s.ApplyQuick(a.Workloads); err != nil {
			return nil, usagef("--quick: %v", err)
		}
	}
	if err := applyFlags(cmd, s, *f); err != nil {
		return nil, err
	}
	s.Defaults()
	resolved, err := s.Resolve(a.Registry, a.Workloads, f.keep || s.Keep)
	if err != nil {
		return nil, asUsage(err)
	}
	s = resolved.Scenario
	if strings.TrimSpace(f.out) == "" {
		return nil, usagef("--out %q names no directory: give the one that receives <time>/result.json (default: results)", f.out)
	}
	if st, err := os.Stat(f.dataDir); err != nil || !st.IsDir() {
		return nil, usagef("--data-dir %s: not a directory", f.dataDir)
	}
	if !slices.Contains([]string{"auto", "netem", "proxy"}, f.netMechanism) {
		return nil, usagef("--net-mechanism %q: want auto, netem or proxy", f.netMechanism)
	}
	repeat := max(s.Repeat, 1)
	if cmd.Flags().Changed("repeat") {
		if f.repeat < 1 || f.repeat > scenario.MaxRepeat {
			return nil, usagef("--repeat %d: want 1 to %d", f.repeat, scenario.MaxRepeat)
		}
		repeat = f.repeat
	}
	if cmd.Flags().Changed("client-threads") && (f.clientThreads < 1 || f.clientThreads > scenario.MaxClientThreads) {
		return nil, usagef("--client-threads %d: want 1 to %d", f.clientThreads, scenario.MaxClientThreads)
	}
	server := pickCPUs(f.serverCPUs, "--server-cpus", s.ServerCPUs, "server_cpus", s.Source)
	client := pickCPUs(f.clientCPUs, "--client-cpus", s.ClientCPUs, "client_cpus", s.Source)
	f.serverCPUs, f.clientCPUs = server.list, client.list
	if _, err := server.cpus(); err != nil {
		return nil, err
	}
	clientCPUs, err := client.cpus()
	if err != nil {
		return nil, err
	}
	keep, err := a.keepData(resolved, f.keep)
	if err != nil {
		return nil, err
	}
	targets, skipped, err := a.preflight(ctx, s, f.dataDir, f.serverCPUs)
	if err != nil {
		return nil, err
	}
	planned, err := plan(resolved, targets)
	if err != nil {
		return nil, err
	}
	cells := repeatCells(planned, repeat)
	mechanism, err := networkMechanism(ctx, cells, f.netMechanism)
	if err != nil {
		return nil, usagef("--net-mechanism: %v", err)
	}
	return &runPlan{s: s, suite: suite, targets: targets, keep: keep, cells: cells, skipped: skipped, repeat: repeat, server: server, client: client, clientCPUs: clientCPUs, mechanism: mechanism}, nil
}

func (a *App) run(cmd *cobra.Command, name string, f *runFlags) error {
	ctx := cmd.Context()
	p, err := a.planRun(cmd, name, f)
	if err != nil {
		return err
	}
	s := p.s
	if f.clientCPUs != "" {
		if err := pinProcess(f.clientCPUs); err != nil {
			return usagef("%s: %v", p.client.origin, err)
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(clientThreads(f.clientThreads, s.ClientThreads, len(p.clientCPUs))))

	started := time.Now().UTC()
	res := &result.Result{
		Schema: result.Schema, ID: started.Format("20060102T150405Z"), Status: result.StatusRunning, StartedAt: started,
		Command: redactArgs(os.Args), Suite: p.suite, Seed: s.Seed,
		Storebench:  result.Build{Version: a.Version, Commit: a.Commit, GoVersion: runtime.Version()},
		Environment: result.ReadEnvironment(f.serverCPUs),
		Scenario:    s, Skipped: p.skipped, Article: s.Article, Quick: f.quick,
	}
	if p.repeat > 1 {
		res.Repeat = p.repeat
	}
	w, err := result.Create(f.out, res)
	if err != nil {
		return usagef("--out %s: %v", f.out, err)
	}
	out := cmd.OutOrStdout()
	prog := newProgress(out, cmd.ErrOrStderr(), f.quiet) // progress.go: log lines, and a live line on a terminal
	defer prog.close()
	logf := prog.logf
	for _, sk := range p.skipped {
		logf("skipping %s: %s", sk.Target, sk.Reason)
	}
	a.reportLeftovers(ctx, f.dataDir, specsOf(p.targets), logf)
	for _, c := range []cpuChoice{p.server, p.client} {
		if c.dropped != "" {
			logf("%s: %s not applied: %s; the run is unpinned (see the environment's CPUs)", s.Source, c.dropped, c.why)
		}
	}
	scratch, err := owner.MakeDir(f.dataDir, "storebench-run-*", "run scratch dir")
	if err != nil {
		return usagef("--data-dir %s: %v", f.dataDir, err)
	}
	defer os.RemoveAll(scratch)

	prog.begin(p.cells)
	failed := runCells(ctx, a.Registry, p.cells, w, target.StartArgs{Namespace: owner.Namespace(started), RunDir: scratch, BaseDir: f.dataDir, CPUs: f.serverCPUs, Network: p.mechanism, Keep: p.keep}, logf, prog, f.failFast)

	status := result.StatusComplete
	switch {
	case ctx.Err() != nil:
		status = result.StatusInterrupted
	case failed > 0:
		status = result.StatusFailed
	}
	if err := w.Finish(status); err != nil {
		return &FailedError{Err: err}
	}
	final, err := result.Read(w.Path())
	if err != nil {
		return &FailedError{Err: err}
	}
	report.Text(out, final)
	printKept(out, final)
	fmt.Fprintf(out, "\nresult: %s\n", w.Path())
	if p, err := writeHTMLReport(final, filepath.Dir(w.Path())); err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "storebench: %v\n", err) // the result is safe; only its page is missing
	} else {
		fmt.Fprintf(out, "report: %s\n", p)
	}
	switch {
	case ctx.Err() != nil:
		return &FailedError{Err: fmt.Errorf("interrupted; %d finished cells kept in %s", len(final.Cells), w.Path())}
	case failed > 0:
		return &FailedError{Err: fmt.Errorf("%d of %d cells failed; see %s", failed, len(p.cells), w.Path())}
	}
	return nil
}

// asUsage marks errors found while reading input as usage errors.
func asUsage(err error) error {
	var ue *UsageError
	if errors.As(err, &ue) {
		return err
	}
	return &UsageError{Err: err}
}

// runCells runs every cell, starting each target once, and returns how many
// failed. A managed server that dies is recorded in its cell, and the next
// cell of that target gets a fresh server; with failFast the run stops at
// the first failed cell.
func runCells(ctx context.Context, reg target.Registry, cells []cell, w *result.Writer, args target.StartArgs, logf func(string, ...any), prog *progress, failFast bool) int {
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
		prog.cellStarted(k)
		rc := runCell(ctx, inst, c, prog.onSecond)
		rc.Params = params
		prog.cellDone(k, rc.Seconds)
		if ctx.Err() != nil && rc.Status != result.CellOK {
			break // interrupted half-way: keep only finished cells
		}
		if rc.Status != result.CellOK {
			failed++
			logf("  failed: %s", rc.Error)
		}
		logWriteErr(w.AddCell(rc), logf)
		if inst.Server != nil && !inst.Server.Running() {
			stop() // removes the dead server's directory; the next cell starts a fresh one
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

func runCell(ctx context.Context, inst *target.Instance, c cell, onSecond func(string, metrics.Second)) result.Cell {
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
	out, err := runWorkload(cellCtx, inst, c, hooks)
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
func runWorkload(ctx context.Context, inst *target.Instance, c cell, hooks workload.Hooks) (workload.Outcome, error) {
	e := env(inst)
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

// watchServer cancels the cell as soon as its managed server is gone, so a
// dead server fails the cell at once instead of after every op has failed.
func watchServer(ctx context.Context, inst *target.Instance, cancel context.CancelCauseFunc) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if !inst.Server.Running() {
				cancel(errServerDied)
				return
			}
		}
	}
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
	if inst.Server != nil {
		t.ServerPID = inst.Server.PID
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

// cpuChoice is one side's CPU pinning for a run.
type cpuChoice struct {
	list    string // "" is unpinned
	origin  string // where list came from, for errors: a flag or file: field
	dropped string // the scenario's list, when it cannot be applied here,
	why     string // and why
}

// cpus parses the list, distinct CPUs in order; none when unpinned.
func (c cpuChoice) cpus() ([]int, error) {
	if c.list == "" {
		return nil, nil
	}
	cpus, err := parseCPUList(c.list)
	if err != nil {
		return nil, usagef("%s: %v", c.origin, err)
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// unpinned is the flag value that leaves a side unpinned, overriding the
// scenario's list.
const unpinned = "none"

// pickCPUs takes the flag's list, else the scenario's. Where the scenario's
// cannot be applied (not Linux, or CPUs a cpuset leaves out) it is dropped,
// to be said, rather than refusing a suite; a flag still fails there.
func pickCPUs(flagList, flag, scenarioList, field, source string) cpuChoice {
	switch {
	case flagList == unpinned:
		return cpuChoice{}
	case flagList != "":
		return cpuChoice{list: flagList, origin: flag}
	case scenarioList == "":
		return cpuChoice{}
	case !canPin:
		return cpuChoice{dropped: field + " " + scenarioList, why: "pinning to CPUs needs Linux"}
	}
	if why := cannotPin(scenarioList); why != "" {
		return cpuChoice{dropped: field + " " + scenarioList, why: why}
	}
	return cpuChoice{list: scenarioList, origin: source + ": " + field}
}

// clientThreads is the GOMAXPROCS a run uses: --client-threads, else the
// scenario's client_threads, else one per pinned client CPU (the runtime
// would notice the new mask only later), else the runtime's own choice.
// The result records it.
func clientThreads(flagThreads, scenarioThreads, pinnedCPUs int) int {
	return cmp.Or(flagThreads, scenarioThreads, pinnedCPUs, runtime.GOMAXPROCS(0))
}

package cli

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/ycsb/gen"
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
	ycsb          string
	records       string
	propertyFile  string
	properties    []string
	trace         string
	traceFormat   string
	speed         string
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
	fault         string
	serverBins    []string
	slo           []string
	need          string
	timeScale     float64
	rtt           time.Duration
	jitter        time.Duration
	bandwidth     string
	netMechanism  string
	stall         string
	repeat        int
	keep          bool
	noHiccup      bool
	asserts       []string // --assert
	assertAbort   string   // --assert-abort[=GRACE]
	junit         string   // --junit FILE
	shard, start  string   // --shard I/N, --start-at TIME (RFC 3339)
	metricsAddr   string
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
			return a.run(cmd, name, *f)
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
	fl.StringVar(&f.ycsb, "ycsb", "", "ycsb: comma-separated core workloads, e.g. a,c (default a,b,c,d,f)")
	fl.StringVar(&f.records, "records", "", "ycsb: records the load phase inserts (recordcount), e.g. 10000 or 10k (default 1000)")
	fl.StringVar(&f.propertyFile, "property-file", "", "ycsb: a YCSB property file (as its -P), laid over each core workload's own")
	fl.StringArrayVarP(&f.properties, "property", "p", nil, "ycsb: a YCSB property, key=value (as its -p), laid over the property file; repeatable")
	fl.StringVar(&f.trace, "trace", "", "replay, capacity (its speed), cache-aside (its requests): the trace file (.gz and .zst streamed), or a built-in sample: sample:twitter, sample:kvcache-v1, sample:kvcache-v2, sample:redis-monitor, sample:csv")
	fl.StringVar(&f.traceFormat, "trace-format", "", "replay: twitter, kvcache, redis-monitor or csv (default: told by the trace's content)")
	fl.StringVar(&f.speed, "speed", "", "replay: comma-separated speed factors, a cell each: 2 halves the recorded gaps, max sends as fast as the connections allow (default 1)")
	fl.IntVar(&f.clients, "clients", 0, "connections, one per worker (default: 1; throughput, mix: 50)")
	fl.IntVar(&f.pipeline, "pipeline", 0, "ops per round trip: Redis pipelines, Memcached multi-get, PostgreSQL pipeline mode")
	fl.BoolVar(&f.connectPerOp, "connect-per-op", false, "connect, do one op, close (no connection reuse, like a PHP page per request)")
	fl.Float64Var(&f.rate, "rate", 0, "open loop: total ops/s; latency counts from each op's intended start (0 = closed loop)")
	fl.Var((*countFlag)(&f.ops), "ops", "measured ops per phase (throughput, mix, hotkey, ycsb), e.g. 50000 or 50k")
	fl.DurationVar(&f.duration, "duration", 0, "measured time per phase instead of an op count, e.g. 30s")
	fl.DurationVar(&f.warmup, "warmup", 0, "timed warm-up before each measured phase (with --duration), not counted")
	fl.Var((*countFlag)(&f.warmupOps), "warmup-ops", "ops run before each measured phase, not counted, e.g. 1000 or 1k")
	fl.StringVar(&f.serverCPUs, "server-cpus", "", "pin managed servers to these CPUs, e.g. 1 or 0-1, or \"none\" to leave them unpinned where the scenario pins them (recorded)")
	fl.StringVar(&f.clientCPUs, "client-cpus", "", "pin storebench itself to these CPUs, e.g. 0, or \"none\" to leave it unpinned where the scenario pins it (recorded)")
	fl.IntVar(&f.clientThreads, "client-threads", 0, "OS threads running storebench's Go code (GOMAXPROCS) in every cell; default: chosen per cell, one per CPU it may use less the CPUs a one-threaded managed server (Redis, memcached -t 1) shares with it (recorded with why)")
	fl.Uint64Var(&f.seed, "seed", 0, "seed of keys and values (default 42; recorded)")
	fl.StringVar(&f.out, "out", "results", "directory that receives <time>/result.json")
	fl.StringVar(&f.dataDir, "data-dir", os.TempDir(), "parent of the temporary data dirs of managed servers, files and sqlite")
	fl.IntVar(&f.repeat, "repeat", 1, "run every cell N times (default: the scenario's repeat, else once), in rounds over a target's cells (one server start); tables show the median repeat, the cells table each one, and compare their spread")
	fl.BoolVar(&f.noHiccup, "no-hiccup", false, "leave out the hiccup meter: a probe thread per CPU that measures the platform's own stalls beside every phase (about 2% of each CPU)")
	fl.BoolVar(&f.keep, "keep", false, "leave each target's data (schema, database, keys, files) in place after the run, for your own queries; targets named by URL only; recorded, and removed later by storebench clean")
	fl.StringVar(&f.shard, "shard", "", "run part I of N equal parts of the scenario, counted from 0 (a Kubernetes Indexed Job's completion index), e.g. 0/3: its share of clients, ops and rate, its part of the keys written; merge the shards' results with storebench merge")
	fl.StringVar(&f.start, "start-at", "", "wait until this RFC 3339 instant (e.g. 2026-11-24T07:00:00Z) after starting the first target, before the first cell: shards begin together (recorded)")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve live Prometheus/OpenMetrics metrics at http://ADDR/metrics while the run lasts: ops, errors, latency, backlog per cell and phase (docs/metrics.md); :9100 listens on loopback, 0.0.0.0:9100 on every interface, port 0 on a free port (logged)")
	fl.BoolVar(&f.failFast, "fail-fast", false, "stop at the first failed cell instead of going on with the next")
	fl.StringArrayVar(&f.asserts, "assert", nil, "a threshold the run is judged by, after each cell: p99<=2ms, p50<500us, ops_s>=50k, errors==0, error_rate<0.1%, lost==0, invariants==ok, capacity>=20k, hit_ratio>=0.8; scoped as TARGET:METRIC, TARGET:WORKLOAD-OR-PHASE:METRIC or TARGET:WORKLOAD:PHASE:METRIC with globs, e.g. 'redis:get:p99<=1ms', 'postgres*:*:p99<=5ms'; repeatable, added to a scenario's asserts; a failed one makes the exit code 3")
	fl.StringVar(&f.assertAbort, "assert-abort", "", "stop the run at the first failed assertion, once GRACE has passed since it began (--assert-abort, or --assert-abort=1m); what was measured is kept")
	fl.Lookup("assert-abort").NoOptDefVal = "0s"
	fl.StringVar(&f.junit, "junit", "", "also write the run's verdicts as JUnit XML to this file: a test case per cell × assertion (and per failed cell), for a CI system to show")
	fl.DurationVar(&f.rtt, "rtt", 0, "put a network between the clients and every server target: each round trip pays this much more, e.g. 0.5ms (0: through the network path, no delay; recorded with the measured round trip)")
	fl.DurationVar(&f.jitter, "jitter", 0, "with --rtt: vary each round trip by up to ± this much")
	fl.StringVar(&f.bandwidth, "bandwidth", "", "with --rtt: limit each direction, e.g. 100mbit, 1gbit or 10MB/s")
	fl.StringVar(&f.netMechanism, "net-mechanism", "auto", "with --rtt: how the delay is made: netem (veth pair into a network namespace with the kernel's netem qdisc), proxy (in-process delaying TCP proxy) or auto (netem where the kernel has it)")
	fl.StringVar(&f.stall, "stall", "", "stop each managed server AFTER into every measured phase for FOR (SIGSTOP, then SIGCONT), e.g. 1s:500ms; needs --duration")
	fl.StringVar(&f.fault, "fault", "", "durability: kill (SIGKILL the server; the OS page cache survives; default) or power (a power cut: what no fsync made durable is lost; needs root and /dev/fuse)")
	fl.StringArrayVar(&f.slo, "slo", nil, "capacity, cache-aside: a latency objective, e.g. p99<=1ms or p99.9<=5ms,p50<=200us; repeat for several, each searched on its own")
	fl.StringVar(&f.need, "need", "", "capacity, cache-aside: a rate to cost at capacity, e.g. 50k: the cores it would take (extrapolated)")
	fl.StringArrayVar(&f.serverBins, "server-bin", nil, "run your own build of a managed server: store=path, e.g. postgres=/opt/pg17/bin or valkey=/opt/valkey/bin/valkey-server (repeatable; recorded)")
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
		s, err := scenario.ReadFile(name)
		return s, "", err
	}
	return nil, "", usagef("unknown suite, workload or scenario file %q (suites: %s; workloads: %s; or a path to a .yaml file)",
		name, strings.Join(suites.Names(), ", "), strings.Join(a.Workloads.Names(), ", "))
}

// applyFlags lets the command line override the scenario (and the full one
// a quick run's note compares with). Its parts run in this order, so that
// of several bad flags the first is the one reported.
func (a *App) applyFlags(cmd *cobra.Command, s *scenario.Scenario, f runFlags) error {
	return s.ApplyFlags(func(s *scenario.Scenario) error { return a.overrideScenario(cmd.Flags().Changed, s, f) })
}

func (a *App) overrideScenario(changed func(string) bool, s *scenario.Scenario, f runFlags) error {
	if err := applyStores(changed, s, f, a.Registry.SplitStores); err != nil {
		return err
	}
	if err := overrideFields(changed, s, f); err != nil {
		return err
	}
	over, err := loadOverlay(changed, f)
	if err != nil {
		return err
	}
	for i := range s.Workloads {
		w := &s.Workloads[i]
		merged := scenario.Load{}.Overlay(w.Load).Overlay(&over)
		w.Load = &merged
	}
	if changed("stall") {
		st, err := scenario.ParseStall(f.stall)
		if err != nil {
			return usagef("--stall: %v", err)
		}
		for i := range s.Workloads {
			s.Workloads[i].Stall = &st
		}
	}
	if changed("seed") {
		s.Seed = f.seed
	}
	return nil
}

func applyStores(changed func(flag string) bool, s *scenario.Scenario, f runFlags, split func(string) ([]string, error)) error {
	if changed("stores") {
		s.Targets = nil
		targets, err := split(f.stores)
		if err != nil {
			return &UsageError{Err: err}
		}
		for _, t := range targets {
			if strings.TrimSpace(t) == "" {
				// Not quoted: any piece of a list may hold a password.
				return usagef("--stores: an empty entry (two commas in a row, or one at an end)")
			}
			s.Targets = append(s.Targets, scenario.Target{Raw: strings.TrimSpace(t)})
		}
		// Stores named on the command line are wanted: a missing one is an error.
		s.SkipUnavailable = false
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
		keys, err := workload.ParseCounts(f.keys)
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
	{"ycsb", []string{"ycsb"}, func(f runFlags) (any, error) { return splitList(f.ycsb), nil }},
	{"records", []string{"records"}, func(f runFlags) (any, error) {
		n, err := workload.ParseCounts(f.records)
		if err != nil || len(n) != 1 {
			return nil, usagef("--records %q: want one count, e.g. 10000 or 10k", f.records)
		}
		return n[0], nil
	}},
	// A property file's pairs, then -p's over them (overlays merge).
	{"property-file", []string{"properties"}, func(f runFlags) (any, error) {
		file, err := os.Open(f.propertyFile)
		if err != nil {
			return nil, usagef("--property-file: %v", err)
		}
		defer file.Close()
		pairs, err := gen.Pairs(file)
		if err != nil {
			return nil, usagef("--property-file %s: %v", f.propertyFile, err)
		}
		return pairs, nil
	}},
	{"property", []string{"properties"}, func(f runFlags) (any, error) {
		pairs := map[string]string{}
		for _, kv := range f.properties {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, usagef("-p %q: want key=value, e.g. -p readallfields=false", kv)
			}
			pairs[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		return pairs, nil
	}},
	{"trace", []string{"trace"}, func(f runFlags) (any, error) { return f.trace, nil }},
	{"trace-format", []string{"trace_format"}, func(f runFlags) (any, error) { return f.traceFormat, nil }},
	{"speed", []string{"speed"}, func(f runFlags) (any, error) { return splitList(f.speed), nil }},
	{"time-scale", []string{"sessions", "time_scale"}, func(f runFlags) (any, error) {
		if f.timeScale <= 0 {
			return nil, usagef("--time-scale must be positive, got %v", f.timeScale)
		}
		return f.timeScale, nil
	}},
	{"slo", []string{"slo"}, func(f runFlags) (any, error) { return f.slo, nil }},
	{"need", []string{"need"}, func(f runFlags) (any, error) {
		n, err := workload.ParseCounts(f.need)
		if err != nil || len(n) != 1 {
			return nil, usagef("--need %q: want one rate in ops/s, e.g. 50000 or 50k", f.need)
		}
		return n[0], nil
	}},
	{"fault", []string{"durability", "fault"}, func(f runFlags) (any, error) { return f.fault, nil }},
	{"replica", []string{"sessions", "replica"}, func(f runFlags) (any, error) { return f.replica, nil }},
}

// splitList is a flag's comma-separated list, each item trimmed.
func splitList(s string) []string {
	var items []string
	for _, item := range strings.Split(s, ",") {
		items = append(items, strings.TrimSpace(item))
	}
	return items
}

// overrideFields lays the workload-field flags given over the scenario's
// entries (scenario.Override): the flags know a field's name, not which
// workloads have it.
func overrideFields(changed func(flag string) bool, s *scenario.Scenario, f runFlags) error {
	for _, ff := range fieldFlags {
		if !changed(ff.flag) {
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

// zeroFlags refuses a flag given 0 where 0 is no value, as the field in a
// file is refused (workload.RefuseZero): with the bound and what leaving
// the flag out gives.
func zeroFlags(changed func(flag string) bool, f runFlags) error {
	for _, z := range []struct {
		flag, field string
		zero        bool
	}{
		{"clients", "clients", f.clients == 0}, {"pipeline", "pipeline", f.pipeline == 0},
		{"ops", "ops", f.ops == 0}, {"duration", "duration", f.duration == 0},
		{"value-size", "value_size", f.valueSize == 0},
		{"repeat", "repeat", f.repeat == 0}, {"client-threads", "client_threads", f.clientThreads == 0},
	} {
		if !changed(z.flag) || !z.zero {
			continue
		}
		if err := workload.RefuseZero("--"+z.flag, z.field, "counted ops (--ops)"); err != nil {
			return &UsageError{Err: err}
		}
	}
	return nil
}

// loadOverlay is the load the flags give: flags beat the file, they land in
// every workload's own load.
func loadOverlay(changed func(flag string) bool, f runFlags) (scenario.Load, error) {
	var over scenario.Load
	if err := zeroFlags(changed, f); err != nil {
		return over, err
	}
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
		if changed(c.flag) && c.err != nil {
			return over, &UsageError{Err: c.err}
		}
	}
	if changed("ops") && changed("duration") {
		return over, usagef("give --ops or --duration, not both")
	}
	over.Clients, over.Pipeline, over.Rate = f.clients, f.pipeline, f.rate
	over.Ops, over.Duration = f.ops, scenario.Duration(f.duration)
	over.Warmup, over.WarmupOps = scenario.Duration(f.warmup), f.warmupOps
	if changed("rtt") {
		rtt := scenario.Duration(f.rtt)
		over.RTT = &rtt
	}
	over.Jitter, over.Bandwidth = scenario.Duration(f.jitter), f.bandwidth
	if changed("connect-per-op") {
		over.ConnectPerOp = &f.connectPerOp
	}
	return over, nil
}

// countFlag is a flag holding one count written as --keys and --records
// take them (50000, 50k, 1M), so every count flag reads the same way.
type countFlag int64

func (c *countFlag) String() string { return strconv.FormatInt(int64(*c), 10) }
func (c *countFlag) Type() string   { return "count" }

func (c *countFlag) Set(s string) error {
	n, err := workload.ParseCounts(s)
	if err != nil {
		return err
	}
	if len(n) != 1 {
		return errors.New("want one count, e.g. 50000 or 50k")
	}
	*c = countFlag(n[0])
	return nil
}

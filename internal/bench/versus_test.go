package bench

// What the Versus benchmarks share: running a tool as a child process and
// reading its CPU time, running storebench's throughput workload with the
// server's CPU sampled around the measured part, and the table of medians.
//
// Each comparison runs tool and storebench alternately (A B A B ...,
// -versus.reps pairs) against the same managed server and reports the
// median of each figure: this machine is shared and noisy, and alternating
// exposes both sides to the same drift.
//
//	go test -run '^$' -bench Versus -benchtime 1x ./internal/bench/

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/testkit"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/throughput"
)

var reps = flag.Int("versus.reps", 3, "tool/storebench pairs per comparison (A B A B ...); the median of each figure is reported")

// CPU placement of the comparisons, alike for both sides: the server
// (server.Options.CPUs; memaslap's comparison only) on one set of CPUs, the
// client on another: storebench's goroutines or the tool, which inherits
// this process's mask. "auto" is each comparison's own placement (see
// placement); "" or "none" leaves both sides unpinned.
var (
	serverCPUs = flag.String("versus.server-cpus", "auto", "pin the managed server to these CPUs (e.g. 1); \"auto\": the comparison's default; \"none\": unpinned")
	clientCPUs = flag.String("versus.client-cpus", "auto", "pin this process and the tools it runs to these CPUs (e.g. 0) once the server has started, with GOMAXPROCS and memaslap -T/pgbench -j that many; \"auto\": the comparison's default; \"none\": unpinned")
)

// placement returns the client's and the server's CPUs for a comparison:
// the flags when either is set, else the comparison's default, given for a
// machine of two CPUs or more (unpinned on one).
//
// Redis's comparison pins by default: one client thread on CPU 0 and the
// one-threaded Redis on CPU 1. Unpinned, the scheduler sometimes put both
// on one CPU for a whole run, and storebench's -P 16 GET drove 509k or 865k
// ops/s in consecutive runs (redis-benchmark's alike); pinned, three pairs
// gave 1.02-1.16x for every -P 16 ratio. PostgreSQL's backends and
// Memcached's threads use both CPUs, so those comparisons stay unpinned.
func placement(defClient, defServer string) (client, server string) {
	if *clientCPUs != "auto" || *serverCPUs != "auto" {
		client, server = *clientCPUs, *serverCPUs
		if client == "auto" || client == "none" {
			client = ""
		}
		if server == "auto" || server == "none" {
			server = ""
		}
		return client, server
	}
	if runtime.NumCPU() < 2 {
		return "", ""
	}
	return defClient, defServer
}

// threads is the number of client threads on both sides of every
// comparison: redis-benchmark --threads, memaslap -T, pgbench -j, and
// storebench's GOMAXPROCS. A Go client given more threads than the tool it
// is compared with is not driving the same way (on 2 CPUs, a second client
// thread competes with a one-threaded Redis for its CPU: storebench's SET
// went from ~83k to ~113k req/s with GOMAXPROCS 1), nor with fewer. 0 means
// each tool's usual setting here: redis-benchmark's one event loop (its
// default), memaslap and pgbench a thread per client CPU (as their manuals
// advise on multi-CPU machines).
var threads = flag.Int("versus.threads", 0, "client threads on both sides (tools' --threads/-T/-j, storebench's GOMAXPROCS); 0 = redis-benchmark 1, memaslap and pgbench one per client CPU")

// clientThreads pins this process (and so the tools it starts) to
// -versus.client-cpus, sets GOMAXPROCS to want (or, if want is 0, to
// -versus.threads or else the client's CPU count) until b ends, and returns
// that thread count: the tool gets the same.
func clientThreads(b *testing.B, want int, clientCPUs string) int {
	b.Helper()
	cpus := runtime.GOMAXPROCS(0)
	if clientCPUs != "" {
		restore, n, err := pinSelf(clientCPUs)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			if err := restore(); err != nil {
				b.Error(err)
			}
		})
		cpus = n
	}
	n := cmp.Or(*threads, want, cpus)
	prev := runtime.GOMAXPROCS(n)
	b.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	return n
}

// namespace is the key prefix / schema of storebench's side. It is short so
// that memaslap can be given keys of the same length.
const namespace = "vs"

// toolTimeout bounds one run of a tool.
const toolTimeout = 3 * time.Minute

// sample is one run of one side.
type sample struct {
	opsS     float64 // operations per second
	clientUs float64 // client CPU (user+system) per operation, µs
	serverUs float64 // managed server's CPU per operation, µs
	clientIO string  // storebench's: how its connections waited (metrics.Phase.ClientIO)
	secs     float64 // the measured time the rate is over, by the side's own clock
	p50Us    float64 // storebench's: the phase's median latency
}

// comparison is one line of the table: the same load driven by a tool and
// by storebench.
type comparison struct {
	name string // what is compared
	tool string // the tool's command, abbreviated
	ours string // storebench's side
	// Runs, in the order they were made: tool[i] ran just before ours[i].
	toolRuns, ourRuns []sample
}

func median(s []sample, f func(sample) float64) float64 {
	if len(s) == 0 {
		return 0
	}
	v := make([]float64, len(s))
	for i, x := range s {
		v[i] = f(x)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// medians returns the median of each figure, separately.
func medians(s []sample) sample {
	return sample{
		opsS:     median(s, func(x sample) float64 { return x.opsS }),
		clientUs: median(s, func(x sample) float64 { return x.clientUs }),
		serverUs: median(s, func(x sample) float64 { return x.serverUs }),
		secs:     median(s, func(x sample) float64 { return x.secs }),
	}
}

// ratio is the median of the pairs' storebench ÷ tool throughputs: a
// pair ran back to back, so its ratio is what a busy machine's drift
// disturbs least (the ratio of the two medians may set a tool run against
// a storebench run minutes apart).
func (c *comparison) ratio() float64 {
	var r []sample
	for i := range min(len(c.toolRuns), len(c.ourRuns)) {
		if c.toolRuns[i].opsS > 0 {
			r = append(r, sample{opsS: c.ourRuns[i].opsS / c.toolRuns[i].opsS})
		}
	}
	return median(r, func(x sample) float64 { return x.opsS })
}

// pairRatios are the ratios of each A B pair, to show the spread.
func (c *comparison) pairRatios() string {
	var parts []string
	for i := range min(len(c.toolRuns), len(c.ourRuns)) {
		if c.toolRuns[i].opsS > 0 {
			parts = append(parts, fmt.Sprintf("%.2f", c.ourRuns[i].opsS/c.toolRuns[i].opsS))
		}
	}
	return strings.Join(parts, " ")
}

// report records c's medians as the (sub-)benchmark's metrics. ns/op is
// hidden: one iteration is the whole comparison, its time means nothing.
func (c *comparison) report(b *testing.B) {
	t, o := medians(c.toolRuns), medians(c.ourRuns)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(c.ratio(), "ratio")
	b.ReportMetric(o.opsS, "ours-ops/s")
	b.ReportMetric(t.opsS, "tool-ops/s")
	b.ReportMetric(o.clientUs, "ours-client-µs/op")
	b.ReportMetric(t.clientUs, "tool-client-µs/op")
	b.ReportMetric(o.serverUs, "ours-server-µs/op")
	b.ReportMetric(t.serverUs, "tool-server-µs/op")
}

// minMeasured is the least measured time of either side of a pair: a
// shorter run weighs its start (connecting, the first replies) more.
const minMeasured = 3 * time.Second

// timing says, under every table, which part of each side's run its rate
// covers.
const timing = "measured time (s): each side's own clock over its rate, the same for both sides of a pair (storebench runs for the tool's measured time, or both for the same -T/-t), at least 3 s; " +
	"connection set-up excluded on both sides (storebench connects before its measured part; pgbench reports tps without its connection time; memaslap connects and presets its windows before its timed part; " +
	"redis-benchmark starts its timer once its 50 sockets are created, their loopback handshakes finish in its first millisecond); no warm-up excluded on either side (the first second counts on both)"

// machine is the CPU model, kernel and CPU count, printed with every table.
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	kernel := runtime.GOOS
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel += " " + strings.TrimSpace(string(b))
	}
	load := ""
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			load = fmt.Sprintf(", load average %s %s %s", f[0], f[1], f[2])
		}
	}
	return fmt.Sprintf("machine: %s, %d vCPUs, %s%s; %s", model, runtime.NumCPU(), kernel, load, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
}

// table renders the comparisons' medians, one line each, then what each
// side ran.
func table(title string, cs []*comparison) string {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%s (medians of %d interleaved pairs; ratio = the median of the pairs' storebench ÷ tool)\n%s\n", title, *reps, machine())
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "comparison\ttool ops/s\tours ops/s\tratio\tpairs\ttool s\tours s\ttool client µs/op\tours client µs/op\tserver µs/op (tool)\tserver µs/op (ours)\t")
	for _, c := range cs {
		if len(c.toolRuns) == 0 || len(c.ourRuns) == 0 {
			fmt.Fprintf(tw, "%s\t-\t-\t-\tnot measured\t\t\t\t\t\t\t\n", c.name)
			continue
		}
		t, o := medians(c.toolRuns), medians(c.ourRuns)
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.2f\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n",
			c.name, t.opsS, o.opsS, c.ratio(), c.pairRatios(), t.secs, o.secs, t.clientUs, o.clientUs, t.serverUs, o.serverUs)
	}
	tw.Flush()
	fmt.Fprintf(&buf, "  %s\n", timing)
	for _, c := range cs {
		io := ""
		if len(c.ourRuns) > 0 && c.ourRuns[0].clientIO != "" {
			io = ", client I/O " + c.ourRuns[0].clientIO
		}
		fmt.Fprintf(&buf, "  %s: tool `%s` vs storebench %s%s\n", c.name, c.tool, c.ours, io)
	}
	return buf.String()
}

// requireTool returns the path of the first of names found in PATH, and
// fails the benchmark (never skips it) with the install command otherwise.
func requireTool(b *testing.B, pkg string, names ...string) string {
	b.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	b.Fatalf("%s not found in PATH: install it with `sudo apt-get install -y %s` (or `./scripts/install-deps.sh bench`; `make bench` does it)",
		strings.Join(names, " / "), pkg)
	return ""
}

// serverCPU returns the CPU seconds the managed server has used so far.
func serverCPU(srv *server.Server) (float64, error) {
	st, err := srv.Stats()
	if err != nil {
		return 0, err
	}
	return st.CPUSeconds, nil
}

// settle waits until the server's process count has been steady for 100 ms
// (at most 5 s), then returns its CPU seconds so far. A PostgreSQL backend
// whose client has left is still exiting, and its CPU moves from the live
// process to the postmaster's reaped children: a sample taken meanwhile
// would miss it and charge it to the next run. Redis and Memcached are one
// process: this is a 100 ms pause.
func settle(srv *server.Server) (float64, error) {
	const step, steady, limit = 20 * time.Millisecond, 5, 5 * time.Second
	prev, same := -1, 0
	var err error
	testkit.WaitFor(limit, step, func() bool {
		var st server.ProcStats
		if st, err = srv.Stats(); err != nil {
			return true
		}
		if st.Processes == prev {
			same++
		} else {
			prev, same = st.Processes, 0
		}
		return same >= steady
	})
	if err != nil {
		return 0, err
	}
	return serverCPU(srv)
}

// toolRun is what one run of a tool did.
type toolRun struct {
	out string
	// cpu is the child's user+system time (getrusage of the reaped child,
	// all its threads).
	cpu time.Duration
	// serverS is the server's CPU seconds from just before the child
	// started to just after it exited.
	serverS float64
	wall    time.Duration
}

// runTool runs path with args to completion.
func runTool(b *testing.B, srv *server.Server, path string, args ...string) toolRun {
	b.Helper()
	ctx, cancel := context.WithTimeout(b.Context(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	s0, err := settle(srv)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	err = cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		b.Fatalf("%s: %v\nstderr: %s\nstdout: %s", cmd, err, tail(errOut.String()), tail(out.String()))
	}
	s1, err := settle(srv) // the tool's PostgreSQL backends exit after it
	if err != nil {
		b.Fatal(err)
	}
	ps := cmd.ProcessState
	return toolRun{out: out.String(), cpu: ps.UserTime() + ps.SystemTime(), serverS: s1 - s0, wall: wall}
}

// minus removes a baseline run's CPU (a run of the tool that only starts,
// connects and does next to nothing) from r: what the tool and the server
// spend on connections is not per operation, and storebench opens its
// connections before its measured part.
func (r toolRun) minus(base toolRun) toolRun {
	r.cpu = max(r.cpu-base.cpu, 0)
	r.serverS = max(r.serverS-base.serverS, 0)
	return r
}

func tail(s string) string {
	const n = 2000
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// toolSample turns a tool's run into a sample: ops is what the CPU figures
// are divided by.
func toolSample(r toolRun, opsS float64, ops int64, secs float64) sample {
	if ops <= 0 {
		return sample{opsS: opsS, secs: secs}
	}
	return sample{
		opsS:     opsS,
		secs:     secs,
		clientUs: float64(r.cpu.Microseconds()) / float64(ops),
		serverUs: r.serverS * 1e6 / float64(ops),
	}
}

// serverProbe samples a managed server's CPU over a phase's measured part.
// before, if set, runs first, outside the measured part. The engine calls
// Begin and End on the caller's goroutine; errors are kept for runOurs.
type serverProbe struct {
	srv    *server.Server
	ctx    context.Context
	before func(context.Context) error
	t0     float64
	cpuS   float64
	err    error
}

func (p *serverProbe) Begin() {
	if p.before != nil {
		p.err = p.before(p.ctx)
	}
	t0, err := settle(p.srv) // the populating connections have just left
	p.t0, p.err = t0, cmp.Or(p.err, err)
}

func (p *serverProbe) End(*metrics.Phase) {
	t1, err := serverCPU(p.srv)
	p.cpuS, p.err = t1-p.t0, cmp.Or(p.err, err)
}

// runOurs runs storebench's throughput workload for one operation (p must
// name exactly one) and returns its measured phase as a sample. The client
// CPU is the phase's ClientCPUUsPerOp: getrusage of this whole process over
// the measured part (engine, workload, driver, Go runtime).
func runOurs(b *testing.B, srv *server.Server, st store.Store, p throughput.Params, before func(context.Context) error) sample {
	b.Helper()
	if len(p.Operations) != 1 {
		b.Fatalf("runOurs: want one operation, got %v", p.Operations)
	}
	probe := &serverProbe{srv: srv, ctx: b.Context(), before: before}
	phases, err := throughput.Run(b.Context(), st, p, workload.Hooks{Probe: func(string) load.Probe { return probe }})
	if err != nil {
		b.Fatal(err)
	}
	if probe.err != nil {
		b.Fatal(probe.err)
	}
	ph := phases[len(phases)-1]
	if len(ph.Errors) != 0 {
		b.Fatalf("storebench %s: errors %v %v", ph.Name, ph.Errors, ph.ErrorSamples)
	}
	if ph.Ops == 0 {
		b.Fatalf("storebench %s: no operation measured", ph.Name)
	}
	if ph.DurationS < minMeasured.Seconds()*0.99 {
		b.Fatalf("storebench %s: measured %.2f s, less than %s", ph.Name, ph.DurationS, minMeasured)
	}
	return sample{opsS: ph.ThroughputOpsS, clientUs: ph.ClientCPUUsPerOp, serverUs: probe.cpuS * 1e6 / float64(ph.Ops), clientIO: ph.ClientIO, secs: ph.DurationS, p50Us: ph.LatencyUs.P50}
}

// interleave runs tool then ours, -versus.reps times, into c.
func interleave(b *testing.B, c *comparison, tool, ours func() sample) {
	b.Helper()
	if *reps < 1 {
		b.Fatalf("-versus.reps must be at least 1, got %d", *reps)
	}
	for i := range *reps {
		t := tool()
		o := ours()
		c.toolRuns, c.ourRuns = append(c.toolRuns, t), append(c.ourRuns, o)
		b.Logf("%s pair %d: tool %.0f ops/s (client %.1f, server %.1f µs/op), storebench %.0f ops/s (client %.1f, server %.1f µs/op)",
			c.name, i+1, t.opsS, t.clientUs, t.serverUs, o.opsS, o.clientUs, o.serverUs)
	}
	c.report(b)
}

// printTable writes the table to stdout once, after the sub-benchmarks: a
// parent benchmark's b.Log is shown only under -v.
func printTable(s string) { fmt.Print("\n", s, "\n") }

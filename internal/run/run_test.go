package run

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/kinds"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/netem"
	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/scenario"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/workload/all"
)

// needServer fails the test, saying how to install it, when kind's
// binaries are missing (as servertest.Start does).
func needServer(t *testing.T, kind server.Kind) {
	t.Helper()
	if _, err := server.Locate(kind); err != nil {
		t.Fatalf("%v", err)
	}
}

// recorder is an Observer that keeps what it is told and lets a test act
// on an event.
type recorder struct {
	mu       sync.Mutex
	logs     []string
	cells    []CellInfo
	started  []int
	done     []int
	onStart  func(i int)
	onSecond func(cell int)
	cur      int
}

func (r *recorder) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

func (r *recorder) Begin(cells []CellInfo) { r.cells = cells }

func (r *recorder) CellStarted(i int) {
	r.mu.Lock()
	r.started, r.cur = append(r.started, i), i
	r.mu.Unlock()
	if r.onStart != nil {
		r.onStart(i)
	}
}

func (r *recorder) Second(string, metrics.Second) {
	r.mu.Lock()
	cur := r.cur
	r.mu.Unlock()
	if r.onSecond != nil {
		r.onSecond(cur)
	}
}

func (r *recorder) CellDone(i int, _ float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = append(r.done, i)
}

// plan parses a scenario and plans it with options writing under the
// test's own directories.
func plan(t *testing.T, yaml string, opts Options) *Plan {
	t.Helper()
	s, err := scenario.Parse("test.yaml", strings.NewReader(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if opts.Out == "" {
		opts.Out = t.TempDir()
	}
	if opts.DataDir == "" {
		opts.DataDir = servertest.BaseDir(t)
	}
	p, err := NewPlan(context.Background(), kinds.All(), all.Types(), s, opts)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return p
}

// cellOrder lists a result's cells as "id #repeat".
func cellOrder(r *result.Result) []string {
	var order []string
	for _, c := range r.Cells {
		order = append(order, c.Label())
	}
	return order
}

// The result file on disk holds every finished cell before the next one
// starts, and the run ends complete with every cell in plan order.
func TestResultWrittenCellByCell(t *testing.T) {
	p := plan(t, "name: t\ntargets: [memory, files]\nworkloads:\n  - {type: kv, keys: [300, 600]}\n", Options{})
	obs := &recorder{}
	var onDisk []int
	obs.onStart = func(i int) {
		matches, _ := filepath.Glob(filepath.Join(p.opts.Out, "*", "result.json"))
		if len(matches) != 1 {
			t.Fatalf("cell %d: %d result files", i, len(matches))
		}
		r, err := result.Read(matches[0])
		if err != nil {
			t.Fatalf("cell %d: %v", i, err)
		}
		if r.Status != result.StatusRunning {
			t.Errorf("cell %d: status %s on disk, want %s", i, r.Status, result.StatusRunning)
		}
		onDisk = append(onDisk, len(r.Cells))
	}
	o, err := p.Execute(context.Background(), obs)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1, 2, 3}; !slices.Equal(onDisk, want) {
		t.Errorf("cells on disk as each cell started: %v, want %v", onDisk, want)
	}
	want := []string{"memory/kv/keys=300", "memory/kv/keys=600", "files/kv/keys=300", "files/kv/keys=600"}
	if got := cellOrder(o.Result); !slices.Equal(got, want) {
		t.Errorf("cells %v, want %v", got, want)
	}
	if o.Result.Status != result.StatusComplete || o.Failed != 0 || o.Interrupted || o.Cells != 4 {
		t.Errorf("outcome: status %s, failed %d, interrupted %v, cells %d", o.Result.Status, o.Failed, o.Interrupted, o.Cells)
	}
	if !slices.Equal(obs.started, []int{0, 1, 2, 3}) || !slices.Equal(obs.done, []int{0, 1, 2, 3}) {
		t.Errorf("observer: started %v, done %v", obs.started, obs.done)
	}
	if _, err := os.Stat(o.Report); err != nil || o.ReportErr != nil {
		t.Errorf("report.html: %v %v", err, o.ReportErr)
	}
}

// --repeat runs a target's cells in rounds: all of them, then all again,
// before the next target; the observer is told each round's label.
func TestRepeatRunsInRounds(t *testing.T) {
	two := 2
	p := plan(t, "name: t\ntargets: [memory, files]\nworkloads:\n  - {type: kv, keys: [100, 200]}\n", Options{Repeat: &two})
	obs := &recorder{}
	o, err := p.Execute(context.Background(), obs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"memory/kv/keys=100 #1", "memory/kv/keys=200 #1", "memory/kv/keys=100 #2", "memory/kv/keys=200 #2",
		"files/kv/keys=100 #1", "files/kv/keys=200 #1", "files/kv/keys=100 #2", "files/kv/keys=200 #2",
	}
	if got := cellOrder(o.Result); !slices.Equal(got, want) {
		t.Errorf("cells:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var labels []string
	for _, c := range obs.cells {
		labels = append(labels, c.Label)
	}
	if !slices.Equal(labels, want) || o.Result.Repeat != 2 {
		t.Errorf("observer's cells %v, result's repeat %d", labels, o.Result.Repeat)
	}
}

// brokenFiles plans kv on a files store named by URL, then removes its
// directory, so that every start of that target fails in the store's own
// open, after the plan checked the directory.
func brokenFiles(t *testing.T, failFast bool) (o *Outcome, label string) {
	t.Helper()
	dir := t.TempDir()
	gone := filepath.Join(dir, "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	p := plan(t, "name: t\ntargets: [file://"+gone+", memory]\nworkloads:\n  - {type: kv, keys: [100, 200]}\n", Options{FailFast: failFast})
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gone, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := p.Execute(context.Background(), &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	return o, "files@file://" + gone
}

// A target that cannot start fails its cells, recorded with the error, and
// the run goes on with the next target; with FailFast it stops there.
func TestFailedCellsAndFailFast(t *testing.T) {
	o, files := brokenFiles(t, false)
	var got []string
	for _, c := range o.Result.Cells {
		got = append(got, c.ID+" "+c.Status)
		if c.Status == result.CellFailed && c.Error == "" {
			t.Errorf("%s failed without its error", c.ID)
		}
	}
	want := []string{files + "/kv/keys=100 " + result.CellFailed, files + "/kv/keys=200 " + result.CellFailed, "memory/kv/keys=100 " + result.CellOK, "memory/kv/keys=200 " + result.CellOK}
	if !slices.Equal(got, want) || o.Failed != 2 || o.Result.Status != result.StatusFailed {
		t.Errorf("cells %v (failed %d, status %s), want %v", got, o.Failed, o.Result.Status, want)
	}

	o, _ = brokenFiles(t, true)
	if len(o.Result.Cells) != 1 || o.Failed != 1 || o.Result.Status != result.StatusFailed {
		t.Errorf("fail-fast: %v, failed %d, status %s; want the first cell alone", cellOrder(o.Result), o.Failed, o.Result.Status)
	}
}

// A run cancelled half-way through a cell keeps the finished cells, not
// the half-run one, and ends interrupted.
func TestInterruptKeepsFinishedCells(t *testing.T) {
	p := plan(t, `name: t
targets: [memory]
workloads:
  - {type: hotkey, name: short, load: {ops: 100}}
  - {type: hotkey, name: long, load: {ops: 1000000000000}}
`, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	obs := &recorder{onSecond: func(cell int) {
		if cell == 1 {
			cancel()
		}
	}}
	o, err := p.Execute(ctx, obs)
	if err != nil {
		t.Fatal(err)
	}
	if got := cellOrder(o.Result); !slices.Equal(got, []string{"memory/short"}) || !o.Interrupted || o.Result.Status != result.StatusInterrupted {
		t.Errorf("cells %v, interrupted %v, status %s; want the short cell alone, interrupted", got, o.Interrupted, o.Result.Status)
	}
}

// A managed server killed in the middle of a cell fails that cell, with the
// server's log tail and what was measured until then; the run goes on, the
// next cell of that target gets a fresh server, and nothing is left behind.
func TestServerDyingMidRun(t *testing.T) {
	needServer(t, server.Redis)
	data := servertest.BaseDir(t)
	p := plan(t, "name: t\ntargets: [redis, memory]\nworkloads:\n  - {type: kv, keys: [3000000, 1000]}\n", Options{DataDir: data})
	var pid int
	obs := &recorder{onStart: func(i int) {
		if i != 0 {
			return
		}
		matches, _ := filepath.Glob(filepath.Join(p.opts.Out, "*", "result.json"))
		r, err := result.Read(matches[0])
		if err != nil || len(r.Targets) != 1 || r.Targets[0].ServerPID == 0 {
			t.Errorf("no managed redis recorded before its first cell: %v %+v", err, r)
			return
		}
		pid = r.Targets[0].ServerPID
		go func() {
			time.Sleep(700 * time.Millisecond) // well into the 3M-key write phase
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Error(err)
			}
		}()
	}}
	o, err := p.Execute(context.Background(), obs)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Result.Cells) != 4 || o.Failed != 1 || o.Result.Status != result.StatusFailed {
		t.Fatalf("cells %v, failed %d, status %s; want 4 cells, the first failed", cellOrder(o.Result), o.Failed, o.Result.Status)
	}
	dead := o.Result.Cells[0]
	if dead.Status != result.CellFailed || !strings.Contains(dead.Error, "died") || dead.ServerLog == "" {
		t.Errorf("killed cell: status %s error %q log tail %q", dead.Status, dead.Error, dead.ServerLog)
	}
	if len(dead.Phases) == 0 || dead.Phases[0].Ops == 0 {
		t.Errorf("killed cell keeps no partial metrics: %+v", dead.Phases)
	}
	for _, c := range o.Result.Cells[1:] {
		if c.Status != result.CellOK {
			t.Errorf("cell %s after the failure: %s %s", c.ID, c.Status, c.Error)
		}
	}
	if ts := o.Result.Targets; len(ts) < 2 || ts[1].Name != "redis" || ts[1].ServerPID == pid {
		t.Errorf("the next redis cell should run on a fresh server: targets %+v", ts)
	}
	if procs := servertest.ProcessesUnder(data); len(procs) > 0 {
		t.Errorf("processes left: %v", procs)
	}
	if entries, _ := os.ReadDir(data); len(entries) > 0 {
		t.Errorf("left in the data dir: %v", entries)
	}
}

// proxyGone checks that nothing listens on a proxy's address any more.
func proxyGone(t *testing.T, addr string) {
	t.Helper()
	ls, err := netem.Listeners()
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(ls, addr) {
		t.Errorf("proxy %s still listening (/proc/self/net/tcp)", addr)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("dial %s: the proxy still answers", addr)
	}
}

// A run whose second cell is cancelled half-way behind a 1 ms network
// closes its proxy: nothing listens on the address the first cell recorded.
func TestNetworkInterrupted(t *testing.T) {
	needServer(t, server.Redis)
	p := plan(t, `name: net-interrupt
targets: [redis]
workloads:
  - {type: hotkey, name: short, load: {clients: 1, ops: 50, rtt: 1ms}}
  - {type: hotkey, name: long, load: {clients: 1, ops: 10000000, rtt: 1ms}}
`, Options{NetMechanism: "proxy"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o, err := p.Execute(ctx, &recorder{onSecond: func(cell int) {
		if cell == 1 {
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Result.Cells) != 1 || !o.Interrupted {
		t.Fatalf("cells %v, interrupted %v; want the short cell alone, interrupted", cellOrder(o.Result), o.Interrupted)
	}
	proxyGone(t, recordedProxy(t, o.Result.Cells[0]))

	// A run that ends on its own closes its proxy too.
	p = plan(t, "name: t\ntargets: [redis]\nworkloads:\n  - {type: hotkey, load: {clients: 1, ops: 50, rtt: 1ms}}\n", Options{NetMechanism: "proxy"})
	if o, err = p.Execute(context.Background(), &recorder{}); err != nil || len(o.Result.Cells) != 1 {
		t.Fatalf("%v, cells %v", err, o)
	}
	proxyGone(t, recordedProxy(t, o.Result.Cells[0]))
}

// recordedProxy is the proxy address a cell behind a network recorded.
func recordedProxy(t *testing.T, c result.Cell) string {
	t.Helper()
	proxy, _ := c.Params["net_proxy"].(string)
	if proxy == "" {
		t.Fatalf("cell %s recorded no proxy: %v", c.ID, c.Params)
	}
	return proxy
}

// A cell on two targets: the cache (a target of the scenario with no cell
// of its own) is started beside the database for that cell, recorded
// among the run's targets, and gone when the cell ends.
func TestCompanionStartsBesideItsCell(t *testing.T) {
	p := plan(t, `name: t
targets: [files, {name: cache, store: memory}]
workloads:
  - type: cache-aside
    targets: [files]
    cache_aside: {caches: [none, cache], keys: 200}
load: {clients: 2, ops: 400}
`, Options{})
	obs := &recorder{}
	o, err := p.Execute(context.Background(), obs)
	if err != nil {
		t.Fatal(err)
	}
	if o.Failed != 0 || len(o.Result.Cells) != 2 {
		t.Fatalf("%d cells, %d failed: %+v", len(o.Result.Cells), o.Failed, cellOrder(o.Result))
	}
	alone, cached := o.Result.Cells[0], o.Result.Cells[1]
	if alone.ID != "files/cache-aside/cache=none" || cached.ID != "files/cache-aside/cache=cache" {
		t.Fatalf("cells %s, %s: want the database alone, then with its cache", alone.ID, cached.ID)
	}
	if alone.CacheAside == nil || cached.CacheAside == nil || alone.CacheAside.CacheUsed || !cached.CacheAside.CacheUsed {
		t.Fatalf("summaries %+v / %+v: want no cache, then the cache used", alone.CacheAside, cached.CacheAside)
	}
	var names []string
	for _, tg := range o.Result.Targets {
		names = append(names, tg.Name)
	}
	if strings.Join(names, ",") != "files,cache" {
		t.Errorf("targets recorded %v, want files and its companion cache", names)
	}
	if !strings.Contains(strings.Join(obs.logs, "\n"), "starting cache beside it") {
		t.Errorf("the log does not say the cache was started beside its cell: %v", obs.logs)
	}
}

// Each cell runs with the client threads chosen for its target, and its
// result records how many and why: all the client's CPUs beside an
// in-process store, one fewer beside one-threaded Redis sharing them, and
// --client-threads for every cell when given.
func TestCellsRecordTheirClientThreads(t *testing.T) {
	needServer(t, server.Redis)
	procs := runtime.GOMAXPROCS(0)
	if procs < 2 {
		t.Fatalf("this test needs GOMAXPROCS 2 or more to tell the choices apart, got %d", procs)
	}
	const yaml = "name: t\ntargets: [memory, redis]\nworkloads:\n  - {type: kv, keys: [100]}\n"
	one := 1
	for _, c := range []struct {
		name     string
		opts     Options
		memory   int
		memWhy   string
		redis    int
		redisWhy string
	}{
		{"chosen", Options{}, procs, "one per client CPU; the store runs inside storebench",
			procs - 1, fmt.Sprintf("redis (one-threaded) shares %d CPUs with the client; 1 CPU is left to it", procs)},
		{"--client-threads", Options{ClientThreads: &one}, 1, "--client-threads 1 (user)", 1, "--client-threads 1 (user)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			obs := &recorder{}
			var during []int // GOMAXPROCS as each cell started
			obs.onStart = func(int) { during = append(during, runtime.GOMAXPROCS(0)) }
			o, err := plan(t, yaml, c.opts).Execute(context.Background(), obs)
			if err != nil {
				t.Fatal(err)
			}
			if len(o.Result.Cells) != 2 || o.Failed != 0 {
				t.Fatalf("%d cells, %d failed", len(o.Result.Cells), o.Failed)
			}
			for i, want := range []struct {
				n   int
				why string
			}{{c.memory, c.memWhy}, {c.redis, c.redisWhy}} {
				rc := o.Result.Cells[i]
				if rc.ClientThreads != want.n || !strings.Contains(rc.ClientThreadsWhy, want.why) {
					t.Errorf("%s: client threads %d %q, want %d …%q", rc.ID, rc.ClientThreads, rc.ClientThreadsWhy, want.n, want.why)
				}
				if during[i] != want.n {
					t.Errorf("%s: GOMAXPROCS %d during the cell, want %d", rc.ID, during[i], want.n)
				}
			}
			if got := runtime.GOMAXPROCS(0); got != procs {
				t.Errorf("GOMAXPROCS %d after the run, want %d as before", got, procs)
			}
		})
	}
}

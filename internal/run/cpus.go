package run

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/target"
)

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
		return nil, inputf("%s: %v", c.origin, err)
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// pickCPUs takes the flag's list, else the scenario's. Where the scenario's
// cannot be applied (not Linux, or CPUs a cpuset leaves out) it is dropped,
// to be said, rather than refusing a suite; a flag still fails there.
func pickCPUs(flagList, flag, scenarioList, field, source string) cpuChoice {
	switch {
	case flagList == Unpinned:
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

// threadFacts is what a cell's client threads (GOMAXPROCS) are chosen
// from: the override asked for, the CPUs the client may use, and the
// managed server's thread model and the CPUs it shares with the client.
type threadFacts struct {
	asked, scenario int // --client-threads, the scenario's client_threads; 0: not given
	clientCPUs      int // CPUs the client may use
	// server is the managed server's kind, "" when the store runs inside
	// storebench or is reached by URL (external).
	server   server.Kind
	external bool
	// serverThreads is how many threads the managed server runs commands
	// on (Redis's io-threads, memcached -t); 0 when it serves each
	// connection on a process or thread of its own (PostgreSQL, MariaDB).
	serverThreads int
	sharedCPUs    int // CPUs the server and the client may both run on
}

// chooseClientThreads returns a cell's client threads and why, in words
// the result records. An override wins. Otherwise the client takes one
// thread per CPU it may use, except beside a managed server that runs on
// a few threads: the client leaves them as many of the CPUs it shares
// with them, unless that leaves it none. Measured on the 2-CPU VM against
// one-threaded Redis: with 2 client threads the second competed with Redis for its CPU
// (-P 16 GET 0.69× redis-benchmark; with 1 thread 1.0×, and -c 50 GET
// 1.22× against 1.03×). A server whose threads can take every client CPU
// (memcached's 4 on 2 CPUs, PostgreSQL's backends) is left to the
// scheduler, as the field's tools do (memaslap -T, pgbench -j: a thread
// per client CPU); PostgreSQL point reads drove less with one client
// thread (internal/bench), and memcached gets at 50 connections were no
// cheaper with one (client CPU 9.9–14.5 µs per get against 10.3–13.9 with
// two; 0.73–0.86× memaslap -T 1 against 0.61–1.15×: three interleaved runs
// of 3 pairs each way, 2026-11-24, load average 4–8 from other work).
func chooseClientThreads(f threadFacts) (int, string) {
	perCPU := max(f.clientCPUs, 1)
	switch {
	case f.asked > 0:
		return f.asked, fmt.Sprintf("--client-threads %d (user)", f.asked)
	case f.scenario > 0:
		return f.scenario, fmt.Sprintf("client_threads %d (scenario)", f.scenario)
	case f.external:
		return perCPU, fmt.Sprintf("%d: one per client CPU; the server is not managed here, its threads are unknown", perCPU)
	case f.server == "":
		return perCPU, fmt.Sprintf("%d: one per client CPU; the store runs inside storebench", perCPU)
	case f.serverThreads == 0:
		model := "a thread"
		if f.server == server.Postgres {
			model = "a process"
		}
		return perCPU, fmt.Sprintf("%d: one per client CPU; %s serves each connection on %s of its own", perCPU, f.server, model)
	case f.sharedCPUs == 0:
		return perCPU, fmt.Sprintf("%d: one per client CPU; %s runs on other CPUs", perCPU, f.server)
	}
	threads := "one-threaded"
	if f.serverThreads > 1 {
		threads = fmt.Sprintf("%d threads", f.serverThreads)
	}
	left := min(f.serverThreads, f.sharedCPUs)
	n := perCPU - left
	if n < 1 {
		return perCPU, fmt.Sprintf("%d: one per client CPU; %s (%s) shares every one of them", perCPU, f.server, threads)
	}
	isAre := "is"
	if left > 1 {
		isAre = "are"
	}
	return n, fmt.Sprintf("%d: %s (%s) shares %s with the client; %s %s left to it", n, f.server, threads, cpuCount(f.sharedCPUs), cpuCount(left), isAre)
}

func cpuCount(n int) string {
	if n == 1 {
		return "1 CPU"
	}
	return fmt.Sprintf("%d CPUs", n)
}

// threadPolicy is what the run knows of client threads before any cell.
type threadPolicy struct {
	asked, scenario int
	clientCPUs      []int // pinned; nil: every CPU this process may use
	runtimeDefault  int   // GOMAXPROCS before the run changed it
}

// outsideCells is the GOMAXPROCS between cells: as beside a store that
// runs inside storebench.
func (p threadPolicy) outsideCells() int {
	n, _ := chooseClientThreads(threadFacts{asked: p.asked, scenario: p.scenario, clientCPUs: p.clientCPUCount()})
	return n
}

// clientCPUCount is how many CPUs the client may use: its pinned ones, else
// the runtime's own GOMAXPROCS (which also heeds a container's CPU limit).
func (p threadPolicy) clientCPUCount() int {
	if len(p.clientCPUs) == 0 {
		return p.runtimeDefault
	}
	return len(p.clientCPUs)
}

// facts are the policy's facts for a cell on inst.
func (p threadPolicy) facts(inst *target.Instance) threadFacts {
	f := threadFacts{asked: p.asked, scenario: p.scenario, clientCPUs: p.clientCPUCount()}
	srv := inst.Server
	if c := inst.Cluster; c != nil && len(c.Nodes) > 0 {
		// The nodes run one plan, pinned alike: the first stands for them,
		// and their command threads add up.
		srv = c.Nodes[0]
		for _, n := range c.Nodes {
			t := serverThreads(n)
			if t == 0 {
				f.serverThreads = 0
				break
			}
			f.serverThreads += t
		}
	} else if srv != nil {
		f.serverThreads = serverThreads(srv)
	}
	if srv == nil {
		// A URL to a server kind; sqlite:// and file:// run inside storebench.
		f.external = !inst.Spec.Managed() && inst.Kind.Server != ""
		return f
	}
	f.server = srv.Kind
	serverCPUs, err := server.ParseCPUList(srv.CPUs)
	if err != nil || len(serverCPUs) == 0 {
		serverCPUs = nil // unpinned: it may run anywhere
	}
	f.sharedCPUs = sharedCPUs(p.clientCPUs, serverCPUs, runtime.NumCPU())
	return f
}

// serverThreads is how many threads srv runs commands on, read from its
// settings; 0 for a process or thread per connection.
func serverThreads(srv *server.Server) int {
	setting := map[server.Kind]string{server.Redis: "io-threads", server.Valkey: "io-threads", server.Memcached: "num_threads"}[srv.Kind]
	if setting == "" {
		return 0
	}
	n, err := strconv.Atoi(srv.Settings[setting])
	if err != nil || n < 1 {
		return 1 // Redis's default; memcached always reports num_threads
	}
	return n
}

// sharedCPUs counts the CPUs two lists have in common, nil being every one
// of all.
func sharedCPUs(a, b []int, all int) int {
	switch {
	case a == nil && b == nil:
		return all
	case a == nil:
		return len(b)
	case b == nil:
		return len(a)
	}
	n := 0
	for _, c := range a {
		if slices.Contains(b, c) {
			n++
		}
	}
	return n
}

// DefaultClientThreads is the client threads a run gives a cell beside
// the managed server srv when nothing overrides them and the client is
// not pinned (clientCPUs: the CPUs it may use), and why: the same rule,
// for internal/bench's comparisons at storebench's defaults.
func DefaultClientThreads(srv *server.Server, clientCPUs int) (int, string) {
	p := threadPolicy{runtimeDefault: clientCPUs}
	return chooseClientThreads(p.facts(&target.Instance{Server: srv}))
}

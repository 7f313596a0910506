package bench

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/storebench/storebench/internal/run"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/workload/throughput"
)

// BenchmarkVersusDefaults compares storebench and each tool as a user runs
// them, at both sides' defaults: nothing pinned, each tool with its own
// thread count (redis-benchmark one event loop, memaslap -T 1, pgbench -j 1
// and its simple query protocol, which also vacuums its tables first), and
// storebench with the client threads its run chooses beside that server
// (run.DefaultClientThreads: one beside a one-threaded Redis on 2 CPUs, a
// thread per CPU beside memcached's 4 threads and PostgreSQL's backends).
// The load is matched as in the tuned comparisons (the other Versus
// benchmarks, which pin and set the threads alike on both sides):
// keyspace, value size, requests or duration, clients, pipeline depth.
// memtier_benchmark is not in Debian 12's repositories and is left out.
func BenchmarkVersusDefaults(b *testing.B) {
	var rows []*comparison
	b.Run("redis", func(b *testing.B) {
		tool := requireTool(b, "redis-tools", "redis-benchmark")
		srv, st := startRedis(b, "")
		placed := defaultThreads(b, srv)
		for _, depth := range []int{1, 16} {
			rows = append(rows, redisRow(b, srv, st, tool, throughput.OpGet, depth, 0, fmt.Sprintf("P%d/get", depth), placed))
		}
	})
	b.Run("memcached", func(b *testing.B) {
		tool := requireTool(b, "libmemcached-tools", "memcaslap", "memaslap")
		srv := servertest.Start(b, server.Memcached, server.Options{})
		placed := defaultThreads(b, srv)
		rows = append(rows, memaslapRow(b, srv, openMemcached(b, srv), tool, nil, placed))
	})
	b.Run("postgres", func(b *testing.B) {
		pg := startPg(b, "")
		placed := defaultThreads(b, pg.srv)
		for _, clients := range []int{8, 50} {
			rows = append(rows, pg.row(b, clients, "", nil, placed))
		}
	})
	printTable(table("at both sides' defaults: storebench throughput vs each tool as a user runs it", rows))
}

// defaultThreads sets GOMAXPROCS, until b ends, to the client threads a
// storebench run gives a cell beside srv by default, and says so.
func defaultThreads(b *testing.B, srv *server.Server) string {
	n, why := run.DefaultClientThreads(srv, runtime.NumCPU())
	prev := runtime.GOMAXPROCS(n)
	b.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	return fmt.Sprintf("GOMAXPROCS %s; unpinned", why)
}

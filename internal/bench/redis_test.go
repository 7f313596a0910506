package bench

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store/redis"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/throughput"
)

// BenchmarkVersusRedisBenchmark compares storebench's throughput workload
// with redis-benchmark -t set|get -c 50 -r 100000 -d 3 [-P 16] on one
// managed Redis without persistence (profile "none").
//
// Matched: 50 connections, 3-byte values, keys drawn uniformly at random
// from 100,000, the same measured time (see redisRow), no warm-up, and
// for GET a keyspace fully written beforehand on both sides (storebench's
// workload writes it, unmeasured; redis-benchmark's key:000000000000 ..
// key:000000099999 are written here before its GET runs, since its own -t
// get would read keys it never set and time nil replies). Each operation is
// a run of its own on both sides, so CPU is per operation.
// Differences: the keys' spelling (storebench:vs:key:0000000042, 28 bytes,
// vs key:000000000042, 16 bytes); redis-benchmark is one thread with an
// event loop (its default), storebench one goroutine per connection over
// rueidis with as many threads (GOMAXPROCS 1; -versus.threads sets both
// sides, redis-benchmark's through --threads); storebench checks every GET's
// value byte for byte, redis-benchmark reads the reply and drops it.
func BenchmarkVersusRedisBenchmark(b *testing.B) {
	tool := requireTool(b, "redis-tools", "redis-benchmark")
	clientCPUs, serverCPUs := placement("0", "1")
	srv, st := startRedis(b, serverCPUs)
	// redis-benchmark is one event loop unless given --threads; storebench
	// gets as many threads (GOMAXPROCS).
	nThreads := clientThreads(b, 1, clientCPUs)
	var rows []*comparison
	for _, depth := range []int{1, 16} {
		for _, op := range throughput.Ops {
			placed := fmt.Sprintf("GOMAXPROCS %d; client CPUs %q, server CPUs %q", nThreads, clientCPUs, serverCPUs)
			rows = append(rows, redisRow(b, srv, st, tool, op, depth, nThreads, fmt.Sprintf("P%d/%s", depth, op), placed))
		}
	}
	printTable(table("storebench throughput vs redis-benchmark", rows))
}

// startRedis starts a managed Redis without persistence on serverCPUs
// ("": unpinned) and opens storebench's store on it.
func startRedis(b *testing.B, serverCPUs string) (*server.Server, *redis.Store) {
	b.Helper()
	srv := servertest.Start(b, server.Redis, server.Options{Profile: "none", CPUs: serverCPUs})
	st, err := redis.New(context.Background(), redis.Config{URL: srv.URL, Namespace: namespace})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close(context.Background()) })
	return srv, st
}

// Redis comparisons' load: 50 connections, 3-byte values over 100,000 keys.
const (
	redisClients  = 50
	redisKeyspace = 100000
	redisValue    = 3
)

// redisRow runs one comparison, as sub-benchmark sub: redis-benchmark -t
// op -c 50 [-P depth] [--threads threads, when above 1] against
// storebench's throughput op phase on st, at the GOMAXPROCS the caller
// set; placed says how both sides were placed, for the table.
//
// redis-benchmark has no duration flag, only a request count (-n): a short
// calibration run picks the -n that lasts about redisTarget, and each of
// storebench's runs lasts what the tool's run before it measured (its
// requests ÷ its rate), so both rates are over the same time.
func redisRow(b *testing.B, srv *server.Server, st *redis.Store, tool, op string, depth, threads int, sub, placed string) *comparison {
	b.Helper()
	host, port, err := net.SplitHostPort(srv.Addr)
	if err != nil {
		b.Fatal(err)
	}
	args := func(n int64) []string {
		a := []string{"-h", host, "-p", port, "-t", op, "-c", strconv.Itoa(redisClients), "-n", strconv.FormatInt(n, 10),
			"-r", strconv.Itoa(redisKeyspace), "-d", strconv.Itoa(redisValue), "--csv"}
		if threads > 1 {
			a = append(a, "--threads", strconv.Itoa(threads))
		}
		if depth > 1 {
			a = append(a, "-P", strconv.Itoa(depth))
		}
		return a
	}
	c := &comparison{
		name: fmt.Sprintf("redis %s -c %d -P %d", strings.ToUpper(op), redisClients, depth),
		ours: fmt.Sprintf("throughput %s, %d clients, pipeline %d, for the tool's measured time, keyspace %d, %d-byte values, %s", op, redisClients, depth, redisKeyspace, redisValue, placed),
	}
	b.Run(sub, func(b *testing.B) {
		if op == throughput.OpGet {
			fillRedisBenchmarkKeys(b, srv.Addr, redisKeyspace, redisValue)
		}
		n := int64(50000 * depth) // calibration: well under a second
		run := func(n int64) (toolRun, float64, float64) {
			r := runTool(b, srv, tool, args(n)...)
			rps := parseRedisCSV(b, r.out, strings.ToUpper(op))
			return r, rps, float64(n) / rps
		}
		_, rps, _ := run(n)
		n = redisRequests(rps)
		c.tool = "redis-benchmark " + strings.Join(args(n)[4:], " ") + " (-n from a calibration run, for about 4 s)"
		var secs float64 // the tool's last measured time: storebench's next duration
		interleave(b, c, func() sample {
			r, rps, s := run(n)
			for s < minMeasured.Seconds() { // the machine got faster: run longer
				n = redisRequests(rps)
				r, rps, s = run(n)
			}
			secs = s
			return toolSample(r, rps, n, s)
		}, func() sample {
			d := time.Duration(secs * float64(time.Second))
			p := throughput.Params{Keyspace: workload.Keyspace{Keys: redisKeyspace, ValueSize: redisValue}, Operations: []string{op},
				Load: workload.Load{Clients: redisClients, Pipeline: depth, Duration: d}}
			return runOurs(b, srv, st, p, nil)
		})
	})
	return c
}

// redisTarget is the measured time redis-benchmark's -n is chosen for:
// enough above minMeasured that a faster run still lasts 3 s.
const redisTarget = 4 * time.Second

// redisRequests is the -n that lasts redisTarget at rps, in whole
// thousands.
func redisRequests(rps float64) int64 {
	return max(int64(rps*redisTarget.Seconds()/1000), 1) * 1000
}

// parseRedisCSV returns the requests per second of test in redis-benchmark's
// --csv output ("SET","123456.79",...).
func parseRedisCSV(b *testing.B, out, test string) float64 {
	b.Helper()
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		b.Fatalf("redis-benchmark --csv: %v\n%s", err, tail(out))
	}
	for _, r := range recs {
		if len(r) >= 2 && r[0] == test {
			v, err := strconv.ParseFloat(r[1], 64)
			if err != nil {
				b.Fatalf("redis-benchmark --csv: rps %q: %v", r[1], err)
			}
			return v
		}
	}
	b.Fatalf("redis-benchmark --csv: no %s line in\n%s", test, tail(out))
	return 0
}

// fillRedisBenchmarkKeys writes the keys redis-benchmark -r keyspace reads
// (key:%012d) with values of size bytes, pipelined on one connection.
func fillRedisBenchmarkKeys(b *testing.B, addr string, keyspace, size int) {
	b.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(time.Minute)); err != nil {
		b.Fatal(err)
	}
	w, r := bufio.NewWriter(conn), bufio.NewReader(conn)
	val := strings.Repeat("x", size)
	const chunk = 10000
	for start := 0; start < keyspace; start += chunk {
		end := min(start+chunk, keyspace)
		for i := start; i < end; i++ {
			key := fmt.Sprintf("key:%012d", i)
			fmt.Fprintf(w, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(key), key, len(val), val)
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		for i := start; i < end; i++ {
			line, err := r.ReadString('\n')
			if err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				b.Fatal(err)
			}
			if line != "+OK\r\n" {
				b.Fatalf("SET key:%012d: %q", i, line)
			}
		}
	}
}

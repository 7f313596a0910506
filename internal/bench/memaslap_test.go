package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store/memcached"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/throughput"
)

// memaslap settings. Each memaslap connection ("concurrency") reads from a
// window of its own objects, which it writes before the timed part:
// 50 × 2048 = 102,400 keys, storebench's keyspace.
const (
	mcClients  = 50
	mcWindow   = 2048
	mcKeyspace = mcClients * mcWindow
	mcValue    = 3
	mcDuration = 3 * time.Second
)

// BenchmarkVersusMemaslap compares Memcached gets: memaslap (Debian's
// memcaslap, libmemcached-tools) get-only (its config's cmd line "1 1.0")
// with storebench's throughput workload's get phase, on one managed
// memcached (4 threads, the default profile). Both sides run on the same
// client CPUs, the server on others (-versus.client-cpus, -versus.server-cpus).
//
// Matched: 50 connections, ASCII protocol single gets, 3-byte values, keys
// of the same length as storebench's "sb:vs:<gen>:key:0000000042" (22
// bytes), ~100,000 keys all written before the timed part (memaslap presets
// its windows, storebench populates its keyspace), no miss, a 3 s timed
// part. Differences: memaslap's keys are random strings and each connection
// reads only its own 2,048, whereas storebench's 50 clients share one
// keyspace; memaslap's figures are from its "Get Statistics" Global line,
// and its CPU per op divides its whole run's CPU (preset included) by every
// command it sent (cmd_get + cmd_set), since the preset sets are round trips
// like its gets; the server's CPU per op likewise. storebench checks every
// value read.
func BenchmarkVersusMemaslap(b *testing.B) {
	tool := requireTool(b, "libmemcached-tools", "memcaslap", "memaslap")
	clientCPUs, serverCPUs := placement("", "")
	srv := servertest.Start(b, server.Memcached, server.Options{CPUs: serverCPUs})
	nThreads := clientThreads(b, 0, clientCPUs) // memaslap -T: a thread per client CPU, as its manual advises (and as GOMAXPROCS)
	st := openMemcached(b, srv)
	placed := fmt.Sprintf("GOMAXPROCS %d; client CPUs %q, server CPUs %q", nThreads, clientCPUs, serverCPUs)
	c := memaslapRow(b, srv, st, tool, []string{"-T", strconv.Itoa(nThreads)}, placed)
	printTable(table("storebench throughput get vs memaslap", []*comparison{c}))
}

func openMemcached(b *testing.B, srv *server.Server) *memcached.Store {
	b.Helper()
	st, err := memcached.New(context.Background(), memcached.Config{URL: srv.URL, Namespace: namespace})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close(context.Background()) })
	return st
}

// memaslapRow runs one comparison, as sub-benchmark "get": memaslap get-only
// with threads (-T N, or none: its default, one) against storebench's
// throughput get phase, at the GOMAXPROCS the caller set; placed says how
// both sides were placed.
func memaslapRow(b *testing.B, srv *server.Server, st *memcached.Store, tool string, threads []string, placed string) *comparison {
	b.Helper()
	keyLen := len("sb:" + namespace + ":1:key:0000000000")
	cfg := filepath.Join(b.TempDir(), "memaslap.cnf")
	conf := fmt.Sprintf("key\n%d %d 1\nvalue\n%d %d 1\ncmd\n0 0\n1 1.0\n", keyLen, keyLen, mcValue, mcValue)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		b.Fatal(err)
	}
	secs := strconv.Itoa(int(mcDuration / time.Second))
	args := append(append([]string{"-s", srv.Addr, "-F", cfg}, threads...), "-c", strconv.Itoa(mcClients),
		"-w", strconv.Itoa(mcWindow/1024)+"k", "-t", secs+"s", "-S", secs+"s")
	c := &comparison{
		name: fmt.Sprintf("memcached GET -c %d", mcClients),
		tool: fmt.Sprintf("%s %s (key %d B, value %d B, get 1.0)", filepath.Base(tool), strings.Join(args[4:], " "), keyLen, mcValue),
		ours: fmt.Sprintf("throughput get, %d clients, %s, keyspace %d, %d-byte values, %s", mcClients, mcDuration, mcKeyspace, mcValue, placed),
	}
	p := throughput.Params{Keyspace: workload.Keyspace{Keys: mcKeyspace, ValueSize: mcValue}, Operations: []string{throughput.OpGet},
		Load: workload.Load{Clients: mcClients, Duration: mcDuration}}
	b.Run("get", func(b *testing.B) {
		interleave(b, c, func() sample {
			r := runTool(b, srv, tool, args...)
			m := parseMemaslap(b, r.out)
			if m.misses != 0 {
				b.Fatalf("memaslap: %d get misses", m.misses)
			}
			return toolSample(r, m.getOpsS, m.gets+m.sets, m.secs)
		}, func() sample {
			return runOurs(b, srv, st, p, nil)
		})
	})
	return c
}

type memaslapResult struct {
	getOpsS            float64
	secs               float64 // its Get Statistics' time, whole seconds
	gets, sets, misses int64
}

// parseMemaslap reads the last "Global" line of the "Get Statistics" block
// (Type Time(s) Ops TPS(ops/s) ...) and the command totals.
func parseMemaslap(b *testing.B, out string) memaslapResult {
	b.Helper()
	var r memaslapResult
	section := ""
	for _, line := range strings.Split(out, "\n") {
		if i := strings.LastIndex(line, "\x1b[2J"); i >= 0 { // drop the screen-clearing escape
			line = line[i+len("\x1b[2J"):]
		}
		line = strings.TrimSpace(line)
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch {
		case strings.HasSuffix(line, "Statistics"):
			section = f[0]
		case f[0] == "Global" && section == "Get" && len(f) >= 4:
			v, err := strconv.ParseFloat(f[3], 64)
			if err != nil {
				b.Fatalf("memaslap: %q: %v", line, err)
			}
			r.getOpsS = v
			if r.secs, err = strconv.ParseFloat(f[1], 64); err != nil {
				b.Fatalf("memaslap: %q: %v", line, err)
			}
		case len(f) == 2 && strings.HasSuffix(f[0], ":"):
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				continue
			}
			switch f[0] {
			case "cmd_get:":
				r.gets = n
			case "cmd_set:":
				r.sets = n
			case "get_misses:":
				r.misses = n
			}
		}
	}
	if r.getOpsS == 0 || r.gets == 0 {
		b.Fatalf("memaslap: no Get Statistics Global line or cmd_get in\n%s", tail(out))
	}
	return r
}

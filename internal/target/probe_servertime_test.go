package target

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/postgres"
	"github.com/storebench/storebench/internal/store/redis"
	"github.com/storebench/storebench/internal/store/storetest"
)

// kvWorker gets or sets keys k0..k(keys-1) in turn.
type kvWorker struct {
	kv   store.KV
	set  bool
	keys int64
	key  []byte
	buf  []byte
}

func (w *kvWorker) Do(ctx context.Context, seq int64) error {
	w.key = fmt.Appendf(w.key[:0], "k%d", seq%w.keys)
	if w.set {
		return w.kv.Set(ctx, w.key, []byte("0123456789abcdef"), 0)
	}
	v, _, err := w.kv.Get(ctx, w.key, w.buf[:0])
	w.buf = v
	return err
}

// runPhase runs n sets or gets on 2 workers through the engine, observed by
// the instance's probe, as the run command does.
func runPhase(t *testing.T, inst *Instance, name string, n int64) metrics.Phase {
	t.Helper()
	ctx := context.Background()
	const workers = 2
	ws := make([]load.Worker, workers)
	for i := range ws {
		c, err := inst.Store.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		ws[i] = &kvWorker{kv: c.(store.KV), set: name == "set", keys: 100}
	}
	p, err := load.Run(ctx, load.Config{Workers: workers, Ops: n, WarmupOps: 20, Name: name, Probe: inst.Probe(name)}, ws)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestServerTimeProbe runs phases against real managed servers, seen as
// managed (server processes visible) and as external (store only), and
// checks the server's own time is attached beside the client's.
func TestServerTimeProbe(t *testing.T) {
	ctx := context.Background()
	pg := servertest.Start(t, server.Postgres, server.Options{})
	rd := servertest.Start(t, server.Redis, server.Options{Profile: "none"})
	open := map[string]func(url string) (store.Store, error){
		"postgres": func(url string) (store.Store, error) {
			return postgres.New(ctx, postgres.Config{URL: url, Namespace: storetest.Namespace(t)})
		},
		"redis": func(url string) (store.Store, error) {
			return redis.New(ctx, redis.Config{URL: url, Namespace: storetest.Namespace(t)})
		},
	}
	for _, tc := range []struct {
		kind    string
		srv     *server.Server
		managed bool
		op      string
	}{
		{"postgres", pg, true, "set"},
		{"postgres", pg, false, "get"},
		{"redis", rd, true, "set"},
		{"redis", rd, false, "get"},
	} {
		name := fmt.Sprintf("%s/managed=%v/%s", tc.kind, tc.managed, tc.op)
		t.Run(name, func(t *testing.T) {
			st, err := open[tc.kind](tc.srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close(ctx) })
			inst := &Instance{Spec: Spec{Store: tc.kind}, Store: st}
			if tc.managed {
				inst.Server = tc.srv
			}
			if tc.op == "get" { // something to read
				runPhase(t, inst, "set", 100)
			}
			const n = 2000
			p := runPhase(t, inst, tc.op, n)
			st0 := p.ServerTime
			if st0 == nil {
				t.Fatalf("no server time; warnings %q", p.Warnings)
			}
			if (p.Server != nil) != tc.managed {
				t.Errorf("server cost present = %v, want %v", p.Server != nil, tc.managed)
			}
			if len(p.Warnings) > 0 {
				t.Errorf("warnings: %q", p.Warnings)
			}
			// The probe begins after the warm-up: exactly the measured ops.
			if st0.Calls != n || st0.Ops[tc.op].Calls != n || len(st0.Ops) != 1 {
				t.Errorf("server counted %d calls (%+v), want %d %s", st0.Calls, st0.Ops, n, tc.op)
			}
			if st0.MeanUs <= 0 || st0.MeanUs >= p.LatencyUs.Mean {
				t.Errorf("server mean %.2f µs, client mean %.2f µs: want 0 < server < client", st0.MeanUs, p.LatencyUs.Mean)
			}
			if math.Abs(st0.PerCallUs-st0.MeanUs) > 1e-6 || math.Abs(st0.ClientOverheadUs-(p.LatencyUs.Mean-st0.MeanUs)) > 1e-6 {
				t.Errorf("per call %.3f, overhead %.3f; mean %.3f, client %.3f", st0.PerCallUs, st0.ClientOverheadUs, st0.MeanUs, p.LatencyUs.Mean)
			}
			t.Logf("%s: client mean %.1f µs, server mean %.1f µs, overhead %.1f µs (%s)", name, p.LatencyUs.Mean, st0.MeanUs, st0.ClientOverheadUs, st0.Source)
		})
	}

	t.Run("postgres without pg_stat_statements", func(t *testing.T) {
		const db = "nostat"
		conn, err := pgx.Connect(ctx, pg.URL)
		if err != nil {
			t.Fatal(err)
		}
		_, err = conn.Exec(ctx, "CREATE DATABASE "+db)
		conn.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st, err := postgres.New(ctx, postgres.Config{URL: strings.Replace(pg.URL, "/storebench?", "/"+db+"?", 1), Namespace: storetest.Namespace(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close(ctx) })
		p := runPhase(t, &Instance{Spec: Spec{Store: "postgres"}, Store: st}, "set", 50)
		const want = "server-side time unavailable: pg_stat_statements not installed (CREATE EXTENSION pg_stat_statements and shared_preload_libraries)"
		if p.ServerTime != nil || !slices.Contains(p.Warnings, want) {
			t.Errorf("server time %+v, warnings %q; want none and %q", p.ServerTime, p.Warnings, want)
		}
	})
}

func TestSummarizeServerTime(t *testing.T) {
	at := func(calls int64, total time.Duration) store.ServerTime {
		return store.ServerTime{Source: "src", Ops: map[string]store.OpTime{"get": {Calls: calls, Total: total}}}
	}
	// A pipeline of 10 gets per call, 100 calls of which 2 failed: the server
	// time per call is its total over the 98 successful calls.
	ph := &metrics.Phase{Ops: 1000, OpsPerCall: 10, Errors: map[string]int64{"timeout": 2}, LatencyUs: metrics.Latency{Mean: 50}}
	s, warn, err := summarizeServerTime(at(5, time.Millisecond), at(985, time.Millisecond+980*2*time.Microsecond), ph)
	if err != nil || warn != "" {
		t.Fatal(err, warn)
	}
	if s.Calls != 980 || s.MeanUs != 2 || s.PerCallUs != 20 || s.ClientOverheadUs != 30 || s.Ops["get"] != (metrics.ServerOpTime{Calls: 980, MeanUs: 2}) {
		t.Errorf("summary %+v", s)
	}
	// Counters that went backwards: stats reset in between.
	if _, _, err := summarizeServerTime(at(500, time.Second), at(10, time.Millisecond), ph); err == nil || !strings.Contains(err.Error(), "reset") {
		t.Errorf("reset: err = %v", err)
	}
	// Nothing counted although the client made operations.
	if _, _, err := summarizeServerTime(at(5, time.Second), at(5, time.Second), ph); err == nil {
		t.Error("no calls: no error")
	}
	// ... which is expected of a phase that touches no store.
	floor := &metrics.Phase{Ops: 1000, NoStore: true}
	if s, warn, err := summarizeServerTime(at(5, time.Second), at(5, time.Second), floor); s != nil || warn != "" || err != nil {
		t.Errorf("a phase that touches no store: %+v, %q, %v; want nothing", s, warn, err)
	}
	// More calls than the client's: other clients of a shared server.
	if _, warn, _ := summarizeServerTime(at(0, 0), at(2000, time.Millisecond), ph); !strings.Contains(warn, "other clients") {
		t.Errorf("warning %q", warn)
	}
	// ... unless an op may make several calls (ycsb's Redis records).
	multi := &metrics.Phase{Ops: 1000, MultiCall: true}
	if _, warn, _ := summarizeServerTime(at(0, 0), at(2000, time.Millisecond), multi); warn != "" {
		t.Errorf("several calls per op: warning %q", warn)
	}
	if got := serverTimeWarning(fmt.Errorf("boom")); got != "server-side time unavailable: boom" {
		t.Errorf("warning %q", got)
	}
}

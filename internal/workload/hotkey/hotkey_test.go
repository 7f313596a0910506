package hotkey

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/blockio"
	"github.com/storebench/storebench/internal/store/files"
	"github.com/storebench/storebench/internal/store/memory"
	"github.com/storebench/storebench/internal/store/redis"
	"github.com/storebench/storebench/internal/store/storetest"
	"github.com/storebench/storebench/internal/workload"
)

func memStore(t *testing.T) store.Store {
	st, err := memory.New(context.Background(), memory.Config{Namespace: "hotkey"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	return st
}

// connectionsReceived reads Redis's INFO stats total_connections_received.
func connectionsReceived(t *testing.T, c rueidis.Client) int64 {
	t.Helper()
	info, err := c.Do(context.Background(), c.B().Info().Section("stats").Build()).ToString()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_connections_received:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no total_connections_received in INFO stats:\n%s", info)
	return 0
}

func TestRedisConnections(t *testing.T) {
	url := servertest.Start(t, server.Redis, server.Options{Profile: "none"}).URL
	st, err := redis.New(context.Background(), redis.Config{URL: url, Namespace: storetest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	opt, _ := rueidis.ParseURL(url)
	opt.DisableCache = true
	admin, err := rueidis.NewClient(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)

	const ops = 300
	for _, perOp := range []bool{true, false} {
		before := connectionsReceived(t, admin)
		phases, err := Run(context.Background(), st, Params{Load: workload.Load{Clients: 2, Ops: ops, ConnectPerOp: perOp}}, workload.Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		grown := connectionsReceived(t, admin) - before
		if len(phases) != 1 || phases[0].Name != Phase || phases[0].Ops != ops || len(phases[0].Errors) != 0 {
			t.Fatalf("per-op %v: phases %+v", perOp, phases)
		}
		// Persistent: the 2 clients and the one that writes the value.
		if perOp && grown < ops || !perOp && grown > 3 {
			t.Errorf("connect per op %v: %d connections for %d reads", perOp, grown, ops)
		}
		t.Logf("connect per op %v: %d connections for %d reads, mean %.1f µs", perOp, grown, ops, phases[0].LatencyUs.Mean)
		// Redis's clients block on their sockets up to one connection per
		// client thread (blockio.Use); connect-per-op ones are not a
		// phase's connections.
		want := ""
		if !perOp {
			want = blockio.ModePoller
			if 2 <= runtime.GOMAXPROCS(0) {
				want = blockio.ModeBlocking
			}
		}
		if got := phases[0].ClientIO; got != want {
			t.Errorf("connect per op %v, 2 clients, GOMAXPROCS %d: client I/O %q, want %q", perOp, runtime.GOMAXPROCS(0), got, want)
		}
	}
	many := runtime.GOMAXPROCS(0) + 1
	phases, err := Run(context.Background(), st, Params{Load: workload.Load{Clients: many, Ops: ops}}, workload.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if got := phases[0].ClientIO; got != blockio.ModePoller {
		t.Errorf("%d clients, GOMAXPROCS %d: client I/O %q, want %q", many, runtime.GOMAXPROCS(0), got, blockio.ModePoller)
	}
}

func TestMemoryAndPipeline(t *testing.T) {
	for _, depth := range []int{1, 8} {
		phases, err := Run(context.Background(), memStore(t), Params{Load: workload.Load{Clients: 3, Ops: 800, Pipeline: depth}}, workload.Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		if ph := phases[0]; ph.Ops != 800 || len(ph.Errors) != 0 {
			t.Errorf("depth %d: %d ops, errors %v", depth, ph.Ops, ph.Errors)
		}
	}
}

func TestMismatch(t *testing.T) {
	ctx := context.Background()
	st := memStore(t)
	kv := storetest.KVClient(t, st)
	p := Params{Load: workload.Load{Clients: 1, Ops: 1}}.WithDefaults()
	r := newReader(kv, p)
	if err := r.Do(ctx, 0); errclass.Classify(err) != errclass.ClassMismatch || !strings.Contains(err.Error(), "missing") {
		t.Errorf("read of an unwritten key: %v", err)
	}
	if err := kv.Set(ctx, []byte(Key), []byte("hello World"), 0); err != nil {
		t.Fatal(err)
	}
	if err := r.Do(ctx, 0); errclass.Classify(err) != errclass.ClassMismatch {
		t.Errorf("read of another value: %v", err)
	}
	if err := kv.Set(ctx, []byte(Key), []byte(DefaultValue), 0); err != nil {
		t.Fatal(err)
	}
	if err := r.Do(ctx, 0); err != nil {
		t.Error(err)
	}
	if n := testing.AllocsPerRun(100, func() { r.Do(ctx, 0) }); n != 0 {
		t.Errorf("Do allocates %v per read", n)
	}
}

func TestParams(t *testing.T) {
	d := Params{}.WithDefaults()
	if d.Value != "hello world" || d.ValueSize != 11 || d.Load.Clients != 1 || d.Load.Ops != 10000 {
		t.Errorf("defaults = %+v", d)
	}
	if g := (Params{ValueSize: 100, Seed: 2}).WithDefaults(); len(g.Value) != 100 || g.ValueSize != 100 {
		t.Errorf("generated value: %+v", g)
	}
	for _, bad := range []Params{
		{ValueSize: -1},
		{Value: "abc", ValueSize: 4},
		{Load: workload.Load{Clients: -2}},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	// Files have no batches: a pipeline is refused before any work.
	st, err := files.New(context.Background(), files.Config{Dir: t.TempDir(), Namespace: "hk"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	if _, err := Run(context.Background(), st, Params{Load: workload.Load{Clients: 1, Ops: 10, Pipeline: 2}}, workload.Hooks{}); !errors.Is(err, store.ErrUnsupported) {
		t.Errorf("pipeline on files: %v", err)
	}
}

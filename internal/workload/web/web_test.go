package web

import (
	"context"
	"net/http"
	"testing"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/memory"
	"github.com/storebench/storebench/internal/store/redis"
	"github.com/storebench/storebench/internal/workload"
)

func TestWebEndpointOnMemoryAndRedis(t *testing.T) {
	ctx := context.Background()
	srv := servertest.Start(t, server.Redis, server.Options{Profile: "none"})
	stores := map[string]func() (store.Store, error){
		"memory": func() (store.Store, error) { return memory.New(ctx, memory.Config{Namespace: "webtest"}) },
		"redis":  func() (store.Store, error) { return redis.New(ctx, redis.Config{URL: srv.URL, Namespace: "webtest"}) },
	}
	for name, open := range stores {
		for _, perOp := range []bool{false, true} {
			st, err := open()
			if err != nil {
				t.Fatal(err)
			}
			p := Params{Value: "hello world", Load: workload.Load{Clients: 4, Ops: 400, ConnectPerOp: perOp}}
			phases, err := Run(ctx, st, p, workload.Hooks{})
			st.Close(ctx)
			if err != nil {
				t.Fatalf("%s per-op=%v: %v", name, perOp, err)
			}
			if len(phases) != 2 || phases[0].Name != "empty" || phases[1].Name != "get" {
				t.Fatalf("phases %+v", phases)
			}
			if !phases[0].NoStore || phases[1].NoStore {
				t.Errorf("NoStore: empty %v, get %v; want true, false", phases[0].NoStore, phases[1].NoStore)
			}
			for _, ph := range phases {
				if ph.Ops != 400 || len(ph.Errors) != 0 || ph.ThroughputOpsS <= 0 {
					t.Errorf("%s per-op=%v %s: ops %d errors %v samples %v", name, perOp, ph.Name, ph.Ops, ph.Errors, ph.ErrorSamples)
				}
			}
		}
	}
}

// A value changed behind the endpoint's back is a mismatch, not a success.
func TestWebCountsWrongValues(t *testing.T) {
	ctx := context.Background()
	st, _ := memory.New(ctx, memory.Config{Namespace: "webtest"})
	defer st.Close(ctx)
	pool := []store.KV{}
	c, _ := st.Open(ctx)
	pool = append(pool, c.(store.KV))
	if err := pool[0].Set(ctx, key, []byte("stale"), 0); err != nil {
		t.Fatal(err)
	}
	hs, addr, err := serve(pool, []byte("hello world"))
	if err != nil {
		t.Fatal(err)
	}
	defer hs.Close()
	r := &requester{c: &http.Client{}, url: "http://" + addr + "/get"}
	err = r.Do(ctx, 0)
	if errclass.Classify(err) != errclass.ClassMismatch {
		t.Fatalf("wrong value: error %v (class %s), want a mismatch", err, errclass.Classify(err))
	}
}

package redis

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
)

// TestServerTime counts known commands through INFO commandstats on a
// managed server; opening clients, INFO, Reset's SCAN and UNLINK are not
// operations.
func TestServerTime(t *testing.T) {
	ctx := context.Background()
	s := open(t, servertest.Start(t, server.Redis, server.Options{}).URL)
	before, err := s.ServerTime(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := s.Open(ctx) // HELLO, CLIENT SETNAME: not operations
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	kv := cl.(*Client)
	const sets, gets, dels, batch = 300, 200, 50, 16
	for i := range sets {
		if err := kv.Set(ctx, fmt.Appendf(nil, "k%d", i), []byte("value"), 0); err != nil {
			t.Fatal(err)
		}
	}
	for i := range gets {
		if _, ok, err := kv.Get(ctx, fmt.Appendf(nil, "k%d", i), nil); err != nil || !ok {
			t.Fatalf("get: %v %v", ok, err)
		}
	}
	for i := range dels {
		if err := kv.Delete(ctx, fmt.Appendf(nil, "k%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	keys := make([][]byte, batch)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "k%d", 100+i)
	}
	if _, err := kv.GetBatch(ctx, keys, nil, make([]bool, batch)); err != nil { // a pipeline: one GET each
		t.Fatal(err)
	}
	if err := s.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := s.ServerTime(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(after.Source, "whole server") {
		t.Errorf("source %q does not say it covers the whole server", after.Source)
	}
	want := map[string]int64{"set": sets, "get": gets + batch, "delete": dels}
	for op, n := range want {
		a, b := after.Ops[op], before.Ops[op]
		if got := a.Calls - b.Calls; got != n {
			t.Errorf("%s: %d calls, want %d", op, got, n)
		}
		if d := a.Total - b.Total; d <= 0 {
			t.Errorf("%s: total %v, want > 0", op, d)
		}
		t.Logf("%s: %d calls, mean %.2f µs", op, a.Calls-b.Calls, float64(a.Total-b.Total)/1e3/float64(a.Calls-b.Calls))
	}
	for op := range after.Ops {
		if _, ok := want[op]; !ok && after.Ops[op].Calls != before.Ops[op].Calls {
			t.Errorf("unexpected op %q counted: %+v", op, after.Ops[op])
		}
	}
}

func TestParseCommandStats(t *testing.T) {
	raw := "# Commandstats\r\n" +
		"cmdstat_get:calls=10,usec=25,usec_per_call=2.50,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_del:calls=3,usec=6,usec_per_call=2.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_config|get:calls=7,usec=70,usec_per_call=10.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_info:calls=2,usec=90,usec_per_call=45.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_mget:calls=1,usec=4\r\n"
	got := parseCommandStats(raw)
	want := map[string]store.OpTime{
		"get":    {Calls: 10, Total: 25 * time.Microsecond},
		"delete": {Calls: 3, Total: 6 * time.Microsecond},
		"mget":   {Calls: 1, Total: 4 * time.Microsecond},
	}
	if len(got.Ops) != len(want) {
		t.Errorf("ops = %v, want %v", got.Ops, want)
	}
	for k, v := range want {
		if got.Ops[k] != v {
			t.Errorf("%s = %+v, want %+v", k, got.Ops[k], v)
		}
	}
}

package redis

import (
	"context"
	"testing"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store/pollio"
	"github.com/storebench/storebench/internal/store/storetest"
)

// TestOneReadPerBatch checks that a pipelined batch on a connection served
// by the poller makes one read(2): its 16 replies read in bulk, and no read
// before they can be there; a Get and a Set, batches of one, alike. Before
// pollio, each batch first read the socket right after writing (EAGAIN),
// ~2 reads per batch.
func TestOneReadPerBatch(t *testing.T) {
	s := open(t, servertest.Start(t, server.Redis, server.Options{}).URL)
	ctx := context.Background()
	kv, b := storetest.BatchClient(t, s)
	if c := kv.(*Client); c.blocking || c.raw.get(c.blocking) == nil {
		t.Fatal("this test is about batches on the client's own connection, through the poller")
	}
	const depth = 16
	keys, vals := make([][]byte, depth), make([][]byte, depth)
	for i := range depth {
		keys[i], vals[i] = []byte{'k', byte('a' + i)}, []byte{'v', byte('a' + i)}
	}
	dst, found := make([][]byte, depth), make([]bool, depth)
	var got []byte
	ops := []struct {
		name string
		op   func() error
	}{
		{"SetBatch", func() error { return b.SetBatch(ctx, keys, vals, 0) }},
		{"GetBatch", func() error {
			var err error
			dst, err = b.GetBatch(ctx, keys, dst, found)
			for i := range depth {
				if err == nil && (!found[i] || string(dst[i]) != string(vals[i])) {
					t.Fatalf("get %s: %q %v", keys[i], dst[i], found[i])
				}
			}
			return err
		}},
		{"Set", func() error { return kv.Set(ctx, keys[0], vals[0], 0) }},
		{"Get", func() error {
			var ok bool
			var err error
			got, ok, err = kv.Get(ctx, keys[0], got)
			if err == nil && (!ok || string(got) != string(vals[0])) {
				t.Fatalf("get %s: %q %v", keys[0], got, ok)
			}
			return err
		}},
	}
	for _, tc := range ops {
		per, err := pollio.ReadsPerOp(1000, tc.op)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if per > 1.1 { // a little room for the runtime's and the test's own reads
			t.Errorf("%s: %.2f read(2) calls per call, want 1", tc.name, per)
		}
	}
}

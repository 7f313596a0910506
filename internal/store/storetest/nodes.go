package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/storebench/storebench/internal/store"
)

// NodeSpread writes 3000 keys through one client of s, a store spread over
// nodes servers (store.NodeCounter), and reads each back: every node's own
// counters must show a share of the writes and of the same reads, at least
// 60% of an even share. It returns each node's writes, by address, for a
// check of what the node holds.
func NodeSpread(t *testing.T, s store.Store, nodes int) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	nc, ok := s.(store.NodeCounter)
	if !ok {
		t.Fatalf("%T is not a store.NodeCounter", s)
	}
	before, err := nc.NodeCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kv := KVClient(t, s)
	const n = 3000
	for i := range n {
		k := fmt.Appendf(nil, "user:%d", i)
		mustSet(t, kv, k, k, 0)
		expect(t, kv, k, k)
	}
	after, err := nc.NodeCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != nodes || len(before) != nodes {
		t.Fatalf("%d nodes counted (%d before), want %d", len(after), len(before), nodes)
	}
	writes := map[string]int64{}
	for i, a := range after {
		reads, w := a.Reads-before[i].Reads, a.Writes-before[i].Writes
		if reads < n*6/10/int64(nodes) || reads != w {
			t.Errorf("node %s (%s): %d reads, %d writes of %d keys", a.Addr, a.Role, reads, w, n)
		}
		writes[a.Addr] = w
	}
	return writes
}

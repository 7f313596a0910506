package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/storebench/storebench/internal/store"
)

// KeyNodes checks a store.KeyNoder against the nodes' own counters: it
// writes keys through the store, and each node's write count grows by the
// number of keys KeyNodes placed on it, over all nodes serving keys.
func KeyNodes(t *testing.T, s store.Store, nodes int) {
	t.Helper()
	ctx := context.Background()
	kn, ok := s.(store.KeyNoder)
	nc, ok2 := s.(store.NodeCounter)
	if !ok || !ok2 {
		t.Fatalf("%T is not a store.KeyNoder and a store.NodeCounter", s)
	}
	owner, err := kn.KeyNodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before, err := nc.NodeCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kv := KVClient(t, s)
	placed := map[string]int64{}
	for i := range 2000 {
		k := fmt.Appendf(nil, "keynode:%d", i)
		mustSet(t, kv, k, k, 0)
		placed[owner(k)]++
	}
	after, err := nc.NodeCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(placed) != nodes || placed[""] != 0 {
		t.Errorf("keys placed on %d nodes, want %d: %v", len(placed), nodes, placed)
	}
	for i, a := range after {
		if w := a.Writes - before[i].Writes; w != placed[a.Addr] {
			t.Errorf("node %s (%s) took %d writes, KeyNodes placed %d keys on it", a.Addr, a.Role, w, placed[a.Addr])
		}
	}
}

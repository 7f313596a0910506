package workload

import (
	"context"
	"errors"
	"testing"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/memory"
)

// OpenKV opens as many key-value clients as asked, each one usable, and a
// failed open names which client of how many it was.
func TestOpenKV(t *testing.T) {
	ctx := context.Background()
	st, err := memory.New(ctx, memory.Config{Namespace: "openkv"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	kvs, closeAll, err := OpenKV(ctx, st.Open, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(kvs) != 3 {
		t.Fatalf("%d clients, want 3", len(kvs))
	}
	for i, kv := range kvs {
		if err := kv.Set(ctx, []byte("k"), []byte{byte(i)}, 0); err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
	}
	closeAll()

	opened := 0
	refuseThird := func(ctx context.Context) (store.Client, error) {
		if opened == 2 {
			return nil, errors.New("refused")
		}
		opened++
		return st.Open(ctx)
	}
	if _, _, err := OpenKV(ctx, refuseThird, 4); err == nil || err.Error() != "open client 3 of 4: refused" {
		t.Fatalf("got %v, want open client 3 of 4: refused", err)
	}
}

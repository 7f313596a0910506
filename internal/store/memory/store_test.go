package memory

import (
	"context"
	"testing"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func open(t testing.TB) *Store {
	s, err := New(context.Background(), Config{Namespace: storetest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

func TestKV(t *testing.T) {
	storetest.RunKV(t, func(t *testing.T) store.Store { return open(t) })
}

func TestAdd(t *testing.T) {
	storetest.RunAdd(t, func(t *testing.T) store.Store { return open(t) })
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{{}, {Namespace: "Bad"}, {Namespace: "9x"}, {Namespace: "a-b"}, {Namespace: "ok", Shards: 3}} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: Validate() = nil, want an error", c)
		}
	}
	if err := (Config{Namespace: "sb_1", Shards: 16}).Validate(); err != nil {
		t.Error(err)
	}
}

func BenchmarkGet(b *testing.B) { storetest.BenchGet(b, open(b)) }
func BenchmarkSet(b *testing.B) { storetest.BenchSet(b, open(b)) }

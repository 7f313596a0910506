package storetest

import (
	"context"
	"testing"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/blockio"
)

// Blocking returns open's store with every client opened as one of a
// single-connection phase (blockio.WithConnections(ctx, 1)), so a network
// store's connections read and write with blocking system calls; a client
// that does not report blockio.ModeBlocking fails t. Run the conformance
// suites through it to cover that path as well as the poller's.
func Blocking(open Opener) Opener {
	return func(t *testing.T) store.Store { return BlockingStore(t, open(t)) }
}

// BlockingStore is s, its clients opened as by Blocking.
func BlockingStore(t *testing.T, s store.Store) store.Store {
	return &blockingStore{Store: s, t: t}
}

type blockingStore struct {
	store.Store
	t *testing.T
}

func (b *blockingStore) Open(ctx context.Context) (store.Client, error) {
	c, err := b.Store.Open(blockio.WithConnections(ctx, 1))
	if err != nil {
		return nil, err
	}
	mode := "none"
	if r, ok := c.(interface{ ClientIO() string }); ok {
		mode = r.ClientIO()
	}
	if mode != blockio.ModeBlocking {
		b.t.Errorf("%T opened for a phase of one connection: client I/O %q, want %q", c, mode, blockio.ModeBlocking)
	}
	return c, nil
}

// RunKVPaths runs the KV suite three times, in parallel: "KV" with the
// clients a phase of many connections gets (Go's poller), "KV/blocking-io"
// with blocking ones (Blocking) and "KV/per-request" with a connection per
// operation (PerRequest, which the store must offer).
func RunKVPaths(t *testing.T, open Opener, o Options) {
	t.Run("KV", func(t *testing.T) {
		t.Parallel()
		RunKVOptions(t, open, o)
	})
	t.Run("KV/blocking-io", func(t *testing.T) {
		t.Parallel()
		RunKVOptions(t, Blocking(open), o)
	})
	t.Run("KV/per-request", func(t *testing.T) {
		t.Parallel()
		RunKVOptions(t, PerRequest(open), PerRequestOptions(o))
	})
}

// PerRequestOptions are o for a run with a connection per operation: fewer
// ops in the concurrency test (Options.ConcurrentOps), each being a connect.
func PerRequestOptions(o Options) Options {
	o.ConcurrentOps = 200
	return o
}

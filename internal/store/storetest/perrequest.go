package storetest

import (
	"context"
	"testing"

	"github.com/storebench/storebench/internal/store"
)

// PerRequest returns open's store with every client one that connects for
// each operation, as a phase run with --connect-per-op gets
// (store.PerOpClient): run the KV suite through it to cover a store's
// per-request path (store.PerRequestOpener), which open's store must have.
func PerRequest(open Opener) Opener {
	return func(t *testing.T) store.Store {
		s := open(t)
		if _, ok := s.(store.PerRequestOpener); !ok {
			t.Fatalf("%T has no per-request path (store.PerRequestOpener)", s)
		}
		return &perRequestStore{Store: s}
	}
}

type perRequestStore struct{ store.Store }

// Open fails as the client's first operation would, e.g. once the store is
// closed: the client itself connects only for its operations.
func (p *perRequestStore) Open(ctx context.Context) (store.Client, error) {
	probe, err := p.Store.(store.PerRequestOpener).OpenPerRequest(ctx)
	if err != nil {
		return nil, err
	}
	probe.Close()
	return store.PerOpClient(p.Store), nil
}

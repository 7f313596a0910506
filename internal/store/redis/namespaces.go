package redis

import (
	"context"
	"strings"

	"github.com/storebench/storebench/internal/store"
)

// What a run leaves behind when it cannot close its store (it was killed)
// or keeps its data on purpose (run --keep): its keys, all under
// KeyPrefix + namespace + ":". storebench clean lists and unlinks them; it
// never touches a key outside that prefix.

var _ store.Detacher = (*Store)(nil)

// Detach disconnects and leaves the namespace's keys in place.
func (s *Store) Detach(context.Context) error { return s.detach() }

// Namespaces lists the namespaces of the keys on the server at url
// (KeyPrefix + namespace + ":" + key). It SCANs the whole keyspace, 1000
// keys a round trip: a job for storebench clean, not for a run.
func Namespaces(ctx context.Context, url string) ([]string, error) {
	s, err := New(ctx, Config{URL: url, Namespace: store.ListNamespace})
	if err != nil {
		return nil, err
	}
	defer s.Detach(ctx)
	seen := map[string]bool{}
	var cursor uint64
	for {
		e, err := s.admin.Do(ctx, s.admin.B().Scan().Cursor(cursor).Match(KeyPrefix+"*").Count(1000).Build()).AsScanEntry()
		if err != nil {
			return nil, opErr("list namespaces: scan", err)
		}
		for _, k := range e.Elements {
			rest, _ := strings.CutPrefix(k, KeyPrefix)
			if ns, _, ok := strings.Cut(rest, ":"); ok && store.ValidNamespace(ns) == nil {
				seen[ns] = true
			}
		}
		if cursor = e.Cursor; cursor == 0 {
			break
		}
	}
	return store.SortedNames(seen), nil
}

// DropNamespace unlinks every key of namespace ns on the server at url (as
// Close does), and no other key.
func DropNamespace(ctx context.Context, url, ns string) error {
	s, err := New(ctx, Config{URL: url, Namespace: ns})
	if err != nil {
		return err
	}
	return s.Close(ctx)
}

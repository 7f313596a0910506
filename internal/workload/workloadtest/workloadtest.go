// Package workloadtest opens real stores for the tests of workloads: the
// in-process memory store, or a fresh managed server started for the test
// (a missing binary fails the test, never skips it).
package workloadtest

import (
	"context"
	"testing"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/memcached"
	"github.com/storebench/storebench/internal/store/memory"
	"github.com/storebench/storebench/internal/store/postgres"
	"github.com/storebench/storebench/internal/store/redis"
	"github.com/storebench/storebench/internal/store/storetest"
)

// Openers, by store kind, start a fresh managed server (or none) and open a store on it,
// closed when the test ends.
var Openers = map[string]func(t testing.TB) store.Store{
	"memory": func(t testing.TB) store.Store {
		return Closing(t)(memory.New(context.Background(), memory.Config{Namespace: storetest.Namespace(t)}))
	},
	string(server.Redis): func(t testing.TB) store.Store {
		url := servertest.Start(t, server.Redis, server.Options{Profile: "none"}).URL
		return Closing(t)(redis.New(context.Background(), redis.Config{URL: url, Namespace: storetest.Namespace(t)}))
	},
	string(server.Memcached): func(t testing.TB) store.Store {
		url := servertest.Start(t, server.Memcached, server.Options{}).URL
		return Closing(t)(memcached.New(context.Background(), memcached.Config{URL: url, Namespace: storetest.Namespace(t)}))
	},
	string(server.Postgres): func(t testing.TB) store.Store {
		url := servertest.Start(t, server.Postgres, server.Options{}).URL
		return Closing(t)(postgres.New(context.Background(), postgres.Config{URL: url, Namespace: storetest.Namespace(t)}))
	},
}

// RedisWith starts a fresh managed Redis without persistence and with
// these settings on top (e.g. maxmemory and maxmemory-policy, for a cache
// smaller than a workload's keys), and opens a store on it.
func RedisWith(t testing.TB, settings map[string]string) store.Store {
	url := servertest.Start(t, server.Redis, server.Options{Profile: "none", Settings: settings}).URL
	return Closing(t)(redis.New(context.Background(), redis.Config{URL: url, Namespace: storetest.Namespace(t)}))
}

// Closing fails t on err and closes the store when t ends.
func Closing(t testing.TB) func(store.Store, error) store.Store {
	return func(s store.Store, err error) store.Store {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close(context.Background()) })
		return s
	}
}

// Untouched writes a key to st for runs that must fail before any work;
// the func it returns fails t when the key is gone (a run reset or wrote
// the store).
func Untouched(t testing.TB, st store.Store) func() {
	t.Helper()
	ctx := context.Background()
	kv := storetest.KVClient(t, st)
	key := []byte("untouched")
	if err := kv.Set(ctx, key, []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		if _, found, err := kv.Get(ctx, key, nil); err != nil || !found {
			t.Fatalf("the store was touched by a run that should have failed first: found %v, err %v", found, err)
		}
	}
}

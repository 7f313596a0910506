// Package kinds lists every store kind this binary knows, with the facts
// of each (target.Kind): adding a store is one entry here (and its package,
// and a server kind if managed). Only cmd and tests import it, as
// workload/all: the layers between them are given a target.Registry and name
// no kind (issue 29).
package kinds

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/files"
	"github.com/storebench/storebench/internal/store/memcached"
	"github.com/storebench/storebench/internal/store/memory"
	"github.com/storebench/storebench/internal/store/mysql"
	"github.com/storebench/storebench/internal/store/postgres"
	"github.com/storebench/storebench/internal/store/redis"
	"github.com/storebench/storebench/internal/store/sqlite"
	"github.com/storebench/storebench/internal/target"
)

// All lists every store kind this binary knows, in `storebench list` order.
// Each call builds a fresh registry, so a caller may change its copy.
func All() target.Registry {
	return target.Registry{
		{
			Name: "memory", Batches: true, DataInProcess: true, Description: "in-process map: the floor, no I/O at all", Prototype: (*memory.Store)(nil), ClientPrototype: (*memory.Client)(nil),
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				return memory.New(ctx, memory.Config{Namespace: a.Namespace})
			},
		},
		{
			Name: "files", Description: "one file per key, written via temp file + rename", Schemes: []string{"file"}, Prototype: (*files.Store)(nil), ClientPrototype: (*files.Client)(nil), CheckURL: files.CheckURL,
			CrashLoss: files.CrashLoss, Reattach: reattach(files.ConfigOf, files.Attach, files.Create),
			Options:      map[string]string{"fsync": "true: fsync each file and its directory before a write returns; file: the file alone (its new name is not durable)"},
			CheckOptions: func(o map[string]string) error { _, _, err := fsyncOption(o); return err },
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				dir := a.RunDir
				if a.URL != "" {
					dir = store.URLPath(a.URL)
				}
				fsync, noDir, err := fsyncOption(a.Options)
				if err != nil {
					return nil, err
				}
				return files.New(ctx, files.Config{Dir: dir, Namespace: a.Namespace, Fsync: fsync, NoDirFsync: noDir})
			},
			Namespace: "directory %s", CheapList: true,
			Namespaces: func(ctx context.Context, a target.OpenArgs) ([]string, error) {
				return files.Namespaces(ctx, store.URLPath(a.URL))
			},
			DropNamespace: func(ctx context.Context, a target.OpenArgs) error {
				return files.DropNamespace(ctx, store.URLPath(a.URL), a.Namespace)
			},
		},
		{
			Name: "sqlite", Description: "a SQLite file, WAL journal, synchronous=NORMAL by default", Schemes: []string{"sqlite"}, Prototype: (*sqlite.Store)(nil), ClientPrototype: (*sqlite.Client)(nil), CheckURL: sqlite.CheckURL,
			CrashLoss: sqlite.CrashLoss, Reattach: reattach(sqlite.ConfigOf, sqlite.Attach, sqlite.Create),
			Options: map[string]string{"journal_mode": "WAL (default), DELETE, TRUNCATE, MEMORY, OFF", "synchronous": "NORMAL (default), FULL, EXTRA (FULL + a directory fsync after the journal's unlink), OFF"},
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				path := filepath.Join(a.RunDir, "storebench.db")
				if a.URL != "" {
					path = store.URLPath(a.URL)
				}
				return sqlite.New(ctx, sqlite.Config{Path: path, Namespace: a.Namespace, JournalMode: a.Options["journal_mode"], Synchronous: a.Options["synchronous"]})
			},
			Namespace: "tables %s_*", CheapList: true,
			Namespaces: func(ctx context.Context, a target.OpenArgs) ([]string, error) {
				return sqlite.Namespaces(ctx, store.URLPath(a.URL))
			},
			DropNamespace: func(ctx context.Context, a target.OpenArgs) error {
				return sqlite.DropNamespace(ctx, store.URLPath(a.URL), a.Namespace)
			},
		},
		{
			Name: "postgres", Batches: true, Description: "PostgreSQL through pgx, prepared statements, its own schema", Server: server.Postgres,
			Schemes: []string{"postgres", "postgresql"}, Prototype: (*postgres.Store)(nil), ClientPrototype: (*postgres.Client)(nil), CheckURL: postgres.CheckURL,
			CrashLoss:     server.Postgres.CrashLoss,
			Options:       map[string]string{"design": "logged (default), unlogged, hash-index, covering; combine with commas, e.g. unlogged,covering"},
			ServerOptions: map[string]string{"io_method": "PostgreSQL 18+ asynchronous I/O: worker (18's default), sync, io_uring (a build with liburing)"},
			CheckOptions: func(o map[string]string) error {
				if v, ok := o["io_method"]; ok && !slices.Contains(server.PGIOMethods, v) {
					return fmt.Errorf("option io_method=%q: want %s", v, strings.Join(server.PGIOMethods, ", "))
				}
				return postgres.Config{URL: "postgres://check", Namespace: "check", Design: o["design"]}.Validate()
			},
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				return postgres.New(ctx, postgres.Config{URL: a.URL, Namespace: a.Namespace, Design: a.Options["design"]})
			},
			Namespace: "schema %s", CheapList: true,
			Namespaces: listByURL(postgres.Namespaces), DropNamespace: byNamespace(postgres.DropNamespace),
			Dependents: byNamespace(postgres.Dependents),
		},
		{
			Name: "redis", Batches: true, Description: "Redis through rueidis, keys under a storebench prefix", Server: server.Redis,
			Schemes: []string{"redis", "rediss"}, Prototype: (*redis.Store)(nil), ClientPrototype: (*redis.Client)(nil), CheckURL: redis.CheckURL,
			CrashLoss: server.Redis.CrashLoss,
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				return redis.New(ctx, redis.Config{URL: a.URL, Namespace: a.Namespace})
			},
			// Listing SCANs every key of the server: clean does it, a run does not.
			Namespace:  "keys " + redis.KeyPrefix + "%s:*",
			Namespaces: listByURL(redis.Namespaces), DropNamespace: byNamespace(redis.DropNamespace),
		},
		{
			Name: "memcached", Batches: true, Description: "Memcached through gomemcache, prefixed keys", Server: server.Memcached,
			Schemes: []string{"memcached"}, Prototype: (*memcached.Store)(nil), ClientPrototype: (*memcached.Client)(nil),
			CrashLoss:     server.Memcached.CrashLoss,
			CheckURL:      func(raw string) error { return memcached.Config{URL: raw, Namespace: "check"}.Validate() },
			ServerOptions: map[string]string{"threads": "worker threads (-t), default 4", "memory_mb": "item memory in MiB (-m), default 1024"},
			CheckOptions: func(o map[string]string) error {
				for _, name := range []string{"threads", "memory_mb"} {
					if v, ok := o[name]; ok {
						if n, err := strconv.Atoi(v); err != nil || n <= 0 {
							return fmt.Errorf("option %s=%q: want a positive number", name, v)
						}
					}
				}
				return nil
			},
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				return memcached.New(ctx, memcached.Config{URL: a.URL, Namespace: a.Namespace})
			},
			// Memcached cannot list its keys: no Namespaces, nothing to drop.
			Namespace: "keys sb:%s:*",
		},
		{
			Name: "mariadb", Description: "MariaDB/MySQL (InnoDB) through go-sql-driver/mysql, its own database", Server: server.MariaDB,
			Schemes: []string{"mysql", "mariadb"}, Prototype: (*mysql.Store)(nil), ClientPrototype: (*mysql.Client)(nil), CheckURL: mysql.CheckURL,
			CrashLoss: server.MariaDB.CrashLoss,
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				return mysql.New(ctx, mysql.Config{URL: a.URL, Namespace: a.Namespace})
			},
			Namespace: "database %s", CheapList: true,
			Namespaces: listByURL(mysql.Namespaces), DropNamespace: byNamespace(mysql.DropNamespace),
			Dependents: byNamespace(mysql.Dependents),
		},
		{
			// Valkey speaks Redis's protocol: the redis store and driver, its
			// own managed server (binary, version, build). No URL scheme: a
			// redis:// URL reaches a Valkey server as the redis store.
			Name: "valkey", Batches: true, Description: "Valkey through rueidis (the redis store), keys under a storebench prefix", Server: server.Valkey,
			Prototype: (*redis.Store)(nil), ClientPrototype: (*redis.Client)(nil),
			// What Valkey loses is what Redis does under the same settings.
			CrashLoss:     server.Valkey.CrashLoss,
			ServerOptions: map[string]string{"io-threads": "I/O threads (Valkey 8+ asynchronous I/O), default 1: the main thread only"},
			CheckOptions: func(o map[string]string) error {
				if v, ok := o["io-threads"]; ok {
					// Valkey's own ceiling (IO_THREADS_MAX_NUM), refused here
					// rather than by a server that will not start.
					if n, err := strconv.Atoi(v); err != nil || n < 1 || n > maxValkeyIOThreads {
						return fmt.Errorf("option io-threads=%q: want 1 to %d (Valkey's limit)", v, maxValkeyIOThreads)
					}
				}
				return nil
			},
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				return redis.New(ctx, redis.Config{URL: a.URL, Namespace: a.Namespace})
			},
			Namespace: "keys " + redis.KeyPrefix + "%s:*",
		},
		{
			// Clients use every node; the managed form is storebench's own
			// cluster on loopback (server.StartCluster).
			Name: "redis-cluster", Batches: true, Cluster: true, Server: server.Redis,
			Description: "Redis Cluster through rueidis's cluster client: managed (nodes on loopback, slots assigned by storebench) or its seed nodes by URL",
			Schemes:     []string{redis.ClusterScheme}, Prototype: (*redis.ClusterStore)(nil), ClientPrototype: (*redis.Client)(nil), CheckURL: redis.CheckClusterURL,
			CrashLoss:     server.Redis.ClusterCrashLoss,
			ServerOptions: clusterOptions,
			CheckOptions:  func(o map[string]string) error { return target.CheckClusterOptions(server.Redis, o) },
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				return redis.NewCluster(ctx, redis.ClusterConfig{URL: a.URL, Namespace: a.Namespace})
			},
			// Listing would SCAN every node: a cluster's keys go when its
			// store closes (and a managed cluster with its nodes).
			Namespace: "keys " + redis.KeyPrefix + "%s:*",
		},
		{
			// One primary takes the writes; reads go by the read policy.
			// The managed form is a primary and its hot standbys on loopback
			// (server.StartCluster, server.StartReplica).
			Name: "postgres-replicas", Cluster: true, EveryNode: true, NoFailover: true, Server: server.Postgres,
			Description: "a PostgreSQL primary and its streaming replicas: writes to the primary, reads by policy; managed (replicas on loopback) or by URL, the primary first",
			Schemes:     []string{postgres.ReplicasScheme}, Prototype: (*postgres.ReplicaStore)(nil), ClientPrototype: (*postgres.ReplicaClient)(nil), CheckURL: postgres.CheckReplicasURL,
			Options: map[string]string{
				"design": "as postgres's, but unlogged (an UNLOGGED table is not replicated)",
				"reads":  "replicas (default: round-robin over the replicas), primary, any (round-robin over the primary and the replicas); writes always go to the primary",
			},
			ServerOptions: map[string]string{"replicas": "streaming replicas of the managed primary, default 1, at most 8"},
			CheckOptions: func(o map[string]string) error {
				if err := target.CheckClusterOptions(server.Postgres, o); err != nil {
					return err
				}
				return postgres.CheckReplicaOptions(o["design"], o["reads"])
			},
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				return postgres.NewReplicas(ctx, postgres.ReplicaConfig{URL: a.URL, Namespace: a.Namespace, Design: a.Options["design"], Reads: a.Options["reads"]})
			},
			Namespace: "schema %s on the primary", CheapList: true,
			Namespaces: func(ctx context.Context, a target.OpenArgs) ([]string, error) {
				primary, err := postgres.PrimaryURL(a.URL)
				if err != nil {
					return nil, err
				}
				return postgres.Namespaces(ctx, primary)
			},
			DropNamespace: onPrimary(postgres.DropNamespace),
			Dependents:    onPrimary(postgres.Dependents),
		},
		{
			Name: "memcached-pool", Batches: true, Cluster: true, Server: server.Memcached,
			Description: "memcached servers with client-side hashing (gomemcache's ServerList choice): managed (servers on loopback) or by URL",
			Schemes:     []string{memcached.PoolScheme}, Prototype: (*memcached.PoolStore)(nil), ClientPrototype: (*memcached.PoolClient)(nil), CheckURL: memcached.CheckPoolURL,
			CrashLoss:     server.Memcached.ClusterCrashLoss,
			ServerOptions: map[string]string{"nodes": clusterOptions["nodes"]},
			CheckOptions:  func(o map[string]string) error { return target.CheckClusterOptions(server.Memcached, o) },
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				return memcached.NewPool(ctx, memcached.PoolConfig{URL: a.URL, Namespace: a.Namespace})
			},
			Namespace: "keys sb:%s:*",
		},
	}
}

// clusterOptions size a managed cluster (target.ClusterOptionNames).
var clusterOptions = map[string]string{
	"nodes":    "primaries (a pool's servers), default 3",
	"replicas": "replicas per primary, default 0, at most 2 (redis-cluster)",
}

// maxValkeyIOThreads is valkey-server's IO_THREADS_MAX_NUM.
const maxValkeyIOThreads = 256

// listByURL and byNamespace are a server store's clean-up by the target's
// URL: the server, not a path, holds its namespaces.
func listByURL(list func(ctx context.Context, url string) ([]string, error)) func(context.Context, target.OpenArgs) ([]string, error) {
	return func(ctx context.Context, a target.OpenArgs) ([]string, error) { return list(ctx, a.URL) }
}

// byNamespace is f (a drop, a check of dependents) on namespace
// a.Namespace of the store at a.URL.
func byNamespace(f func(ctx context.Context, url, ns string) error) func(context.Context, target.OpenArgs) error {
	return func(ctx context.Context, a target.OpenArgs) error { return f(ctx, a.URL, a.Namespace) }
}

// onPrimary is f on namespace a.Namespace of the primary of a
// postgres-replicas URL.
func onPrimary(f func(ctx context.Context, url, ns string) error) func(context.Context, target.OpenArgs) error {
	return func(ctx context.Context, a target.OpenArgs) error {
		primary, err := postgres.PrimaryURL(a.URL)
		if err != nil {
			return err
		}
		return f(ctx, primary, a.Namespace)
	}
}

// reattach is the Reattach of an in-process store whose Config its Info
// gives (configOf): attach and create by that Config.
func reattach[C any, S store.Store](configOf func(store.Info) (C, error), attach func(context.Context, C) (S, error), create func(context.Context, C) error) *target.Reattach {
	return &target.Reattach{
		Attach: func(ctx context.Context, info store.Info) (store.Store, error) {
			cfg, err := configOf(info)
			if err != nil {
				return nil, err
			}
			st, err := attach(ctx, cfg)
			if err != nil {
				return nil, err // not st: a nil *Attached is no nil store.Store
			}
			return st, nil
		},
		Create: func(ctx context.Context, info store.Info) error {
			cfg, err := configOf(info)
			if err != nil {
				return err
			}
			return create(ctx, cfg)
		},
	}
}

// fsyncOption reads the files store's fsync option (files.ParseFsync).
func fsyncOption(opts map[string]string) (fsync, noDirFsync bool, err error) {
	v, ok := opts["fsync"]
	if !ok {
		return false, false, nil
	}
	return files.ParseFsync(v)
}

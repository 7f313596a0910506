package main

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

// stores lists every store kind this binary knows, explicitly: adding a store
// means adding it here.
func stores() target.Registry {
	return target.Registry{
		{
			Name: "memory", Batches: true, DataInProcess: true, Description: "in-process map: the floor, no I/O at all", Prototype: (*memory.Store)(nil), ClientPrototype: (*memory.Client)(nil),
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				return memory.New(ctx, memory.Config{Namespace: a.Namespace})
			},
		},
		{
			Name: "files", Description: "one file per key, written via temp file + rename", Schemes: []string{"file"}, Prototype: (*files.Store)(nil), ClientPrototype: (*files.Client)(nil), CheckURL: files.CheckURL,
			Options:      map[string]string{"fsync": "true: fsync each file and its directory before a write returns"},
			CheckOptions: func(o map[string]string) error { _, err := boolOption(o, "fsync"); return err },
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				dir := a.RunDir
				if a.URL != "" {
					dir = store.URLPath(a.URL)
				}
				fsync, err := boolOption(a.Options, "fsync")
				if err != nil {
					return nil, err
				}
				return files.New(ctx, files.Config{Dir: dir, Namespace: a.Namespace, Fsync: fsync})
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
			Options: map[string]string{"journal_mode": "WAL (default), DELETE, TRUNCATE, MEMORY, OFF", "synchronous": "NORMAL (default), FULL, OFF"},
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
			Namespaces: func(ctx context.Context, a target.OpenArgs) ([]string, error) {
				return postgres.Namespaces(ctx, a.URL)
			},
			DropNamespace: func(ctx context.Context, a target.OpenArgs) error {
				return postgres.DropNamespace(ctx, a.URL, a.Namespace)
			},
		},
		{
			Name: "redis", Batches: true, Description: "Redis through rueidis, keys under a storebench prefix", Server: server.Redis,
			Schemes: []string{"redis", "rediss"}, Prototype: (*redis.Store)(nil), ClientPrototype: (*redis.Client)(nil), CheckURL: redis.CheckURL,
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				return redis.New(ctx, redis.Config{URL: a.URL, Namespace: a.Namespace})
			},
			// Listing SCANs every key of the server: clean does it, a run does not.
			Namespace: "keys " + redis.KeyPrefix + "%s:*",
			Namespaces: func(ctx context.Context, a target.OpenArgs) ([]string, error) {
				return redis.Namespaces(ctx, a.URL)
			},
			DropNamespace: func(ctx context.Context, a target.OpenArgs) error {
				return redis.DropNamespace(ctx, a.URL, a.Namespace)
			},
		},
		{
			Name: "memcached", Batches: true, Description: "Memcached through gomemcache, prefixed keys", Server: server.Memcached,
			Schemes: []string{"memcached"}, Prototype: (*memcached.Store)(nil), ClientPrototype: (*memcached.Client)(nil),
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
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				return mysql.New(ctx, mysql.Config{URL: a.URL, Namespace: a.Namespace})
			},
			Namespace: "database %s", CheapList: true,
			Namespaces: func(ctx context.Context, a target.OpenArgs) ([]string, error) {
				return mysql.Namespaces(ctx, a.URL)
			},
			DropNamespace: func(ctx context.Context, a target.OpenArgs) error {
				return mysql.DropNamespace(ctx, a.URL, a.Namespace)
			},
		},
		{
			// Valkey speaks Redis's protocol: the redis store and driver, its
			// own managed server (binary, version, build). No URL scheme: a
			// redis:// URL reaches a Valkey server as the redis store.
			Name: "valkey", Batches: true, Description: "Valkey through rueidis (the redis store), keys under a storebench prefix", Server: server.Valkey,
			Prototype: (*redis.Store)(nil), ClientPrototype: (*redis.Client)(nil),
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
	}
}

// maxValkeyIOThreads is valkey-server's IO_THREADS_MAX_NUM.
const maxValkeyIOThreads = 256

func boolOption(opts map[string]string, name string) (bool, error) {
	v, ok := opts[name]
	if !ok {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("option %s=%q: want true or false", name, v)
	}
	return b, nil
}

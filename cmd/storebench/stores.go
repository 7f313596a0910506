package main

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"

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
	kv := []string{"kv", "throughput", "mix", "hotkey", "web"}
	crash := append([]string{"durability", "sessions"}, kv...)
	sql := append([]string{"payments"}, crash...)
	return target.Registry{
		{
			Name: "memory", Batches: true, DataInProcess: true, Description: "in-process map: the floor, no I/O at all", Workloads: kv,
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				return memory.New(ctx, memory.Config{Namespace: a.Namespace})
			},
		},
		{
			Name: "files", Description: "one file per key, written via temp file + rename", Schemes: []string{"file"}, Workloads: crash,
			Options:      map[string]string{"fsync": "true: fsync each file and its directory before a write returns"},
			CheckOptions: func(o map[string]string) error { _, err := boolOption(o, "fsync"); return err },
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				dir := a.RunDir
				if a.URL != "" {
					u, _ := url.Parse(a.URL)
					dir = u.Path
				}
				fsync, err := boolOption(a.Options, "fsync")
				if err != nil {
					return nil, err
				}
				return files.New(ctx, files.Config{Dir: dir, Namespace: a.Namespace, Fsync: fsync})
			},
		},
		{
			Name: "sqlite", Description: "a SQLite file, WAL journal, synchronous=NORMAL by default", Schemes: []string{"sqlite"}, Workloads: sql,
			Options: map[string]string{"journal_mode": "WAL (default), DELETE, TRUNCATE, MEMORY, OFF", "synchronous": "NORMAL (default), FULL, OFF"},
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				path := filepath.Join(a.RunDir, "storebench.db")
				if a.URL != "" {
					u, _ := url.Parse(a.URL)
					path = u.Path
				}
				return sqlite.New(ctx, sqlite.Config{Path: path, Namespace: a.Namespace, JournalMode: a.Options["journal_mode"], Synchronous: a.Options["synchronous"]})
			},
		},
		{
			Name: "postgres", Batches: true, Description: "PostgreSQL through pgx, prepared statements, its own schema", Server: server.Postgres,
			Schemes: []string{"postgres", "postgresql"}, Workloads: sql,
			Options: map[string]string{"design": "logged (default), unlogged, hash-index, covering; combine with commas, e.g. unlogged,covering"},
			CheckOptions: func(o map[string]string) error {
				return postgres.Config{URL: "postgres://check", Namespace: "check", Design: o["design"]}.Validate()
			},
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				return postgres.New(ctx, postgres.Config{URL: a.URL, Namespace: a.Namespace, Design: a.Options["design"]})
			},
		},
		{
			Name: "redis", Batches: true, Description: "Redis through rueidis, keys under a storebench prefix", Server: server.Redis,
			Schemes: []string{"redis", "rediss"}, Workloads: crash,
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				return redis.New(ctx, redis.Config{URL: a.URL, Namespace: a.Namespace})
			},
		},
		{
			Name: "memcached", Batches: true, Description: "Memcached through gomemcache, prefixed keys", Server: server.Memcached,
			Schemes: []string{"memcached"}, Workloads: crash,
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
		},
		{
			Name: "mariadb", Description: "MariaDB/MySQL (InnoDB) through go-sql-driver/mysql, its own database", Server: server.MariaDB,
			Schemes: []string{"mysql", "mariadb"}, Workloads: sql,
			Open: func(ctx context.Context, a target.OpenArgs) (store.Store, error) {
				return mysql.New(ctx, mysql.Config{URL: a.URL, Namespace: a.Namespace})
			},
		},
	}
}

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

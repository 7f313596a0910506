// Package store defines what every data store offers to the workloads: a Store
// that opens clients (one connection each) and small capability interfaces that
// clients implement. Workloads and the planner check capabilities by type
// assertion, so an impossible (store, workload) pair is reported before a run,
// never faked half-way through.
//
// This package imports none of storebench's other packages.
package store

import (
	"context"
	"time"
)

// Store is one concrete target: a managed server, an external URL or a local
// directory. It is safe for concurrent use; its clients are not.
type Store interface {
	// Open returns a new client with its own connection, owned by one worker.
	Open(ctx context.Context) (Client, error)
	// Info reads back what is being measured: version and effective settings.
	Info(ctx context.Context) (Info, error)
	// Reset removes every piece of data this store created (its schema, its
	// key prefix, its directory) and leaves it ready for a fresh workload.
	// It never touches anything it did not create.
	Reset(ctx context.Context) error
	// Close releases the store's own resources and removes what it created.
	Close(ctx context.Context) error
}

// Client is one connection. It is used by one goroutine at a time.
type Client interface {
	Close() error
}

// KV is the key-value capability: a Client that implements it can run the kv,
// hotkey and throughput workloads.
type KV interface {
	// Get appends the value of key to dst[:0] and returns it. ok is false when
	// the key does not exist; that is not an error.
	Get(ctx context.Context, key, dst []byte) (val []byte, ok bool, err error)
	// Set stores val under key. ttl 0 means no expiry.
	Set(ctx context.Context, key, val []byte, ttl time.Duration) error
	// Delete removes key; deleting a missing key is not an error.
	Delete(ctx context.Context, key []byte) error
}

// Info describes a target as measured, for the result file.
type Info struct {
	// Kind is the store kind: memory, files, sqlite, postgres, redis, memcached, mysql.
	Kind string `json:"kind"`
	// Version is the server's or library's version as it reports it.
	Version string `json:"version"`
	// Location is where the data lives: a redacted URL, a path, "in-process".
	Location string `json:"location"`
	// Settings are the effective settings read back from the store, not the
	// ones storebench asked for.
	Settings map[string]string `json:"settings,omitempty"`
	// Durability says in a few words what a crash would lose, e.g.
	// "memory only", "fsync every commit", "OS page cache, no fsync".
	Durability string `json:"durability"`
	// Namespace is what storebench owns inside the store: schema, key prefix, directory.
	Namespace string `json:"namespace,omitempty"`
}

// Batcher is the optional capability of sending several operations in one
// round trip: Redis pipelines, Memcached multi-get, PostgreSQL pipeline
// mode. Workloads use it for --pipeline and for bulk loads (--batch).
type Batcher interface {
	// SetBatch stores vals[i] under keys[i], in as few round trips as the
	// store allows. ttl 0 means no expiry.
	SetBatch(ctx context.Context, keys, vals [][]byte, ttl time.Duration) error
	// GetBatch looks up every key; it appends the value of keys[i] to
	// dst[i][:0] and sets found[i]. It returns dst, whose slices it may have grown.
	GetBatch(ctx context.Context, keys, dst [][]byte, found []bool) ([][]byte, error)
}

// BulkLoader is the optional capability of loading many rows the fastest
// way the store knows (PostgreSQL COPY), for --batch.
type BulkLoader interface {
	Load(ctx context.Context, keys, vals [][]byte) error
}

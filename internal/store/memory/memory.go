// Package memory is the in-process store: a map in this process, the floor
// every other store is compared against. Nothing leaves the process, so a
// crash or exit loses everything.
package memory

import (
	"context"
	"errors"
	"hash/maphash"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storebench/storebench/internal/store"
)

// DefaultShards is the number of lock shards when Config.Shards is 0.
const DefaultShards = 256

// Config configures an in-process store.
type Config struct {
	// Namespace labels the store in results; there is nothing shared to protect.
	Namespace string
	// Shards is the number of independently locked maps (a power of two); 0 means DefaultShards.
	Shards int
}

// Validate checks the config.
func (c Config) Validate() error {
	if err := store.ValidNamespace(c.Namespace); err != nil {
		return err
	}
	if c.Shards < 0 || c.Shards&(c.Shards-1) != 0 {
		return errors.New("memory: shards must be a power of two")
	}
	return nil
}

// Store is a sharded map guarded by one RWMutex per shard.
//
// Why not sync.Map: on a 2-core machine with 100k keys, 8 goroutines and
// 90% gets, the sharded map measured ~230 ns/op against ~390 ns/op for
// sync.Map, and 0 allocations per get: a builtin map lookup with m[string(b)]
// does not copy the key.
type Store struct {
	cfg    Config
	seed   maphash.Seed
	mask   uint64
	shards []shard
	closed atomic.Bool
}

type shard struct {
	mu sync.RWMutex
	m  map[string]entry
	_  [32]byte // pads to 64 bytes: neighbouring shards' locks do not share a cache line
}

type entry struct {
	val []byte
	exp int64 // unix nanoseconds; 0 = no expiry
}

var _ store.Store = (*Store)(nil)

var errClosed = errors.New("memory: store is closed")

// New returns an empty in-process store.
func New(_ context.Context, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Shards == 0 {
		cfg.Shards = DefaultShards
	}
	s := &Store{cfg: cfg, seed: maphash.MakeSeed(), mask: uint64(cfg.Shards - 1), shards: make([]shard, cfg.Shards)}
	s.clear()
	return s, nil
}

func (s *Store) clear() {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.m = make(map[string]entry)
		sh.mu.Unlock()
	}
}

func (s *Store) shard(key []byte) *shard {
	return &s.shards[maphash.Bytes(s.seed, key)&s.mask]
}

// Open returns a client; clients share the store's map.
func (s *Store) Open(context.Context) (store.Client, error) {
	if s.closed.Load() {
		return nil, errClosed
	}
	return &Client{s: s}, nil
}

// Info describes the store.
func (s *Store) Info(context.Context) (store.Info, error) {
	return store.Info{
		Kind:     "memory",
		Version:  runtime.Version(),
		Location: "in-process",
		Settings: map[string]string{
			"implementation": "map[string][]byte sharded by maphash, one sync.RWMutex per shard",
			"shards":         strconv.Itoa(s.cfg.Shards),
			"gomaxprocs":     strconv.Itoa(runtime.GOMAXPROCS(0)),
		},
		Durability: "memory only (process)",
		Namespace:  s.cfg.Namespace,
	}, nil
}

// Reset empties the map.
func (s *Store) Reset(context.Context) error {
	if s.closed.Load() {
		return errClosed
	}
	s.clear()
	return nil
}

// Close empties the map; later Opens fail. Closing twice is not an error.
func (s *Store) Close(context.Context) error {
	if s.closed.Swap(true) {
		return nil
	}
	s.clear()
	return nil
}

// Client is one handle on the store; with no connection to own it only
// carries the store pointer, so every store has the same shape.
type Client struct {
	s *Store
}

var (
	_ store.KV    = (*Client)(nil)
	_ store.Adder = (*Client)(nil)
)

// Close does nothing: there is no connection.
func (c *Client) Close() error { return nil }

// Get appends a copy of the value to dst[:0], so callers never alias the map.
func (c *Client) Get(_ context.Context, key, dst []byte) ([]byte, bool, error) {
	sh := c.s.shard(key)
	sh.mu.RLock()
	e, ok := sh.m[string(key)]
	if ok && e.exp != 0 && time.Now().UnixNano() >= e.exp {
		ok = false // expired entries stay until overwritten, deleted or Reset
	}
	if ok {
		dst = append(dst[:0], e.val...)
	} else {
		dst = dst[:0]
	}
	sh.mu.RUnlock()
	return dst, ok, nil
}

// Set stores a copy of val, so the caller may reuse its buffer.
func (c *Client) Set(_ context.Context, key, val []byte, ttl time.Duration) error {
	e := entry{val: append(make([]byte, 0, len(val)), val...)}
	if ttl > 0 {
		e.exp = time.Now().Add(ttl).UnixNano()
	}
	sh := c.s.shard(key)
	sh.mu.Lock()
	sh.m[string(key)] = e
	sh.mu.Unlock()
	return nil
}

// Delete removes key.
func (c *Client) Delete(_ context.Context, key []byte) error {
	sh := c.s.shard(key)
	sh.mu.Lock()
	delete(sh.m, string(key))
	sh.mu.Unlock()
	return nil
}

// Add stores a copy of val unless key holds an unexpired value, under the
// shard's lock, so of racing Adds exactly one succeeds.
func (c *Client) Add(_ context.Context, key, val []byte, ttl time.Duration) (bool, error) {
	e := entry{val: append(make([]byte, 0, len(val)), val...)}
	now := time.Now()
	if ttl > 0 {
		e.exp = now.Add(ttl).UnixNano()
	}
	sh := c.s.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if old, ok := sh.m[string(key)]; ok && (old.exp == 0 || now.UnixNano() < old.exp) {
		return false, nil
	}
	sh.m[string(key)] = e
	return true, nil
}

package memcached

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
	"time"

	"github.com/storebench/storebench/internal/store"
)

// PoolScheme is the URL scheme of a pool of memcached servers.
const PoolScheme = "memcached-pool"

// MaxPoolServers bounds a pool URL's server list.
const MaxPoolServers = 64

// PoolConfig configures a pool of memcached servers, over which the client
// spreads the keys by hashing them, as gomemcache's ServerList does. Its
// fields are Config's; its URL is memcached-pool://host:port,host:port[,…][/].
type PoolConfig Config

// CheckPoolURL parses a pool URL without connecting; its errors quote no
// part of raw.
func CheckPoolURL(raw string) error {
	_, err := parsePoolURL(raw)
	return err
}

func parsePoolURL(raw string) ([]string, error) {
	u, err := store.ParseSchemeURL(raw, PoolScheme)
	if err != nil {
		return nil, err
	}
	switch {
	case u.User != nil:
		return nil, errors.New("memcached has no users or passwords: write memcached-pool://host:port,host:port/")
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "":
		return nil, errors.New("a path or parameters: a pool URL is its servers alone, memcached-pool://host:port,host:port/")
	}
	addrs := strings.Split(u.Host, ",")
	if len(addrs) > MaxPoolServers {
		return nil, fmt.Errorf("%d servers: at most %d", len(addrs), MaxPoolServers)
	}
	if err := store.CheckHostPorts(addrs, "server"); err != nil {
		return nil, err
	}
	return addrs, nil
}

// PoolStore is one key prefix on a pool of memcached servers: a Store per
// server, each key on the server its hash picks.
type PoolStore struct {
	servers []*Store
	loc     string
	ns      string
}

var (
	_ store.Store       = (*PoolStore)(nil)
	_ store.NodeCounter = (*PoolStore)(nil)
	_ store.Detacher    = (*PoolStore)(nil)
	_ store.KeyNoder    = (*PoolStore)(nil)
)

// NewPool checks that every server answers.
func NewPool(ctx context.Context, cfg PoolConfig) (*PoolStore, error) {
	addrs, err := parsePoolURL(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("memcached pool: bad URL %s: %w", store.SafeURL(cfg.URL), err)
	}
	p := &PoolStore{loc: store.RedactURL(cfg.URL), ns: cfg.Namespace}
	for _, a := range addrs {
		s, err := New(ctx, Config{URL: "memcached://" + a, Namespace: cfg.Namespace, Timeout: cfg.Timeout})
		if err != nil {
			return nil, err
		}
		p.servers = append(p.servers, s)
	}
	return p, nil
}

// Open connects a client to every server: one connection each.
func (p *PoolStore) Open(ctx context.Context) (store.Client, error) {
	pc := &PoolClient{}
	for _, s := range p.servers {
		c, err := s.Open(ctx)
		if err != nil {
			pc.Close()
			return nil, err
		}
		pc.clients = append(pc.clients, c.(*Client))
	}
	return pc, nil
}

// Info is the first server's version and settings (a managed pool's
// servers are checked alike by the server manager) and the pool's size.
func (p *PoolStore) Info(ctx context.Context) (store.Info, error) {
	info, err := p.servers[0].Info(ctx)
	if err != nil {
		return info, err
	}
	info.Kind, info.Location = "memcached-pool", p.loc
	info.Settings["pool_servers"] = strconv.Itoa(len(p.servers))
	info.Settings["client"] = "a gomemcache-style client per server, one connection each; a key goes to the server gomemcache's ServerList picks (CRC-32 of the key, modulo the server count)"
	return info, nil
}

// NodeCounts reads every server's stats: cmd_get (a multi-get counts each
// key) and cmd_set.
func (p *PoolStore) NodeCounts(ctx context.Context) ([]store.NodeCount, error) {
	var out []store.NodeCount
	var errs []error
	for _, s := range p.servers {
		st, err := s.stats(ctx, "")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n := store.NodeCount{Addr: s.addr, Role: "server"}
		n.Reads, _ = strconv.ParseInt(st["cmd_get"], 10, 64)
		n.Writes, _ = strconv.ParseInt(st["cmd_set"], 10, 64)
		for _, k := range []string{"cmd_touch", "delete_hits", "delete_misses"} {
			v, _ := strconv.ParseInt(st[k], 10, 64)
			n.Other += v
		}
		out = append(out, n)
	}
	return out, errors.Join(errs...)
}

// KeyNodes is the pool's pick: the list is fixed, so no round trip.
func (p *PoolStore) KeyNodes(context.Context) (func(key []byte) string, error) {
	return func(key []byte) string { return p.servers[pickIndex(key, len(p.servers))].addr }, nil
}

// Reset moves every server's store to a new generation (see Store's).
func (p *PoolStore) Reset(ctx context.Context) error {
	return p.each(func(s *Store) error { return s.Reset(ctx) })
}

// Close closes every server's store.
func (p *PoolStore) Close(ctx context.Context) error {
	return p.each(func(s *Store) error { return s.Close(ctx) })
}

// Detach detaches every server's store.
func (p *PoolStore) Detach(ctx context.Context) error {
	return p.each(func(s *Store) error { return s.Detach(ctx) })
}

func (p *PoolStore) each(f func(*Store) error) error {
	var errs []error
	for _, s := range p.servers {
		errs = append(errs, f(s))
	}
	return errors.Join(errs...)
}

// PoolClient is a client of every server of a pool.
type PoolClient struct {
	clients []*Client
	// Batches: per server, the positions of the batch's keys it holds,
	// and the sub-batch's keys, values, results; reused batch to batch.
	idx   [][]int
	keys  [][]byte
	vals  [][]byte
	dst   [][]byte
	found []bool
}

var (
	_ store.KV         = (*PoolClient)(nil)
	_ store.Adder      = (*PoolClient)(nil)
	_ store.Batcher    = (*PoolClient)(nil)
	_ store.BulkLoader = (*PoolClient)(nil)
)

// pickMax is how much of a key gomemcache's ServerList hashes (its key
// buffer): longer keys are hashed by their first pickMax bytes.
const pickMax = 256

// pick is the index of the server for key: the server gomemcache's
// ServerList.PickServer picks among the same list (a test checks it), without
// its string conversion and lock.
func (c *PoolClient) pick(key []byte) int { return pickIndex(key, len(c.clients)) }

// pickIndex is the index, among n servers, of the one that holds key.
func pickIndex(key []byte, n int) int {
	if n == 1 {
		return 0
	}
	return int(crc32.ChecksumIEEE(key[:min(len(key), pickMax)]) % uint32(n))
}

// ClientIO is how the first server's connection waits (every one alike).
func (c *PoolClient) ClientIO() string { return c.clients[0].ClientIO() }

// Close closes every server's connection.
func (c *PoolClient) Close() error {
	var errs []error
	for _, cl := range c.clients {
		errs = append(errs, cl.Close())
	}
	return errors.Join(errs...)
}

// Get, Set, Add and Delete go to the key's server.
func (c *PoolClient) Get(ctx context.Context, key, dst []byte) ([]byte, bool, error) {
	return c.clients[c.pick(key)].Get(ctx, key, dst)
}

// Set stores val on the key's server.
func (c *PoolClient) Set(ctx context.Context, key, val []byte, ttl time.Duration) error {
	return c.clients[c.pick(key)].Set(ctx, key, val, ttl)
}

// Add adds val on the key's server.
func (c *PoolClient) Add(ctx context.Context, key, val []byte, ttl time.Duration) (bool, error) {
	return c.clients[c.pick(key)].Add(ctx, key, val, ttl)
}

// Delete removes key from its server.
func (c *PoolClient) Delete(ctx context.Context, key []byte) error {
	return c.clients[c.pick(key)].Delete(ctx, key)
}

// split groups the batch's key positions by server into c.idx.
func (c *PoolClient) split(keys [][]byte) {
	if len(c.idx) != len(c.clients) {
		c.idx = make([][]int, len(c.clients))
	}
	for i := range c.idx {
		c.idx[i] = c.idx[i][:0]
	}
	for i, k := range keys {
		s := c.pick(k)
		c.idx[s] = append(c.idx[s], i)
	}
}

// SetBatch sends each server its part of the batch, one pipeline per
// server, one server after the other.
func (c *PoolClient) SetBatch(ctx context.Context, keys, vals [][]byte, ttl time.Duration) error {
	return c.setEach(keys, vals, func(cl *Client, k, v [][]byte) error { return cl.SetBatch(ctx, k, v, ttl) })
}

// Load stores the pairs, each server's part pipelined (Client.Load).
func (c *PoolClient) Load(ctx context.Context, keys, vals [][]byte) error {
	return c.setEach(keys, vals, func(cl *Client, k, v [][]byte) error { return cl.Load(ctx, k, v) })
}

func (c *PoolClient) setEach(keys, vals [][]byte, set func(cl *Client, k, v [][]byte) error) error {
	if err := store.CheckPairs(keys, vals); err != nil {
		return opErr("set batch", err)
	}
	c.split(keys)
	var first error
	for s, idx := range c.idx {
		if len(idx) == 0 {
			continue
		}
		c.keys, c.vals = c.keys[:0], c.vals[:0]
		for _, i := range idx {
			c.keys, c.vals = append(c.keys, keys[i]), append(c.vals, vals[i])
		}
		if err := set(c.clients[s], c.keys, c.vals); err != nil && first == nil {
			first = err
		}
	}
	clear(c.keys[:cap(c.keys)]) // keep no reference to the caller's buffers
	clear(c.vals[:cap(c.vals)])
	return first
}

// GetBatch sends each server a multi-get of its keys, one server after the
// other, and puts every value back at its key's position.
func (c *PoolClient) GetBatch(ctx context.Context, keys, dst [][]byte, found []bool) ([][]byte, error) {
	dst, err := store.BatchDst(dst, found, len(keys))
	if err != nil {
		return dst, opErr("get batch", err)
	}
	c.split(keys)
	var first error
	for s, idx := range c.idx {
		if len(idx) == 0 {
			continue
		}
		c.keys, c.dst, c.found = c.keys[:0], c.dst[:0], c.found[:0]
		for _, i := range idx {
			c.keys, c.dst, c.found = append(c.keys, keys[i]), append(c.dst, dst[i]), append(c.found, false)
		}
		c.dst, err = c.clients[s].GetBatch(ctx, c.keys, c.dst, c.found)
		if err != nil && first == nil {
			first = err
		}
		for j, i := range idx {
			dst[i], found[i] = c.dst[j], c.found[j]
		}
	}
	clear(c.keys[:cap(c.keys)])
	clear(c.dst[:cap(c.dst)]) // the values belong to dst now
	return dst, first
}

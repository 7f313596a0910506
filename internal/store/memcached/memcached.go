// Package memcached is the Memcached store (github.com/bradfitz/gomemcache).
//
// Keys are "sb:<namespace>:<generation>:<key>". Memcached keys are at most 250
// bytes of printable ASCII without spaces, so the key part is written as:
//   - the key itself when it is printable ASCII, does not start with '#' or
//     '$', and fits;
//   - otherwise "#" + base64url(key) when that fits;
//   - otherwise "$" + base64url(sha256(key)): long keys share a name only if
//     their SHA-256 collides.
//
// Memcached cannot list keys, and storebench never sends flush_all: Reset and
// Close bump the generation in the prefix instead, so the keys written before
// become unreachable and leave by expiry or eviction. The generation lives in
// the Store (in this process); namespaces are unique per run, so a later
// run never sees an earlier run's generation.
//
// One store.Client is one gomemcache.Client with MaxIdleConns 1: it is used by
// one goroutine, so it never needs a second connection and keeps the one it
// has (a test checks curr_connections). gomemcache takes no context: ctx is
// checked before each operation and Config.Timeout bounds each round trip.
// Get, Set and the batches (get.go, batch.go) write the text protocol
// themselves on that same connection.
package memcached

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/blockio"
	"github.com/storebench/storebench/internal/store/pollio"
)

// DefaultTimeout bounds connecting and each round trip.
const DefaultTimeout = 5 * time.Second

const (
	maxKey       = 250
	relativeTTLs = 30 * 24 * 3600 // memcached reads larger expirations as Unix times
)

// Config configures a Memcached store.
type Config struct {
	// URL is memcached://host:port.
	URL string
	// Namespace follows "sb:" in every key.
	Namespace string
	// Timeout bounds connecting and each round trip; 0 means DefaultTimeout.
	// A stalled get, set or delete fails after between Timeout and
	// 1.25×Timeout: the connection's deadline is moved only now and then
	// (trackedConn.SetDeadline).
	Timeout time.Duration
}

// Validate checks the config without connecting.
func (c Config) Validate() error {
	if _, err := parseURL(c.URL); err != nil {
		return err
	}
	if err := store.CheckTimeout("memcached", c.Timeout); err != nil {
		return err
	}
	return store.ValidNamespace(c.Namespace)
}

func parseURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "memcached" || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return "", fmt.Errorf("memcached: want memcached://host:port, got %q", store.RedactURL(raw))
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "11211")
	}
	return host, nil
}

// Store is one key prefix on one Memcached server.
type Store struct {
	cfg  Config
	addr string
	gen  atomic.Uint64 // bumped by Reset and Close

	mu     sync.Mutex
	closed bool
}

var _ store.Store = (*Store)(nil)

// New checks that the server answers. Memcached needs nothing created.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	s := &Store{cfg: cfg}
	s.addr, _ = parseURL(cfg.URL)
	s.gen.Store(1)
	if _, err := s.command(ctx, "version"); err != nil {
		return nil, err
	}
	return s, nil
}

var errClosed = errors.New("memcached: store is closed")

// Open connects a new client: one gomemcache.Client on one connection.
func (s *Store) Open(ctx context.Context) (store.Client, error) {
	c, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.mc.Ping(); err != nil { // dials now, not on the first measured op
		c.Close()
		return nil, errclass.WithClass(errclass.ClassUnavailable, fmt.Errorf("memcached: connect %s: %w", s.addr, err))
	}
	return c, nil
}

// OpenPerRequest returns a client that connects on its first operation, as
// PHP's Memcached::addServer does: a connection per request then costs the
// TCP handshake and the get, without the extra round trip of a ping. Its
// write buffer is small: it sends one command, not pipelines of sets.
func (s *Store) OpenPerRequest(ctx context.Context) (store.Client, error) {
	c, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	c.wbuf = perRequestWriteBuffer
	return c, nil
}

// Write buffers of the direct path: room for pipelined sets on a pooled
// client; on a per-request one, for a command line (a larger value bypasses
// the buffer), which spares a request allocating 32 KiB.
const (
	pooledWriteBuffer     = 32 << 10
	perRequestWriteBuffer = 512
)

// open returns a client that connects on its first operation.
func (s *Store) open(ctx context.Context) (*Client, error) {
	if store.Ended(&s.mu, &s.closed) {
		return nil, errClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := &Client{s: s, blocking: blockio.Use(ctx), wbuf: pooledWriteBuffer}
	c.mc = s.newMC(c)
	return c, nil
}

// ClientIO says how the connection waits for the server (blockio.Mode*).
func (c *Client) ClientIO() string { return blockio.ModeOf(c.blocking) }

// newMC makes the gomemcache client of c: one idle connection at most, and
// a dialer that lets c see that connection for its pipelined sets (batch.go).
func (s *Store) newMC(c *Client) *memcache.Client {
	mc := memcache.New(s.addr)
	mc.MaxIdleConns = 1
	mc.Timeout = s.cfg.Timeout
	mc.DialContext = c.dial
	return mc
}

// command sends one text-protocol command on a connection of its own and
// returns the reply lines up to END (or the single reply line).
func (s *Store) command(ctx context.Context, cmd string) ([]string, error) {
	d := net.Dialer{Timeout: s.cfg.Timeout}
	conn, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return nil, errclass.WithClass(errclass.ClassUnavailable, fmt.Errorf("memcached: connect %s: %w", s.addr, err))
	}
	defer conn.Close()
	dl := time.Now().Add(s.cfg.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	_ = conn.SetDeadline(dl)
	if _, err := conn.Write([]byte(cmd + "\r\n")); err != nil {
		return nil, fmt.Errorf("memcached: %s %s: %w", s.addr, cmd, err)
	}
	r := bufio.NewReader(conn)
	var lines []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("memcached: %s %s: %w", s.addr, cmd, err)
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "END":
			return lines, nil
		case strings.HasPrefix(line, "ERROR"), strings.HasPrefix(line, "CLIENT_ERROR"), strings.HasPrefix(line, "SERVER_ERROR"):
			return nil, fmt.Errorf("memcached: %s %s: %s", s.addr, cmd, line)
		case strings.HasPrefix(line, "VERSION "):
			return []string{line}, nil
		}
		lines = append(lines, line)
	}
}

func (s *Store) stats(ctx context.Context, which string) (map[string]string, error) {
	lines, err := s.command(ctx, strings.TrimSpace("stats "+which))
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, l := range lines {
		if f := strings.SplitN(l, " ", 3); len(f) == 3 && f[0] == "STAT" {
			m[f[1]] = f[2]
		}
	}
	return m, nil
}

// Info reads the version and the effective settings (stats settings), and
// the eviction count so far (stats).
func (s *Store) Info(ctx context.Context) (store.Info, error) {
	if store.Ended(&s.mu, &s.closed) {
		return store.Info{}, errClosed
	}
	v, err := s.command(ctx, "version")
	if err != nil {
		return store.Info{}, err
	}
	set, err := s.stats(ctx, "settings")
	if err != nil {
		return store.Info{}, err
	}
	st, err := s.stats(ctx, "")
	if err != nil {
		return store.Info{}, err
	}
	out := map[string]string{
		"client":     "gomemcache, one connection per client (MaxIdleConns 1), get and set written in the text protocol on its connection; a connection per op: dialed by its one command, no ping",
		"key_scheme": "sb:<namespace>:<generation>:<key | #base64url(key) | $base64url(sha256(key))>",
	}
	for _, k := range []string{"num_threads", "maxbytes", "item_size_max", "evictions", "maxconns", "lru_segmented", "hashpower_init"} {
		if v, ok := set[k]; ok {
			out[k] = v
		}
	}
	out["evicted_so_far"] = st["evictions"]
	return store.Info{
		Kind:       "memcached",
		Version:    strings.TrimPrefix(v[0], "VERSION "),
		Location:   "memcached://" + s.addr,
		Settings:   out,
		Durability: "memory only: a restart loses everything; items may also be evicted",
		Namespace:  s.cfg.Namespace,
	}, nil
}

// Reset makes every key written so far unreachable by moving to a new
// generation; memcached frees them by expiry or eviction. Nothing is flushed.
func (s *Store) Reset(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	s.gen.Add(1)
	return nil
}

// Close moves to a new generation, like Reset, and refuses further Opens.
// Closing twice is not an error.
func (s *Store) Close(context.Context) error {
	return store.EndOnce(&s.mu, &s.closed, func() error {
		s.gen.Add(1)
		return nil
	})
}

var _ store.Detacher = (*Store)(nil)

// Detach refuses further Opens and leaves the keys reachable under the
// current generation, until memcached expires or evicts them: it cannot
// list keys, so nothing can find them again to remove them.
func (s *Store) Detach(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// Client is one connection.
type Client struct {
	s      *Store
	mc     *memcache.Client
	gen    uint64 // generation prefix was built for
	prefix []byte // "sb:<namespace>:<generation>:"
	key    []byte // scratch
	// one and oneVal carry Set's pair to pipelineSets without allocating.
	one, oneVal [1][]byte

	// Pipelined sets (batch.go) on the connection gomemcache dialed last.
	conn  *trackedConn
	bconn *trackedConn // the connection bw and br are on
	cio   pollio.Conn  // what bw and br write and read through
	bw    *bufio.Writer
	br    *bufio.Reader
	ends  []int // getMulti: where each key of the batch ends in key

	blocking bool // every connection it dials blocks (blockio.Wrap)
	wbuf     int  // size of bw
}

var (
	_ store.KV    = (*Client)(nil)
	_ store.Adder = (*Client)(nil)
)

// Close closes the connection.
func (c *Client) Close() error {
	if err := c.closeConns(); err != nil {
		return opErr("close", err)
	}
	return nil
}

func printable(key []byte) bool {
	for _, b := range key {
		if b <= ' ' || b >= 0x7f {
			return false
		}
	}
	return true
}

// keyFor returns the memcached key for key (see the package doc).
func (c *Client) keyFor(key []byte) string {
	c.key = c.appendKey(c.key[:0], key)
	return string(c.key)
}

// appendKey appends the memcached key for key to k: the one encoding of
// Get, Set, Delete and the batches. k may already hold other keys (a
// multi-get's): the length limit is on what this call appends.
func (c *Client) appendKey(k, key []byte) []byte {
	if g := c.s.gen.Load(); g != c.gen || c.prefix == nil {
		c.gen = g
		c.prefix = append(append(append(c.prefix[:0], "sb:"+c.s.cfg.Namespace+":"...), strconv.FormatUint(g, 10)...), ':')
	}
	start := len(k)
	k = append(k, c.prefix...)
	switch n := len(k) - start; {
	case n+len(key) <= maxKey && printable(key) && (len(key) == 0 || key[0] != '#' && key[0] != '$'):
		k = append(k, key...)
	case n+1+base64.RawURLEncoding.EncodedLen(len(key)) <= maxKey:
		k = base64.RawURLEncoding.AppendEncode(append(k, '#'), key)
	default:
		sum := sha256.Sum256(key)
		k = base64.RawURLEncoding.AppendEncode(append(k, '$'), sum[:])
	}
	return k
}

// Get appends the value of key to dst[:0] (the direct path, get.go).
func (c *Client) Get(ctx context.Context, key, dst []byte) ([]byte, bool, error) {
	dst = dst[:0]
	if err := ctx.Err(); err != nil {
		return dst, false, opErr("get", err)
	}
	v, ok, err := c.get(key, dst)
	if err != nil {
		return dst, false, opErr("get", err)
	}
	return v, ok, nil
}

// Set stores val (the direct path, get.go); ttl > 0 is rounded up to whole
// seconds, the protocol's unit.
func (c *Client) Set(ctx context.Context, key, val []byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return opErr("set", err)
	}
	c.one[0], c.oneVal[0] = key, val
	err := c.pipelineSets(c.one[:], c.oneVal[:], expiration(ttl))
	c.one[0], c.oneVal[0] = nil, nil // keep no reference to the caller's buffers
	if err != nil {
		return opErr("set", err)
	}
	return nil
}

// expiration is ttl in the protocol's terms: whole seconds, rounded up,
// relative up to 30 days and a Unix time beyond; 0 means none.
func expiration(ttl time.Duration) int32 {
	if ttl <= 0 {
		return 0
	}
	sec := int64((ttl + time.Second - 1) / time.Second)
	if sec > relativeTTLs {
		sec += time.Now().Unix()
	}
	return int32(min(sec, 1<<31-1))
}

// Add stores val with the add command, which the server refuses
// (NOT_STORED) where the key holds an unexpired item; ttl as Set's.
func (c *Client) Add(ctx context.Context, key, val []byte, ttl time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, opErr("add", err)
	}
	err := c.mc.Add(&memcache.Item{Key: c.keyFor(key), Value: val, Expiration: expiration(ttl)})
	switch {
	case err == memcache.ErrNotStored:
		return false, nil
	case err != nil:
		return false, opErr("add", err)
	}
	return true, nil
}

// Delete removes key; a missing key is not an error.
func (c *Client) Delete(ctx context.Context, key []byte) error {
	if err := ctx.Err(); err != nil {
		return opErr("delete", err)
	}
	if err := c.mc.Delete(c.keyFor(key)); err != nil && err != memcache.ErrCacheMiss {
		return opErr("delete", err)
	}
	return nil
}

func opErr(op string, err error) error { return store.NewOpError("memcached", op, err, classify(err)) }

// classify finds a server that cannot be reached or reports its own error;
// "" leaves the decision to errclass.Classify.
func classify(err error) errclass.Class {
	var cte *memcache.ConnectTimeoutError
	if errors.As(err, &cte) || errors.Is(err, memcache.ErrServerError) {
		return errclass.ClassUnavailable
	}
	return ""
}

// Package redis is the Redis store (github.com/redis/rueidis).
//
// Keys are "storebench:<namespace>:<key>"; that prefix is the ownership mark.
// Reset and Close delete only keys with it (SCAN MATCH + UNLINK in batches)
// and never FLUSHALL or FLUSHDB.
//
// One store.Client is one rueidis client on exactly one TCP connection, used
// synchronously:
//   - ForceSingleClient and PipelineMultiplex -1: one pipe (the default for a
//     single node is 2^2 = 4 connections);
//   - DisableCache: no CLIENT TRACKING and no client-side cache, so a Get is
//     always a round trip;
//   - DisableAutoPipelining is NOT set: in this version it sends every command
//     through a second, pooled connection while the first stays open;
//   - Dialer.KeepAlive -1: no TCP keepalive and, above all, no background
//     PING, whose collision with a command would switch the pipe for good to
//     its pipelining goroutines;
//   - a context without a deadline is checked, then replaced by
//     context.Background(): rueidis queues commands whose context can be
//     cancelled but has no deadline onto those goroutines. Each command then
//     runs on the caller's goroutine (write, then read), as with other drivers.
//   - DisableRetry: a failed command is counted, not silently retried.
//
// Batches (pipelines), and Get and Set as batches of one, are written and
// read beside rueidis on the same connection, as C clients do (batch.go):
// rueidis's per-command work cost a third of the client's CPU at -P 16,
// and its Do an allocation per get.
//
// The connection count is checked by a test with CLIENT LIST.
package redis

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/blockio"
)

// KeyPrefix starts every key storebench writes; "<namespace>:" follows.
const KeyPrefix = "storebench:"

// DefaultTimeout bounds connecting and each command's round trip.
const DefaultTimeout = 5 * time.Second

// Config configures a Redis store.
type Config struct {
	// URL is redis://[user:password@]host:port[/db] (rediss:// for TLS).
	URL string
	// Namespace follows KeyPrefix in every key.
	Namespace string
	// Timeout bounds connecting and each command; 0 means DefaultTimeout.
	Timeout time.Duration
}

// Validate checks the config without connecting.
func (c Config) Validate() error {
	return store.CheckServerConfig("redis", c.URL, CheckURL, store.CheckTimeout("redis", c.Timeout), c.Namespace)
}

// Store is one key prefix on one Redis server.
type Store struct {
	keyspace // limit read once, at New
	cfg      Config
	opt      rueidis.ClientOption // parsed URL; copied for each client

	// preamble is the AUTH and SELECT a per-request connection sends before
	// its command (perrequest.go), which get preambleReplies replies.
	preamble        []byte
	preambleReplies int

	// recordFields are the records' fields (records.go), once set up;
	// under mu.
	recordFields []string
}

var _ store.Store = (*Store)(nil)

// New connects and checks the server answers. Redis needs nothing created.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Timeout = defaultTimeout(cfg.Timeout)
	opt, _ := parseURL(cfg.URL) // checked by Validate
	s := &Store{keyspace: newKeyspace(cfg.Namespace, cfg.URL), cfg: cfg, opt: opt}
	s.unlinkAll = s.deleteAll
	s.preamble, s.preambleReplies = preambleOf(opt.Username, opt.Password, opt.SelectDB)
	var err error
	if s.admin, err = s.connect(ctx, "storebench-admin:"+cfg.Namespace, false, nil); err != nil {
		return nil, err
	}
	if err := s.readLimit(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Store) addr() string {
	if len(s.opt.InitAddress) == 0 {
		return "?"
	}
	return s.opt.InitAddress[0]
}

// connect makes one rueidis client on one connection (see the package doc);
// with block, the connection reads and writes with blocking system calls
// (blockio), also while rueidis sets it up. Unless nil, dialed receives the
// connection as rueidis dials it (not over TLS), for the pipelined path
// (batch.go).
func (s *Store) connect(ctx context.Context, name string, block bool, dialed *atomic.Pointer[net.Conn]) (rueidis.Client, error) {
	opt := s.opt
	opt.InitAddress = append([]string(nil), s.opt.InitAddress...)
	opt.ForceSingleClient = true
	synchronous(&opt, name, s.cfg.Timeout)
	if block || dialed != nil {
		base := opt.DialCtxFn // unix:// URLs
		opt.DialCtxFn = func(ctx context.Context, dst string, d *net.Dialer, tc *tls.Config) (net.Conn, error) {
			var c net.Conn
			var err error
			if base != nil {
				c, err = base(ctx, dst, d, tc)
			} else {
				c, err = d.DialContext(ctx, "tcp", dst)
			}
			if err == nil && block {
				c, err = blockio.Wrap(c)
			}
			if err == nil && dialed != nil {
				dialed.Store(&c)
			}
			return c, err
		}
	}
	return dial(ctx, opt, s.addr())
}

// synchronous sets what every client of ours has (see the package doc):
// one pipe per node, no client-side cache, no retry, small ring and
// buffers, its name, the store's timeouts and no TCP keepalive.
func synchronous(opt *rueidis.ClientOption, name string, timeout time.Duration) {
	opt.PipelineMultiplex = -1
	opt.DisableCache = true
	opt.DisableRetry = true
	// The ring only queues commands for the background pipeline, which this
	// client avoids: 2 slots instead of 1024 (each a mutex, two sync.Conds
	// and a channel) make a connection about 0.8 ms cheaper to open.
	opt.RingScaleEachConn = 1
	opt.ClientName = name
	opt.Dialer = net.Dialer{Timeout: timeout, KeepAlive: -1}
	opt.ConnWriteTimeout = timeout
	// Small buffers: the default 0.5 MiB each way per connection adds up to
	// hundreds of MiB at high client counts; large values bypass bufio anyway.
	opt.ReadBufferEachConn = 64 << 10
	opt.WriteBufferEachConn = 64 << 10
}

// dial makes the rueidis client of opt, within ctx; addr names the server
// in its errors.
func dial(ctx context.Context, opt rueidis.ClientOption, addr string) (rueidis.Client, error) {
	type result struct {
		c   rueidis.Client
		err error
	}
	// NewClient dials with its own timeout, not ctx: honour ctx too.
	done := make(chan result, 1)
	go func() {
		c, err := rueidis.NewClient(opt)
		done <- result{c, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		go func() {
			if r := <-done; r.c != nil {
				r.c.Close()
			}
		}()
		return nil, errclass.WithClass(errclass.ClassTimeout, fmt.Errorf("redis: connect %s: %w", addr, ctx.Err()))
	}
	if r.err != nil {
		if r.c != nil { // ForceSingleClient returns a client even when the dial failed
			r.c.Close()
		}
		return nil, errclass.WithClass(errclass.ClassUnavailable, fmt.Errorf("redis: connect %s: %w", addr, r.err))
	}
	return r.c, nil
}

var errClosed = errors.New("redis: store is closed")

// checkOpen is errClosed once the store is closed, for opening a client.
func (s *Store) checkOpen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	return nil
}

// ClientIO says how the connection waits for the server (blockio.Mode*).
func (c *Client) ClientIO() string { return blockio.ModeOf(c.blocking) }

// Open connects a new client: one TCP connection.
func (s *Store) Open(ctx context.Context) (store.Client, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	// Not over TLS: rueidis would dial it itself.
	block := s.opt.TLSConfig == nil && blockio.Use(ctx)
	c := &Client{key: make([]byte, 0, 128), blocking: block, limit: s.limit, timeout: s.cfg.Timeout}
	var dialed *atomic.Pointer[net.Conn]
	if s.opt.TLSConfig == nil {
		dialed = &c.raw.conn
	}
	rc, err := s.connect(ctx, "storebench:"+s.cfg.Namespace, block, dialed)
	if err != nil {
		return nil, err
	}
	c.rc = rc
	c.key = append(c.key, s.prefix...)
	c.n = len(c.key)
	return c, nil
}

// configNames are read back with CONFIG GET for the result file.
var configNames = []string{"save", "appendonly", "appendfsync", "aof-use-rdb-preamble", "maxmemory", "maxmemory-policy", "io-threads"}

// Info reads the server version and its persistence settings (readServer).
func (s *Store) Info(ctx context.Context) (store.Info, error) {
	return s.info(ctx, "redis", "rueidis, one connection per client, no client-side cache, synchronous round trips; pipelines (batches): one write of every command and a buffered read of the replies on that connection, beside rueidis; a connection per op: RESP2 on a bare connection, its one command only (no HELLO, no closing PING)", nil)
}

// readServer reads into info what a Redis server says of itself: its
// version (INFO server), its persistence settings (CONFIG GET) and so its
// durability. Servers that forbid CONFIG get durability "unknown".
func readServer(ctx context.Context, admin rueidis.Client, info *store.Info) error {
	raw, err := admin.Do(ctx, admin.B().Info().Section("server").Build()).ToString()
	if err != nil {
		return opErr("info", err)
	}
	valkey := ""
	for k, v := range infoFields(raw) {
		switch k {
		case "redis_version":
			info.Version = v
		case "valkey_version":
			valkey = v
		case "redis_mode", "multiplexing_api", "arch_bits", "server_name":
			info.Settings[k] = v
		}
	}
	if valkey != "" {
		// Valkey reports redis_version 7.2.4 to old clients; its own
		// version is the one measured.
		info.Version = valkey
	}
	conf := map[string]string{}
	for _, name := range configNames {
		m, err := admin.Do(ctx, admin.B().ConfigGet().Parameter(name).Build()).AsStrMap()
		if err != nil {
			if _, isRedis := rueidis.IsRedisErr(err); !isRedis {
				return opErr("info: CONFIG GET "+name, err)
			}
			conf = nil // CONFIG disabled or renamed, as on managed services
			break
		}
		if v, ok := m[name]; ok {
			conf[name] = v
			info.Settings[name] = v
		}
	}
	info.Durability = durability(conf)
	return nil
}

// infoFields reads INFO-style "key:value" lines (under RESP3 a verbatim
// string, whose "txt:" prefix would glue onto the first key).
func infoFields(raw string) map[string]string {
	raw = strings.TrimPrefix(raw, "txt:")
	m := map[string]string{}
	for _, line := range strings.Split(raw, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			m[k] = v
		}
	}
	return m
}

// durability says in words what a crash loses under the CONFIG GET values.
func durability(c map[string]string) string {
	if c == nil {
		return "unknown (CONFIG GET not allowed)"
	}
	snap := ""
	if c["save"] != "" {
		snap = "RDB snapshots (save " + c["save"] + ")"
	}
	if c["appendonly"] == "yes" {
		var d string
		switch c["appendfsync"] {
		case "always":
			d = "AOF, fsync every write"
		case "everysec":
			d = "AOF, fsync every second: the last ~1 s may be lost"
		default:
			d = "AOF, fsync left to the OS: the last ~30 s may be lost"
		}
		if snap != "" {
			d += "; plus " + snap
		}
		return d
	}
	if snap != "" {
		return snap + " only: writes since the last snapshot are lost"
	}
	return "memory only: a restart loses everything"
}

// deleteAll unlinks every key with the namespace's prefix (unlinkPrefix).
func (s *Store) deleteAll(ctx context.Context) error {
	return unlinkPrefix(ctx, s.admin, s.prefix, "reset")
}

// Client is one connection.
type Client struct {
	rc       rueidis.Client
	key      []byte // the prefix, then the current key
	n        int    // length of the prefix
	blocking bool   // its socket blocks (blockio.Wrap)
	limit    valueLimit
	// cluster: rc is a Redis Cluster client, which routes a command by the
	// slot of its key, so every command names its key as one (Keys).
	cluster bool

	// Batches (batch.go): every prefixed key of the batch, back to back,
	// and the commands, both reused from batch to batch; raw is the
	// connection they go through when it is not TLS.
	bkeys []byte
	cmds  []rueidis.Completed
	raw   rawPipe
	// rawGet's destination and Set's key and value, as a batch of one
	// (a slice literal would be an allocation per op).
	one, oneKey, oneVal [1][]byte
	timeout             time.Duration
}

var (
	_ store.KV    = (*Client)(nil)
	_ store.Adder = (*Client)(nil)
)

// Close closes the connection.
func (c *Client) Close() error {
	c.rc.Close()
	return nil
}

// prefixed returns the full key as a string viewing c.key: rueidis writes it
// out during Do and keeps no use of it afterwards on the synchronous path.
func (c *Client) prefixed(key []byte) string {
	c.key = append(c.key[:c.n], key...)
	return rueidis.BinaryString(c.key)
}

// done drops the key buffer after an error: a command that failed may still
// be referenced by the driver, so its bytes must not be reused.
func (c *Client) done(err error) {
	if err != nil {
		c.key = append(make([]byte, 0, cap(c.key)), c.key[:c.n]...)
	}
}

// getCmd and setCmd build GET and SET for the hot paths with the Arbitrary
// builder: the typed builders hash every key (CRC16) for a cluster slot that
// a single node never uses, which cost ~0.2 µs per op of client CPU.
func (c *Client) getCmd(key string) rueidis.Completed {
	return c.keyed("GET", key)
}

// setCmd builds SET key val, with PX px when px > 0.
func (c *Client) setCmd(key, val string, px int64) rueidis.Completed {
	if px > 0 {
		return c.keyed("SET", key, val, "PX", strconv.FormatInt(px, 10))
	}
	return c.keyed("SET", key, val)
}

// keyed builds command name on key, then args: the key as a plain argument
// for one node (no slot hashing), as the key whose slot routes the command
// for a cluster.
func (c *Client) keyed(name, key string, args ...string) rueidis.Completed {
	if c.cluster {
		return c.rc.B().Arbitrary(name).Keys(key).Args(args...).Build()
	}
	return c.rc.B().Arbitrary(name).Args(key).Args(args...).Build()
}

// pxOf is ttl in whole milliseconds, rounded up; 0 means no expiry.
func pxOf(ttl time.Duration) int64 {
	if ttl <= 0 {
		return 0
	}
	return int64((ttl + time.Millisecond - 1) / time.Millisecond)
}

// Get appends the value of key to dst[:0].
func (c *Client) Get(ctx context.Context, key, dst []byte) ([]byte, bool, error) {
	dst = dst[:0]
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return dst, false, opErr("get", err)
	}
	if conn := c.raw.get(c.blocking); conn != nil {
		v, ok, err := c.rawGet(ctx, conn, key, dst)
		if err != nil {
			return v[:0], false, opErr("get", err)
		}
		return v, ok, nil
	}
	v, err := c.rc.Do(ctx, c.getCmd(c.prefixed(key))).AsBytes()
	c.done(err)
	if err != nil {
		if rueidis.IsRedisNil(err) {
			return dst, false, nil
		}
		return dst, false, opErr("get", err)
	}
	return append(dst, v...), true, nil
}

// Set stores val; ttl > 0 is sent as PX in whole milliseconds, rounded up.
func (c *Client) Set(ctx context.Context, key, val []byte, ttl time.Duration) error {
	ctx, err := store.SyncContext(ctx)
	if err == nil {
		err = c.limit.check(len(val))
	}
	if err != nil {
		return opErr("set", err)
	}
	if conn := c.raw.get(c.blocking); conn != nil {
		c.oneKey[0], c.oneVal[0] = key, val
		err = c.rawSetBatch(ctx, conn, c.oneKey[:], c.oneVal[:], pxOf(ttl))
		c.oneKey[0], c.oneVal[0] = nil, nil
	} else {
		err = c.rc.Do(ctx, c.setCmd(c.prefixed(key), rueidis.BinaryString(val), pxOf(ttl))).Error()
		c.done(err)
	}
	if err != nil {
		return opErr("set", c.limit.explain(err, len(val)))
	}
	return nil
}

// Add stores val with SET NX (PX as Set's): the server sets it only where
// the key does not exist, and expired keys do not exist for Redis.
func (c *Client) Add(ctx context.Context, key, val []byte, ttl time.Duration) (bool, error) {
	ctx, err := store.SyncContext(ctx)
	if err == nil {
		err = c.limit.check(len(val))
	}
	if err != nil {
		return false, opErr("add", err)
	}
	args := []string{rueidis.BinaryString(val), "NX"}
	if px := pxOf(ttl); px > 0 {
		args = append(args, "PX", strconv.FormatInt(px, 10))
	}
	err = c.rc.Do(ctx, c.keyed("SET", c.prefixed(key), args...)).Error()
	c.done(err)
	switch {
	case rueidis.IsRedisNil(err): // NX refused: the key holds a value
		return false, nil
	case err != nil:
		return false, opErr("add", c.limit.explain(err, len(val)))
	}
	return true, nil
}

// Delete removes key; a missing key is not an error.
func (c *Client) Delete(ctx context.Context, key []byte) error {
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return opErr("delete", err)
	}
	err = c.rc.Do(ctx, c.rc.B().Del().Key(c.prefixed(key)).Build()).Error()
	c.done(err)
	if err != nil {
		return opErr("delete", err)
	}
	return nil
}

func opErr(op string, err error) error { return store.NewOpError("redis", op, err, classify(err)) }

// classify reads error replies and a closing client; "" leaves the decision
// to errclass.Classify.
func classify(err error) errclass.Class {
	if re, ok := rueidis.IsRedisErr(err); ok {
		if c := replyClass(re.Error()); c != errclass.ClassOther {
			return c
		}
		return ""
	}
	// ErrClosing: our client is closing; EOF: the server closed the
	// connection under a command (it died, or a cluster node was killed).
	if errors.Is(err, rueidis.ErrClosing) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errclass.ClassUnavailable
	}
	return ""
}

// replyClass is the class of an error reply: a server that is loading its
// data, a replica that cannot serve, or a cluster that is down (a killed
// node's slots have no primary until a replica takes over, or for good
// without replicas) is unavailable; a busy script is a timeout.
func replyClass(msg string) errclass.Class {
	switch {
	case strings.HasPrefix(msg, "LOADING") || strings.HasPrefix(msg, "MASTERDOWN") || strings.HasPrefix(msg, "READONLY") ||
		strings.HasPrefix(msg, "CLUSTERDOWN"):
		return errclass.ClassUnavailable
	case strings.HasPrefix(msg, "BUSY"):
		return errclass.ClassTimeout
	}
	return errclass.ClassOther
}

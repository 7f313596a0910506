package memcached

// Sessions (the sessions workload): one item per session, key
// "sb:<namespace>:<generation>:s:<id>", its exptime the TTL in whole
// seconds (rounded up; above 30 days an absolute time, as the protocol
// reads it). Memcached expires items itself, lazily on access and by its
// LRU crawler, so there is no reaper; but it also evicts items when memory
// runs out, and an evicted session is a lost one: size -m above the working
// set. Its expiry clock ticks once a second, so a session may expire up to
// a second early or late (SessionCaps.Resolution).
//
// The text protocol is written directly on the client's one connection (the
// one gomemcache dialed, as SetBatch does):
//
//	create     add key 0 exptime bytes
//	read       get key, or gat exptime key when the design keeps alive on read
//	keepalive  touch key exptime for each id, pipelined; with skip-if-fresh
//	           first a pipelined "mg key t" (remaining TTL) for each id,
//	           then touch only those with less than refresh-below left

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/storebench/storebench/internal/store"
)

// SessionChunk is how many ids one pipelined keepalive round trip carries.
const SessionChunk = 1000

var _ store.Sessions = (*Store)(nil)

var (
	replyEnd      = []byte("END\r\n")
	replyTouched  = []byte("TOUCHED\r\n")
	replyNotFound = []byte("NOT_FOUND\r\n")
	replyNotStore = []byte("NOT_STORED\r\n")
	replyMetaMiss = []byte("EN\r\n")
	prefixValue   = []byte("VALUE ")
	prefixMetaHit = []byte("HD")
)

type sessionClient struct {
	c       *Client
	d       store.SessionDesign
	exp     int32 // exptime of the TTL
	refresh int64 // skip-if-fresh threshold in whole seconds; 0 = off
	id      []byte
	line    []byte
	stale   []int64 // ids a skip-if-fresh keepalive extends
}

// OpenSessions opens a session handle on a client of its own.
func (s *Store) OpenSessions(ctx context.Context, d store.SessionDesign) (store.SessionClient, error) {
	c, err := store.OpenChecked[*Client](ctx, s, d.CheckTimes("memcached", time.Second, "at least 1 s, the protocol's unit"))
	if err != nil {
		return nil, err
	}
	h := &sessionClient{c: c, d: d, exp: expiration(d.TTL)}
	if d.RefreshBelow > 0 {
		h.refresh = int64((d.RefreshBelow + time.Second - 1) / time.Second)
	}
	return h, nil
}

// Close closes the handle's client.
func (h *sessionClient) Close() error { return h.c.Close() }

func (h *sessionClient) Caps() store.SessionCaps {
	return store.SessionCaps{NativeExpiry: true, Resolution: time.Second}
}

// key appends the memcached key of session id to b.
func (h *sessionClient) key(b []byte, id int64) []byte {
	h.id = strconv.AppendInt(append(h.id[:0], 's', ':'), id, 10)
	return h.c.appendKey(b, h.id)
}

// Setup moves the store to a new key generation: sessions of an earlier
// design become unreachable and leave by expiry. Nothing is flushed.
func (h *sessionClient) Setup(context.Context) error {
	h.c.s.mu.Lock()
	defer h.c.s.mu.Unlock()
	if h.c.s.closed {
		return errClosed
	}
	h.c.s.gen.Add(1)
	return nil
}

// begin readies the connection for one exchange.
func (h *sessionClient) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := h.c.pipe(); err != nil {
		return err
	}
	dl := time.Now().Add(h.c.s.cfg.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	if err := h.c.conn.setDeadline(dl); err != nil {
		h.c.broken()
		return err
	}
	return nil
}

// fail closes the connection after an exchange it could not follow.
func (h *sessionClient) fail(op string, err error) error {
	h.c.broken()
	return opErr(op, err)
}

// Create adds the session under id; an existing id is an error.
func (h *sessionClient) Create(ctx context.Context, id int64, payload []byte) (int64, error) {
	if err := h.begin(ctx); err != nil {
		return 0, opErr("create session", err)
	}
	w := h.c.bw
	h.line = append(h.line[:0], "add "...)
	h.line = h.key(h.line, id)
	h.line = append(h.line, " 0 "...)
	h.line = strconv.AppendInt(h.line, int64(h.exp), 10)
	h.line = append(h.line, ' ')
	h.line = strconv.AppendInt(h.line, int64(len(payload)), 10)
	h.line = append(h.line, "\r\n"...)
	w.Write(h.line)
	w.Write(payload)
	w.WriteString("\r\n")
	if err := h.c.send(); err != nil {
		return 0, h.fail("create session", err)
	}
	line, err := h.c.reply()
	switch {
	case errors.Is(err, errServer):
		return 0, opErr("create session", err)
	case err != nil:
		return 0, h.fail("create session", err)
	case bytes.Equal(line, replyStored):
		return id, nil
	case bytes.Equal(line, replyNotStore):
		return 0, opErr("create session", fmt.Errorf("session %d exists", id))
	}
	return 0, h.fail("create session", fmt.Errorf("unexpected reply to add: %q", line))
}

// Read gets the session, or gets and touches it (gat) when the design keeps
// alive on read.
func (h *sessionClient) Read(ctx context.Context, id int64, dst []byte) ([]byte, bool, error) {
	dst = dst[:0]
	if err := h.begin(ctx); err != nil {
		return dst, false, opErr("read session", err)
	}
	if h.d.KeepaliveOnRead {
		h.line = append(h.line[:0], "gat "...)
		h.line = strconv.AppendInt(h.line, int64(h.exp), 10)
		h.line = append(h.line, ' ')
	} else {
		h.line = append(h.line[:0], "get "...)
	}
	k := len(h.line)
	h.line = h.key(h.line, id)
	key := h.line[k:]
	h.line = append(h.line, "\r\n"...)
	h.c.bw.Write(h.line)
	if err := h.c.send(); err != nil {
		return dst, false, h.fail("read session", err)
	}
	v, ok, err := h.c.readValue(key, dst)
	switch {
	case errors.Is(err, errServer):
		return dst, false, opErr("read session", err)
	case err != nil:
		return dst, false, h.fail("read session", err)
	}
	return v, ok, nil
}

// KeepAlive touches the sessions, SessionChunk per round trip; with
// skip-if-fresh only those whose remaining TTL (mg … t) is below the
// threshold.
func (h *sessionClient) KeepAlive(ctx context.Context, ids []int64) (int64, error) {
	var n int64
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), SessionChunk)]
		ids = ids[len(chunk):]
		if h.refresh > 0 {
			var err error
			if chunk, err = h.needRefresh(ctx, chunk); err != nil {
				return n, err
			}
			if len(chunk) == 0 {
				continue
			}
		}
		m, err := h.touch(ctx, chunk)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (h *sessionClient) touch(ctx context.Context, ids []int64) (int64, error) {
	if err := h.begin(ctx); err != nil {
		return 0, opErr("keepalive", err)
	}
	w := h.c.bw
	for _, id := range ids {
		h.line = append(h.line[:0], "touch "...)
		h.line = h.key(h.line, id)
		h.line = append(h.line, ' ')
		h.line = strconv.AppendInt(h.line, int64(h.exp), 10)
		h.line = append(h.line, "\r\n"...)
		w.Write(h.line)
	}
	if err := h.c.send(); err != nil {
		return 0, h.fail("keepalive", err)
	}
	var n int64
	for range ids {
		line, err := h.c.br.ReadSlice('\n')
		switch {
		case err != nil:
			return n, h.fail("keepalive", err)
		case bytes.Equal(line, replyTouched):
			n++
		case bytes.Equal(line, replyNotFound):
		default:
			return n, h.fail("keepalive", fmt.Errorf("unexpected reply to touch: %q", line))
		}
	}
	return n, nil
}

// needRefresh asks the remaining TTL of every id (meta get with the t
// flag, pipelined) and returns those that exist with less than the
// threshold left.
func (h *sessionClient) needRefresh(ctx context.Context, ids []int64) ([]int64, error) {
	if err := h.begin(ctx); err != nil {
		return nil, opErr("keepalive: remaining TTL", err)
	}
	w := h.c.bw
	for _, id := range ids {
		h.line = append(h.line[:0], "mg "...)
		h.line = h.key(h.line, id)
		h.line = append(h.line, " t\r\n"...)
		w.Write(h.line)
	}
	if err := h.c.send(); err != nil {
		return nil, h.fail("keepalive: remaining TTL", err)
	}
	h.stale = h.stale[:0]
	for _, id := range ids {
		line, err := h.c.br.ReadSlice('\n')
		switch {
		case err != nil:
			return nil, h.fail("keepalive: remaining TTL", err)
		case bytes.Equal(line, replyMetaMiss):
		case bytes.HasPrefix(line, prefixMetaHit):
			left := int64(-1)
			for _, f := range bytes.Fields(line[2:]) {
				if len(f) > 1 && f[0] == 't' {
					left, _ = strconv.ParseInt(string(f[1:]), 10, 64)
				}
			}
			if left >= 0 && left < h.refresh {
				h.stale = append(h.stale, id)
			}
		default:
			return nil, h.fail("keepalive: remaining TTL", fmt.Errorf("unexpected reply to mg: %q", line))
		}
	}
	return h.stale, nil
}

// Reap does nothing: Memcached expires items itself.
func (h *sessionClient) Reap(context.Context, int) (int64, error) { return 0, nil }

// Observe reads "stats": items, evictions (lost sessions), expired items
// reclaimed, and memory, for the whole server.
func (h *sessionClient) Observe(ctx context.Context) (store.SessionSample, error) {
	st, err := h.c.s.stats(ctx, "")
	if err != nil {
		return store.SessionSample{}, err
	}
	m := map[string]float64{}
	for _, k := range []string{"curr_items", "total_items", "bytes", "limit_maxbytes", "evictions", "reclaimed", "expired_unfetched",
		"evicted_unfetched", "evicted_active", "get_hits", "get_misses", "get_expired", "touch_hits", "touch_misses", "gat_hits", "gat_misses", "crawler_reclaimed"} {
		if v, ok := st[k]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				m[k] = f
			}
		}
	}
	return store.SessionSample{Rows: int64(m["curr_items"]), Expired: -1, Bytes: int64(m["bytes"]), Metrics: m}, nil
}

// Describe reads "stats settings" back and says which commands the design sends.
func (h *sessionClient) Describe(ctx context.Context) (map[string]string, error) {
	set, err := h.c.s.stats(ctx, "settings")
	if err != nil {
		return nil, err
	}
	exp := strconv.Itoa(int(h.exp))
	out := map[string]string{
		"key":       "sb:" + h.c.s.cfg.Namespace + ":<generation>:s:<id>",
		"create":    "add key 0 " + exp + " <bytes>",
		"read":      "get key",
		"keepalive": "touch key " + exp + ", pipelined " + strconv.Itoa(SessionChunk) + " per round trip",
		"reap":      "none: memcached expires items itself; evicted items are lost sessions",
	}
	if h.d.KeepaliveOnRead {
		out["read"] = "gat " + exp + " key (skip-if-fresh does not apply to it)"
	}
	if h.refresh > 0 {
		out["keepalive"] = "pipelined mg key t (remaining TTL), then pipelined touch key " + exp + " for those with less than " + strconv.FormatInt(h.refresh, 10) + " s left"
	}
	for _, k := range []string{"maxbytes", "evictions", "lru_crawler", "lru_maintainer_thread", "item_size_max", "num_threads"} {
		if v, ok := set[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}

// ServerSettings asks for nothing: Memcached needs no restart for sessions.
func (h *sessionClient) ServerSettings(context.Context) (map[string]string, error) { return nil, nil }

// SessionKnobs are the sessions design knobs this store's sessions honour
// (store.SessionKnobber).
func (s *Store) SessionKnobs() []string {
	return []string{"keepalive", "skip_fresh"}
}

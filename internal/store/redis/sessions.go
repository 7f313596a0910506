package redis

// Sessions (the sessions workload): one key per session,
// "storebench:<namespace>:s:<id>", with the TTL as the key's expiry. Redis
// removes expired keys itself (on access, and by its active expiry cycle),
// so there is no reaper.
//
//	create     SET key payload PX ttl NX
//	read       GET key, or GETEX key PX ttl when the design keeps alive on read
//	keepalive  PEXPIRE key ttl for each id, pipelined; with skip-if-fresh a
//	           Lua script per chunk extends only keys with less than
//	           refresh-below left (PTTL), server-side
//
// Persistence (none, AOF everysec, AOF always) is the server's profile.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/storebench/storebench/internal/store"
)

// SessionChunk is how many ids one pipelined keepalive round trip carries.
const SessionChunk = 1000

var _ store.Sessions = (*Store)(nil)

// skipFreshScript extends the keys (ARGV[1] ms) that exist and have less
// than ARGV[2] ms left, and returns how many it extended.
const skipFreshScript = `local n = 0
for _, k in ipairs(KEYS) do
  local t = redis.call('PTTL', k)
  if t >= 0 and t < tonumber(ARGV[2]) then
    redis.call('PEXPIRE', k, ARGV[1])
    n = n + 1
  end
end
return n`

type sessionClient struct {
	c         *Client
	d         store.SessionDesign
	ttlMs     int64
	refreshMs int64
	prefix    string // "storebench:<namespace>:s:"
	key       []byte
	keys      []string
	script    *rueidis.Lua
}

// OpenSessions opens a session handle on a client of its own.
func (s *Store) OpenSessions(ctx context.Context, d store.SessionDesign) (store.SessionClient, error) {
	c, err := store.OpenChecked[*Client](ctx, s, d.CheckTimes("redis", time.Millisecond, "at least 1 ms"))
	if err != nil {
		return nil, err
	}
	h := &sessionClient{c: c, d: d, ttlMs: ceilMs(d.TTL), refreshMs: ceilMs(d.RefreshBelow), prefix: string(c.key[:c.n]) + "s:"}
	if d.RefreshBelow > 0 {
		h.script = rueidis.NewLuaScript(skipFreshScript)
	}
	return h, nil
}

// Close closes the handle's client.
func (h *sessionClient) Close() error { return h.c.Close() }

func ceilMs(d time.Duration) int64 { return int64((d + time.Millisecond - 1) / time.Millisecond) }

func (h *sessionClient) Caps() store.SessionCaps {
	return store.SessionCaps{NativeExpiry: true, Resolution: time.Millisecond}
}

func (h *sessionClient) keyOf(id int64) string {
	h.key = strconv.AppendInt(append(h.key[:0], h.prefix...), id, 10)
	return rueidis.BinaryString(h.key)
}

// Setup unlinks the session keys of an earlier run of this namespace.
func (h *sessionClient) Setup(ctx context.Context) error {
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return opErr("sessions setup", err)
	}
	return unlinkPrefix(ctx, h.c.rc, h.prefix, "sessions setup")
}

// Create stores the session under id with SET … PX ttl NX.
func (h *sessionClient) Create(ctx context.Context, id int64, payload []byte) (int64, error) {
	ctx, err := store.SyncContext(ctx)
	if err == nil {
		err = h.c.limit.check(len(payload))
	}
	if err != nil {
		return 0, opErr("create session", err)
	}
	rc := h.c.rc
	err = rc.Do(ctx, rc.B().Set().Key(h.keyOf(id)).Value(rueidis.BinaryString(payload)).Nx().PxMilliseconds(h.ttlMs).Build()).Error()
	if err != nil {
		h.key = nil // the driver may still view a failed command's key
	}
	if rueidis.IsRedisNil(err) {
		return 0, opErr("create session", fmt.Errorf("session %d exists", id))
	}
	if err != nil {
		return 0, opErr("create session", h.c.limit.explain(err, len(payload)))
	}
	return id, nil
}

// Read gets the session, extending it with GETEX when the design says so.
func (h *sessionClient) Read(ctx context.Context, id int64, dst []byte) ([]byte, bool, error) {
	dst = dst[:0]
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return dst, false, opErr("read session", err)
	}
	rc := h.c.rc
	var cmd rueidis.Completed
	if h.d.KeepaliveOnRead {
		cmd = rc.B().Getex().Key(h.keyOf(id)).PxMilliseconds(h.ttlMs).Build()
	} else {
		cmd = rc.B().Get().Key(h.keyOf(id)).Build()
	}
	v, err := rc.Do(ctx, cmd).AsBytes()
	if err != nil {
		h.key = nil
		if rueidis.IsRedisNil(err) {
			return dst, false, nil
		}
		return dst, false, opErr("read session", err)
	}
	return append(dst, v...), true, nil
}

// KeepAlive extends the sessions, SessionChunk ids per round trip.
func (h *sessionClient) KeepAlive(ctx context.Context, ids []int64) (int64, error) {
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return 0, opErr("keepalive", err)
	}
	rc := h.c.rc
	var n int64
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), SessionChunk)]
		ids = ids[len(chunk):]
		h.keys = h.keys[:0]
		for _, id := range chunk {
			h.keys = append(h.keys, h.prefix+strconv.FormatInt(id, 10))
		}
		if h.script != nil {
			m, err := h.script.Exec(ctx, rc, h.keys, []string{strconv.FormatInt(h.ttlMs, 10), strconv.FormatInt(h.refreshMs, 10)}).AsInt64()
			if err != nil {
				return n, opErr("keepalive (script)", err)
			}
			n += m
			continue
		}
		cmds := make([]rueidis.Completed, len(h.keys))
		for i, k := range h.keys {
			cmds[i] = rc.B().Pexpire().Key(k).Milliseconds(h.ttlMs).Build()
		}
		for _, r := range rc.DoMulti(ctx, cmds...) {
			m, err := r.AsInt64()
			if err != nil {
				return n, opErr("keepalive", err)
			}
			n += m
		}
	}
	return n, nil
}

// Reap does nothing: Redis expires keys itself.
func (h *sessionClient) Reap(context.Context, int) (int64, error) { return 0, nil }

// Observe reads INFO: expired keys so far and the estimated share of
// expired keys still in memory, memory used, and the keyspace.
func (h *sessionClient) Observe(ctx context.Context) (store.SessionSample, error) {
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return store.SessionSample{}, opErr("observe sessions", err)
	}
	rc := h.c.rc
	raw, err := rc.Do(ctx, rc.B().Info().Section("stats").Section("memory").Section("keyspace").Build()).ToString()
	if err != nil {
		return store.SessionSample{}, opErr("observe sessions: INFO", err)
	}
	m := map[string]float64{}
	var keys, expires float64
	for _, line := range strings.Split(raw, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch k {
		case "expired_keys", "expired_stale_perc", "expired_time_cap_reached_count", "evicted_keys", "used_memory", "used_memory_rss", "keyspace_hits", "keyspace_misses":
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				m[k] = f
			}
		case "db0":
			for _, kv := range strings.Split(v, ",") {
				name, val, _ := strings.Cut(kv, "=")
				f, _ := strconv.ParseFloat(val, 64)
				switch name {
				case "keys":
					keys = f
				case "expires":
					expires = f
				}
			}
		}
	}
	m["db_keys"], m["db_expires"] = keys, expires
	return store.SessionSample{Rows: int64(keys), Expired: -1, Bytes: int64(m["used_memory"]), Metrics: m}, nil
}

// Describe reads the persistence and expiry settings back with CONFIG GET
// and says which commands the design sends.
func (h *sessionClient) Describe(ctx context.Context) (map[string]string, error) {
	ctx, err := store.SyncContext(ctx)
	if err != nil {
		return nil, opErr("describe sessions", err)
	}
	rc := h.c.rc
	out := map[string]string{
		"key":       h.prefix + "<id>",
		"create":    "SET key payload PX " + strconv.FormatInt(h.ttlMs, 10) + " NX",
		"read":      "GET key",
		"keepalive": "PEXPIRE key " + strconv.FormatInt(h.ttlMs, 10) + ", pipelined " + strconv.Itoa(SessionChunk) + " per round trip",
		"reap":      "none: Redis expires keys itself",
	}
	if h.d.KeepaliveOnRead {
		out["read"] = "GETEX key PX " + strconv.FormatInt(h.ttlMs, 10) + " (skip-if-fresh does not apply to it)"
	}
	if h.script != nil {
		out["keepalive"] = "EVALSHA of a script that PEXPIREs the keys with PTTL < " + strconv.FormatInt(h.refreshMs, 10) + " ms, " + strconv.Itoa(SessionChunk) + " keys per call"
	}
	for _, name := range []string{"appendonly", "appendfsync", "save", "maxmemory", "maxmemory-policy", "hz", "active-expire-effort"} {
		m, err := rc.Do(ctx, rc.B().ConfigGet().Parameter(name).Build()).AsStrMap()
		if err != nil {
			if _, isRedis := rueidis.IsRedisErr(err); isRedis {
				continue // CONFIG disabled on this server
			}
			return nil, opErr("describe sessions: CONFIG GET "+name, err)
		}
		if v, ok := m[name]; ok {
			out[name] = v
		}
	}
	return out, nil
}

// ServerSettings asks for nothing: Redis needs no restart for sessions.
func (h *sessionClient) ServerSettings(context.Context) (map[string]string, error) { return nil, nil }

// SessionKnobs are the sessions design knobs this store's sessions honour
// (store.SessionKnobber).
func (s *Store) SessionKnobs() []string {
	return []string{"keepalive", "skip_fresh"}
}

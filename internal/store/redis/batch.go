package redis

import (
	"context"
	"time"

	"github.com/redis/rueidis"

	"github.com/storebench/storebench/internal/store"
)

// LoadChunk is how many SETs Load pipelines per round trip.
const LoadChunk = 1000

var (
	_ store.Batcher    = (*Client)(nil)
	_ store.BulkLoader = (*Client)(nil)
)

// reserve makes room in bkeys for every prefixed key of a batch, so that
// bkey never reallocates while earlier keys of the batch still view it.
func (c *Client) reserve(keys [][]byte) {
	n := 0
	for _, k := range keys {
		n += c.n + len(k)
	}
	if cap(c.bkeys) < n {
		c.bkeys = make([]byte, 0, n)
	}
	c.bkeys = c.bkeys[:0]
}

// bkey appends the prefixed key to bkeys and returns a string viewing it;
// like prefixed, the driver does not keep it once DoMulti has returned.
func (c *Client) bkey(key []byte) string {
	start := len(c.bkeys)
	c.bkeys = append(append(c.bkeys, c.key[:c.n]...), key...)
	return rueidis.BinaryString(c.bkeys[start:])
}

// doMulti sends c.cmds with rueidis's DoMulti: on this client's one
// connection and, with store.SyncContext's context, on the caller's goroutine (write
// every command, flush once, read every reply), which is what
// redis-benchmark -P does. It returns the replies and forgets the commands,
// which rueidis recycles.
func (c *Client) doMulti(ctx context.Context) []rueidis.RedisResult {
	resps := c.rc.DoMulti(ctx, c.cmds...)
	clear(c.cmds)
	c.cmds = c.cmds[:0]
	return resps
}

// failed drops the batch key buffer after an error (see done).
func (c *Client) failed() { c.bkeys = nil }

// SetBatch sends one SET per key in one pipeline: one round trip.
func (c *Client) SetBatch(ctx context.Context, keys, vals [][]byte, ttl time.Duration) error {
	return c.setBatch(ctx, "set batch", keys, vals, ttl)
}

func (c *Client) setBatch(ctx context.Context, op string, keys, vals [][]byte, ttl time.Duration) error {
	if err := store.CheckPairs(keys, vals); err != nil {
		return opErr(op, err)
	}
	if len(keys) == 0 {
		return nil
	}
	ctx, err := store.SyncContext(ctx)
	if err == nil {
		err = c.limit.check(longest(vals))
	}
	if err != nil {
		return opErr(op, err)
	}
	px := pxOf(ttl)
	c.reserve(keys)
	for i, k := range keys {
		c.cmds = append(c.cmds, c.setCmd(c.bkey(k), rueidis.BinaryString(vals[i]), px))
	}
	for _, r := range c.doMulti(ctx) {
		if err = r.Error(); err != nil {
			break
		}
	}
	if err != nil {
		c.failed()
		return opErr(op, c.limit.explain(err, longest(vals)))
	}
	return nil
}

// GetBatch sends one GET per key in one pipeline (not one MGET: the
// pipeline of single commands is what redis-benchmark -P measures).
func (c *Client) GetBatch(ctx context.Context, keys, dst [][]byte, found []bool) ([][]byte, error) {
	return store.GetBatch(keys, dst, found, opErr, func(dst [][]byte) error {
		ctx, err := store.SyncContext(ctx)
		if err != nil {
			return opErr("get batch", err)
		}
		c.reserve(keys)
		for _, k := range keys {
			c.cmds = append(c.cmds, c.getCmd(c.bkey(k)))
		}
		var first error
		for i, r := range c.doMulti(ctx) {
			v, err := r.ToString()
			switch {
			case err == nil:
				dst[i], found[i] = append(dst[i][:0], v...), true
			case rueidis.IsRedisNil(err):
				dst[i], found[i] = dst[i][:0], false
			default:
				dst[i], found[i] = dst[i][:0], false
				if first == nil {
					first = err
				}
			}
		}
		if first != nil {
			c.failed()
			return opErr("get batch", first)
		}
		return nil
	})
}

// Load stores the pairs with pipelined SETs, LoadChunk per round trip.
// Existing keys are overwritten, as by Set.
func (c *Client) Load(ctx context.Context, keys, vals [][]byte) error {
	if err := store.CheckPairs(keys, vals); err != nil {
		return opErr("load", err)
	}
	for i := 0; i < len(keys); i += LoadChunk {
		j := min(i+LoadChunk, len(keys))
		if err := c.setBatch(ctx, "load", keys[i:j], vals[i:j], 0); err != nil {
			return err
		}
	}
	return nil
}

package redis

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/pollio"
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
	if conn := c.raw.get(c.blocking); conn != nil {
		err = c.rawSetBatch(ctx, conn, keys, vals, px)
	} else {
		c.reserve(keys)
		for i, k := range keys {
			c.cmds = append(c.cmds, c.setCmd(c.bkey(k), rueidis.BinaryString(vals[i]), px))
		}
		for _, r := range c.doMulti(ctx) {
			if err = r.Error(); err != nil {
				break
			}
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
// found[i] is false for a key that holds nothing; after an error, dst and
// found say nothing of the keys.
func (c *Client) GetBatch(ctx context.Context, keys, dst [][]byte, found []bool) ([][]byte, error) {
	dst, err := store.BatchDst(dst, found, len(keys))
	if err != nil {
		return dst, opErr("get batch", err)
	}
	if len(keys) == 0 {
		return dst, nil
	}
	if ctx, err = store.SyncContext(ctx); err != nil {
		return dst, opErr("get batch", err)
	}
	if conn := c.raw.get(c.blocking); conn != nil {
		if err := c.rawGetBatch(ctx, conn, keys, dst, found); err != nil {
			return dst, opErr("get batch", err)
		}
		return dst, nil
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
		return dst, opErr("get batch", first)
	}
	return dst, nil
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

// The pipelined path beside the driver. Through rueidis's DoMulti a batch
// of 16 GETs cost ~1.5 µs of client CPU per op at 50 connections on the
// 2-CPU VM (redis-benchmark -P 16: ~0.8–1.3): besides the write and read a
// round trip needs, rueidis builds, pools and wraps every command and
// reply (its integer writer alone calls math.Log10 per length, ~5% of the
// client's CPU). A batch is what a C client sends: every command appended
// to one buffer, one write(2), the replies parsed from one buffered reader
// (perrequest.go's RESP encoder and parser). It goes through the very
// connection rueidis dialed, which is idle between calls (every command is
// synchronous, see the package doc), so the connection count and its
// HELLO, AUTH and SELECT are unchanged; the replies are RESP3 (rueidis
// said HELLO 3), whose null is "_". Get and Set are batches of one.

// rawPipe is a client's connection for batches, as dialed (nil over TLS),
// with the reader and the buffer its batches reuse.
type rawPipe struct {
	conn atomic.Pointer[net.Conn] // set by the dialer, from rueidis's goroutine
	cur  net.Conn                 // the one io is on
	// io sends a batch with the first read of its replies (pollio), and
	// br reads them in bulk through it.
	io      pollio.Conn
	br      *bufio.Reader
	w       []byte
	scratch []byte // what replies nobody keeps are read into
	// broken is set when a batch failed half-way: the stream's replies no
	// longer match its commands, so later batches go through rueidis,
	// which reconnects.
	broken bool
}

// rawReadBuffer is the pipelined path's read buffer per connection: a
// batch's replies in one read(2) (16 small values are ~160 bytes).
const rawReadBuffer = 16 << 10

// get returns the connection for a batch, or nil to use rueidis; blocking
// says its reads block their thread (blockio).
func (p *rawPipe) get(blocking bool) net.Conn {
	cp := p.conn.Load()
	if cp == nil || p.broken {
		return nil
	}
	if *cp != p.cur {
		p.cur = *cp
		p.io.Reset(p.cur, blocking)
		if p.br == nil {
			p.br = bufio.NewReaderSize(&p.io, rawReadBuffer)
		} else {
			p.br.Reset(&p.io)
		}
	}
	return p.cur
}

// exchange sends p.w and reads n replies, each handed to reply with its
// kind and data (appended to dsts[i][:0] when dsts is set); bounded by the
// client's timeout or ctx's deadline, whichever is first. The batch goes
// out in one write(2), made with the first read of its replies (pollio:
// no read before they can be there), and the replies are parsed from
// what each read(2) brought, 16 KiB at a time: one write and usually one
// read per batch, as an event loop's client does.
// Any failure but an error reply breaks the pipe and closes the
// connection, whose stream is out of step.
func (c *Client) exchange(ctx context.Context, conn net.Conn, n int, dsts [][]byte, reply func(i int, kind byte, v []byte, err error) error) error {
	deadline := time.Now().Add(c.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	err := conn.SetDeadline(deadline)
	if err == nil {
		if c.raw.br.Buffered() == 0 {
			err = c.raw.io.Hold(c.raw.w)
		} else { // not in step: the read below may not reach io
			_, err = conn.Write(c.raw.w)
		}
	}
	var first error
	for i := 0; i < n && err == nil; i++ {
		dst := c.raw.scratch[:0] // a SET's "OK": no allocation per reply
		if dsts != nil {
			dst = dsts[i][:0]
		}
		kind, v, rerr := readReply(c.raw.br, dst)
		if dsts != nil {
			dsts[i] = v
		} else {
			c.raw.scratch = v[:0]
		}
		if rerr != nil && !isReplyError(rerr) {
			err = rerr
			break
		}
		if e := reply(i, kind, v, rerr); e != nil && first == nil {
			first = e
		}
	}
	if err != nil {
		c.raw.broken = true
		conn.Close()
		return err
	}
	return first
}

// isReplyError says err is the server's error reply, after which the
// stream is still in step. (Out of exchange's loop: errors.As's target
// escapes, an allocation per reply.)
func isReplyError(err error) bool {
	var re *replyError
	return errors.As(err, &re)
}

// rawGetBatch is GetBatch through the raw pipe.
func (c *Client) rawGetBatch(ctx context.Context, conn net.Conn, keys, dst [][]byte, found []bool) error {
	c.raw.w = c.raw.w[:0]
	for _, k := range keys {
		c.key = append(c.key[:c.n], k...)
		c.raw.w = appendCommand(c.raw.w, cmdGET, c.key)
	}
	return c.exchange(ctx, conn, len(keys), dst, func(i int, kind byte, _ []byte, err error) error {
		found[i], err = getReply(kind, err)
		return err
	})
}

// getReply says whether a GET's reply holds a value, or is an error.
func getReply(kind byte, err error) (bool, error) {
	if err == nil && kind != '$' && kind != kindNil {
		err = fmt.Errorf("unexpected %q reply to GET", kind)
	}
	return err == nil && kind == '$', err
}

// rawGet is Get through the raw pipe: a batch of one, for the same reasons
// (rueidis's Do costs an allocation and its per-command work per get).
func (c *Client) rawGet(ctx context.Context, conn net.Conn, key, dst []byte) ([]byte, bool, error) {
	c.key = append(c.key[:c.n], key...)
	c.raw.w = appendCommand(c.raw.w[:0], cmdGET, c.key)
	c.one[0] = dst
	var found bool
	err := c.exchange(ctx, conn, 1, c.one[:], func(_ int, kind byte, _ []byte, err error) error {
		found, err = getReply(kind, err)
		return err
	})
	dst, c.one[0] = c.one[0], nil
	return dst, found, err
}

// rawSetBatch is SetBatch through the raw pipe.
func (c *Client) rawSetBatch(ctx context.Context, conn net.Conn, keys, vals [][]byte, px int64) error {
	c.raw.w = c.raw.w[:0]
	var pxArg []byte
	if px > 0 {
		pxArg = strconv.AppendInt(nil, px, 10)
	}
	for i, k := range keys {
		c.key = append(c.key[:c.n], k...)
		if px > 0 {
			c.raw.w = appendCommand(c.raw.w, cmdSET, c.key, vals[i], cmdPX, pxArg)
		} else {
			c.raw.w = appendCommand(c.raw.w, cmdSET, c.key, vals[i])
		}
	}
	return c.exchange(ctx, conn, len(keys), nil, func(_ int, kind byte, v []byte, err error) error {
		if err == nil && (kind != '+' || string(v) != "OK") {
			err = fmt.Errorf("unexpected reply %q%s to SET", kind, v)
		}
		return err
	})
}

var cmdGET, cmdSET, cmdPX = []byte("GET"), []byte("SET"), []byte("PX")

package memcached

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/blockio"
)

// Batches, and the direct path of Get and Set (get.go).
//
// GetBatch is one "get k1 k2 …" command on the client's connection, written
// and read by the direct path (getMulti, get.go).
//
// gomemcache has no pipelined set, so SetBatch writes the text protocol's
// "set" commands itself, back to back, flushes once and then reads the
// replies, on the very connection gomemcache uses: the client's dialer
// shares one connection (trackedConn) between gomemcache and the direct
// path, whichever dialed it. A client is used by one goroutine and
// gomemcache keeps at most one idle connection, so between two calls that
// connection is idle and nobody else reads or writes it; each reply is read
// in full, so no byte is left for the other reader. When gomemcache has
// closed it (after an error) the direct path dials a new one. A reply it
// cannot follow closes every connection of the client, so the next
// operation starts clean.
//
// At most PipelineChunk sets are in flight: memcached stops reading a
// connection whose replies the client does not read, so an unbounded
// pipeline could block both sides.

// PipelineChunk is how many sets SetBatch and Load send per round trip.
const PipelineChunk = 1000

var (
	_ store.Batcher    = (*Client)(nil)
	_ store.BulkLoader = (*Client)(nil)
)

// trackedConn notes that gomemcache closed its connection, and spares it
// most of its deadline updates (see SetDeadline).
type trackedConn struct {
	net.Conn
	closed atomic.Bool // GetMulti closes from a goroutine of its own
	// adopted: gomemcache has it (dial), and closes it with its own.
	adopted bool

	slack time.Duration // how much later than asked a deadline may be
	until time.Time     // the deadline set on Conn; zero when none
}

// SetDeadline is what gomemcache calls before each round trip, and again
// before each reply line: three times per get. Each call re-arms a runtime
// timer, which cost ~8% of a get's CPU. A deadline d is therefore kept when
// the one in force is no earlier than d and at most slack later; otherwise
// d+slack is set. Config.Timeout then fails a stalled round trip after
// between Timeout and Timeout+slack, and the timer is re-armed once per
// slack per connection rather than on every call. An earlier deadline (a
// context's, set by setDeadline) is always set as is.
func (t *trackedConn) SetDeadline(d time.Time) error {
	if d.IsZero() || t.slack <= 0 {
		return t.setDeadline(d)
	}
	if !t.until.IsZero() && !d.After(t.until) && t.until.Sub(d) <= t.slack {
		return nil
	}
	if !t.until.IsZero() && d.Before(t.until) {
		return t.setDeadline(d)
	}
	return t.setDeadline(d.Add(t.slack))
}

// setDeadline sets exactly d.
func (t *trackedConn) setDeadline(d time.Time) error {
	if err := t.Conn.SetDeadline(d); err != nil {
		t.until = time.Time{}
		return err
	}
	t.until = d
	return nil
}

// SetReadDeadline and SetWriteDeadline forget the deadline in force.
func (t *trackedConn) SetReadDeadline(d time.Time) error {
	t.until = time.Time{}
	return t.Conn.SetReadDeadline(d)
}

func (t *trackedConn) SetWriteDeadline(d time.Time) error {
	t.until = time.Time{}
	return t.Conn.SetWriteDeadline(d)
}

func (t *trackedConn) Close() error {
	t.closed.Store(true)
	return t.Conn.Close()
}

// dial is gomemcache's DialContext for this client. A connection the
// direct path (get.go) dialed and gomemcache does not know yet is handed
// over, so that a client keeps one connection whichever path dialed it.
func (c *Client) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if c.conn != nil && !c.conn.adopted && !c.conn.closed.Load() {
		c.conn.adopted = true
		return c.conn, nil
	}
	nc, err := c.dialNew(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	nc.adopted = true
	return nc, nil
}

// dialNew connects and makes the new connection the client's.
func (c *Client) dialNew(ctx context.Context, network, addr string) (*trackedConn, error) {
	d := net.Dialer{Timeout: c.s.cfg.Timeout}
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if c.blocking {
		if nc, err = blockio.Wrap(nc); err != nil {
			return nil, err
		}
	}
	c.conn = &trackedConn{Conn: nc, slack: c.s.cfg.Timeout / 4}
	return c.conn, nil
}

// pipe returns the client's live connection (an unavailable-class error
// when it cannot connect) with the direct path's buffers
// on it, dialing one (without a round trip: a lazily opened client's first
// get costs the handshake and the get) when there is none.
func (c *Client) pipe() error {
	if c.conn == nil || c.conn.closed.Load() {
		if _, err := c.dialNew(context.Background(), "tcp", c.s.addr); err != nil {
			return errclass.WithClass(errclass.ClassUnavailable, fmt.Errorf("connect %s: %w", c.s.addr, err))
		}
	}
	if c.bw == nil {
		c.cio.Reset(c.conn.Conn, c.blocking)
		c.bw = bufio.NewWriterSize(&c.cio, c.wbuf)
		c.br = bufio.NewReaderSize(&c.cio, 4<<10)
		c.bconn = c.conn
	} else if c.bconn != c.conn {
		c.cio.Reset(c.conn.Conn, c.blocking)
		c.bw.Reset(&c.cio)
		c.br.Reset(&c.cio)
		c.bconn = c.conn
	}
	return nil
}

// send flushes bw: the end of a request whose reply the caller reads next.
// Where the poller serves the connection, what is left in bw goes out with
// the first read of the reply (pollio), sparing a read that would fail.
func (c *Client) send() error {
	if c.br.Buffered() == 0 {
		c.cio.Arm()
	}
	err := c.bw.Flush()
	c.cio.Disarm()
	return err
}

// begin readies the direct path for one exchange: the connection (pipe)
// and a deadline for the whole of it.
func (c *Client) begin() error {
	if err := c.pipe(); err != nil {
		return err
	}
	if err := c.conn.SetDeadline(time.Now().Add(c.s.cfg.Timeout)); err != nil {
		c.broken()
		return err
	}
	return nil
}

// broken closes the client's connections after a reply the direct path
// could not follow; the next operation dials afresh.
func (c *Client) broken() {
	c.closeConns()
}

// closeConns closes gomemcache's connections and the direct path's own.
func (c *Client) closeConns() error {
	err := c.mc.Close()
	if c.conn != nil && !c.conn.adopted && !c.conn.closed.Load() {
		err = errors.Join(err, c.conn.Close())
	}
	c.conn = nil
	return err
}

var (
	replyStored      = []byte("STORED\r\n")
	replyServerError = []byte("SERVER_ERROR")
)

// SetBatch stores the pairs with pipelined "set" commands, one round trip
// per PipelineChunk of them.
func (c *Client) SetBatch(ctx context.Context, keys, vals [][]byte, ttl time.Duration) error {
	return c.setBatch(ctx, "set batch", keys, vals, ttl)
}

// Load is SetBatch without expiry: memcached has no faster way to load.
func (c *Client) Load(ctx context.Context, keys, vals [][]byte) error {
	return c.setBatch(ctx, "load", keys, vals, 0)
}

func (c *Client) setBatch(ctx context.Context, op string, keys, vals [][]byte, ttl time.Duration) error {
	if err := store.CheckPairs(keys, vals); err != nil {
		return opErr(op, err)
	}
	exp := expiration(ttl)
	for i := 0; i < len(keys); i += PipelineChunk {
		if err := ctx.Err(); err != nil {
			return opErr(op, err)
		}
		j := min(i+PipelineChunk, len(keys))
		if err := c.pipelineSets(keys[i:j], vals[i:j], exp); err != nil {
			return opErr(op, err)
		}
	}
	return nil
}

// pipelineSets writes one "set" per pair, flushes once, then reads a reply
// per set. A SERVER_ERROR (e.g. an item over the size limit) fails the
// batch but leaves the connection in step; anything else unexpected closes it.
func (c *Client) pipelineSets(keys, vals [][]byte, exp int32) error {
	if err := c.begin(); err != nil {
		return err
	}
	w := c.bw
	for i, k := range keys {
		c.key = c.appendKey(c.key[:0], k)
		c.key = append(c.key, ' ', '0', ' ')
		c.key = strconv.AppendInt(c.key, int64(exp), 10)
		c.key = append(c.key, ' ')
		c.key = strconv.AppendInt(c.key, int64(len(vals[i])), 10)
		w.WriteString("set ")
		w.Write(c.key)
		w.WriteString("\r\n")
		w.Write(vals[i])
		w.WriteString("\r\n")
	}
	if err := c.send(); err != nil {
		c.broken()
		return err
	}
	var first error
	for range keys {
		line, err := c.reply()
		switch {
		case errors.Is(err, errServer):
			first = cmp.Or(first, err)
		case err != nil:
			c.broken()
			return err
		case !bytes.Equal(line, replyStored):
			c.broken()
			return fmt.Errorf("unexpected reply to set: %q", line)
		}
	}
	return first
}

var errServer = errors.New("server error")

// reply reads one reply line. A SERVER_ERROR line comes back as an
// errServer error: the server refused the command and the connection is
// in step (what follows, in a multi-line reply, is not known).
func (c *Client) reply() ([]byte, error) {
	line, err := c.br.ReadSlice('\n')
	if err == nil && bytes.HasPrefix(line, replyServerError) {
		err = fmt.Errorf("%w: %s", errServer, bytes.TrimSpace(line))
	}
	return line, err
}

// GetBatch is one multi-get, "get" with every key (getMulti).
func (c *Client) GetBatch(ctx context.Context, keys, dst [][]byte, found []bool) ([][]byte, error) {
	return store.GetBatch(keys, dst, found, opErr, func(dst [][]byte) error {
		if err := ctx.Err(); err != nil {
			return opErr("get batch", err)
		}
		if err := c.getMulti(keys, dst, found); err != nil {
			return opErr("get batch", err)
		}
		return nil
	})
}

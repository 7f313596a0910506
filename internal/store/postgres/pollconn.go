package postgres

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/storebench/storebench/internal/store/pollio"
)

// A KV client's socket goes through pollio, as the Redis and memcached
// clients' do: a query's one write (pgconn's Flush of Bind, Execute and
// Sync) is held and sent by the first read of its reply, with raw system
// calls, inside the poller's read. Through net.Conn, pgconn's write then
// read made two reads per query, the first failing with EAGAIN, and a
// loopback write slower than 20 µs (it runs the backend's side of TCP and
// its wake-up) let sysmon hand the thread's P to another thread.
//
// pgconn reads a reply until ReadyForQuery, so a held request is always
// followed by a read of this connection: the bytes pgconn may hold from
// before (an asynchronous notice) cannot complete the new query's reply,
// and reading past them reaches the socket, which sends the request. But
// pgconn's flush starts a reader goroutine of its own when the write has
// not returned within 15 ms (a descheduled client can pass that before it
// writes): a read already waiting then would never send a request held
// after it, so a request is held only while no read is under way, and
// written at once otherwise. Only exec arms, and only on a connection
// pgconn reads and writes as is (no TLS over it).

// polledConn is the socket under a client's pgconn.
type polledConn struct {
	net.Conn
	io pollio.Conn

	mu      sync.Mutex // orders a held write with the start of a read
	arm     bool       // the next Write is a request to hold (exec)
	reading bool       // a Read is under way
}

// Read sends a held request, then reads (pollio).
func (p *polledConn) Read(b []byte) (int, error) {
	p.mu.Lock()
	p.reading = true
	p.mu.Unlock()
	n, err := p.io.Read(b)
	p.mu.Lock()
	p.reading = false
	p.mu.Unlock()
	return n, err
}

// Write holds an armed request for the next Read, unless a read is already
// waiting; anything else is written at once.
func (p *polledConn) Write(b []byte) (int, error) {
	p.mu.Lock()
	hold := p.arm && !p.reading
	p.arm = false
	if hold {
		_ = p.io.Hold(b) // no error: the conn is polled, so nothing is written here
	}
	p.mu.Unlock()
	if hold {
		return len(b), nil
	}
	return p.Conn.Write(b)
}

// setArm arms or disarms the next Write (exec, around pgconn's call).
func (p *polledConn) setArm(on bool) {
	p.mu.Lock()
	p.arm = on
	p.mu.Unlock()
}

// connectPolled connects as connect does, the socket wrapped in a
// polledConn; that is nil when pgconn does not read and write it directly
// (TLS) or the poller does not serve it.
func (s *Store) connectPolled(ctx context.Context) (*pgx.Conn, *polledConn, error) {
	cfg := s.pgcfg.Copy()
	dial := cfg.DialFunc
	var last *polledConn // pgx may dial more than once (addresses, TLS then plain): the last one is kept
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		last = &polledConn{Conn: c}
		last.io.Reset(c, false)
		return last, nil
	}
	conn, err := s.connectConfig(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	if pc, ok := conn.PgConn().Conn().(*polledConn); !ok || pc != last || !pc.io.Polled() {
		return conn, nil, nil
	}
	return conn, last, nil
}

// getMessages runs the prepared get with c.params[0] at pgx's wire-protocol
// level, the messages ExecStatement sends and reads (Bind, Execute, Sync;
// BindComplete, DataRow, CommandComplete, ReadyForQuery) without its
// ResultReader: ExecStatement's flush arms pgconn's 15 ms slow-write timer
// and stops it again, and on a client whose other P is idle adding that
// timer woke a thread to watch it, every query (a futex wake, and the
// thread's spinning and sleeping again); its command tag was an allocation
// per get. The request is written through pgconn's Frontend, held and sent
// with the first read of the reply (polledConn); the reply is read with
// ReceiveMessage, which keeps pgconn's own bookkeeping (transaction status,
// notices, parameter changes). A failed write or read closes the
// connection, as pgconn does: the reply's rest is not known.
func (c *Client) getMessages(ctx context.Context, dst []byte) ([]byte, bool, error) {
	f := c.pg.Frontend()
	c.bind = pgproto3.Bind{PreparedStatement: c.get.Name, ParameterFormatCodes: binary1, Parameters: c.params[:1], ResultFormatCodes: binary1}
	f.SendBind(&c.bind)
	f.SendExecute(&c.execute)
	f.SendSync(&c.sync)
	if c.polled != nil {
		c.polled.setArm(true)
	}
	err := f.Flush()
	if c.polled != nil {
		c.polled.setArm(false)
	}
	c.bind.Parameters = nil // keep no reference to the caller's key
	if err != nil {
		closeConn(c.conn, "get")
		return dst, false, err
	}
	ok := false
	var qerr error // the server's error: the reply goes on to ReadyForQuery
	for {
		msg, err := c.pg.ReceiveMessage(ctx)
		if err != nil {
			closeConn(c.conn, "get")
			// A fatal error (the server shutting down) comes before the
			// connection closes: the server's word is the cause.
			return dst, false, cmp.Or(qerr, err)
		}
		switch m := msg.(type) {
		case *pgproto3.DataRow:
			if len(m.Values) != 1 || ok {
				qerr = cmp.Or(qerr, fmt.Errorf("get: a row of %d columns, or a second row", len(m.Values)))
				continue
			}
			dst, ok = append(dst, m.Values[0]...), true
		case *pgproto3.ErrorResponse:
			qerr = cmp.Or(qerr, error(pgconn.ErrorResponseToPgError(m)))
		case *pgproto3.ReadyForQuery:
			if qerr != nil {
				return dst, false, qerr
			}
			return dst, ok, nil
		}
	}
}

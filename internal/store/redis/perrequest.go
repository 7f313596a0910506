package redis

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/store"
)

// The per-request path: a connection per operation (--connect-per-op, the
// file_get_contents article's second test) is dialed and spoken to here
// directly, in RESP2, instead of through rueidis, whose connection setup
// costs a request two round trips more than the request itself. rueidis
// always sends HELLO (3, or 2 with AlwaysRESP2) and waits for the reply
// before the first command, and its Close sends a PING and waits for that
// reply too, through two goroutines it starts for the purpose. Measured on a
// 2-CPU VM, a connect, GET and close cost 250–600 µs of client CPU through
// rueidis, 80–120 µs as a bare dial, write, read and close. The
// files-vs-cache suite's per-request Redis phase (client and server on one
// CPU) ran at 3.2–4.5k requests/s and 164–229 µs of client CPU each through
// rueidis, 10.8–17.4k and 33–55 µs this way, beside Memcached's 8–12k and
// 52–80 µs; the article (PHP, which sends nothing but the GET) has Redis 12%
// slower than Memcached. An application that connects per request pays for
// the TCP handshake and its command, and so does this client: the AUTH and
// SELECT the URL asks for go in the same write as the command.

var _ store.PerRequestOpener = (*Store)(nil)

// OpenPerRequest connects a client for one request (store.PerRequestOpener).
// Over TLS it is an ordinary client: rueidis does the handshake.
func (s *Store) OpenPerRequest(ctx context.Context) (store.Client, error) {
	if s.opt.TLSConfig != nil {
		return s.Open(ctx)
	}
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: s.cfg.Timeout, KeepAlive: -1}
	var conn net.Conn
	var err error
	if s.opt.DialCtxFn != nil { // unix:// URLs
		conn, err = s.opt.DialCtxFn(ctx, s.addr(), d, nil)
	} else {
		conn, err = d.DialContext(ctx, "tcp", s.addr())
	}
	if err != nil {
		return nil, errclass.WithClass(errclass.ClassUnavailable, fmt.Errorf("redis: connect %s: %w", s.addr(), err))
	}
	c := &oneShot{conn: conn, br: bufio.NewReaderSize(conn, 512), timeout: s.cfg.Timeout, limit: s.limit}
	c.w = append(c.w, s.preamble...)
	c.preambleReplies = s.preambleReplies
	c.key = append(c.key, s.prefix...)
	c.n = len(c.key)
	return c, nil
}

// preambleOf is what a per-request connection sends before its command, as
// the URL asks: AUTH and SELECT, and how many replies they get.
func preambleOf(user, password string, db int) ([]byte, int) {
	var b []byte
	n := 0
	switch {
	case user != "":
		b = appendCommand(b, []byte("AUTH"), []byte(user), []byte(password))
		n++
	case password != "":
		b = appendCommand(b, []byte("AUTH"), []byte(password))
		n++
	}
	if db != 0 {
		b = appendCommand(b, []byte("SELECT"), []byte(strconv.Itoa(db)))
		n++
	}
	return b, n
}

// oneShot is a client on one connection for one operation; Close closes the
// connection without a command, as PHP's Redis::close does.
type oneShot struct {
	conn            net.Conn
	br              *bufio.Reader
	timeout         time.Duration
	w               []byte // the preamble, then the command
	preambleReplies int
	key             []byte // the prefix, then the current key
	n               int    // length of the prefix
	used            bool
	limit           valueLimit
}

var _ store.KV = (*oneShot)(nil)

func (c *oneShot) Close() error { return c.conn.Close() }

// Get appends the value of key to dst[:0].
func (c *oneShot) Get(ctx context.Context, key, dst []byte) ([]byte, bool, error) {
	dst = dst[:0]
	kind, v, err := c.exchange(ctx, dst, []byte("GET"), c.prefixed(key))
	switch {
	case err != nil:
		return dst, false, opErr("get", err)
	case kind == kindNil:
		return dst, false, nil
	case kind != '$':
		return dst, false, opErr("get", fmt.Errorf("unexpected %q reply", kind))
	}
	return v, true, nil
}

// Set stores val; ttl > 0 is sent as PX in whole milliseconds, rounded up.
func (c *oneShot) Set(ctx context.Context, key, val []byte, ttl time.Duration) error {
	if err := c.limit.check(len(val)); err != nil {
		return opErr("set", err)
	}
	args := [][]byte{[]byte("SET"), c.prefixed(key), val}
	if px := pxOf(ttl); px > 0 {
		args = append(args, []byte("PX"), strconv.AppendInt(nil, px, 10))
	}
	kind, v, err := c.exchange(ctx, nil, args...)
	if err == nil && (kind != '+' || string(v) != "OK") {
		err = fmt.Errorf("unexpected reply %q%s", kind, v)
	}
	if err != nil {
		return opErr("set", c.limit.explain(err, len(val)))
	}
	return nil
}

// Delete removes key; a missing key is not an error.
func (c *oneShot) Delete(ctx context.Context, key []byte) error {
	kind, v, err := c.exchange(ctx, nil, []byte("DEL"), c.prefixed(key))
	if err == nil && kind != ':' {
		err = fmt.Errorf("unexpected reply %q%s", kind, v)
	}
	if err != nil {
		return opErr("delete", err)
	}
	return nil
}

func (c *oneShot) prefixed(key []byte) []byte {
	c.key = append(c.key[:c.n], key...)
	return c.key
}

var errUsed = errors.New("a per-request connection serves one command")

// exchange sends the preamble and one command in one write, checks the
// preamble's replies and returns the command's reply (see readReply), its
// data appended to dst. It is bounded by the store's timeout or ctx's
// deadline, whichever is first; like the pooled path (store.SyncContext),
// it does not watch ctx for a cancellation without a deadline.
func (c *oneShot) exchange(ctx context.Context, dst []byte, args ...[]byte) (byte, []byte, error) {
	if err := ctx.Err(); err != nil {
		return 0, dst, err
	}
	if c.used {
		return 0, dst, errUsed
	}
	c.used = true
	deadline := time.Now().Add(c.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d // a bounded call stays bounded, as with store.SyncContext
	}
	if err := c.conn.SetDeadline(deadline); err != nil {
		return 0, dst, err
	}
	c.w = appendCommand(c.w, args...)
	if _, err := c.conn.Write(c.w); err != nil {
		return 0, dst, err
	}
	for range c.preambleReplies {
		kind, v, err := readReply(c.br, nil)
		if err == nil && kind != '+' {
			err = fmt.Errorf("unexpected reply %q%s", kind, v)
		}
		if err != nil {
			return 0, dst, fmt.Errorf("AUTH or SELECT from the URL: %w", err)
		}
	}
	return readReply(c.br, dst)
}

// appendCommand appends args as a RESP array of bulk strings.
func appendCommand(b []byte, args ...[]byte) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, "\r\n"...)
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

// kindNil is readReply's kind for a nil bulk string ($-1).
const kindNil = 0

// readReply reads one RESP2 (or RESP3) reply that is not an array: its kind ('+' simple
// string, ':' integer, '$' bulk string, kindNil) and its data appended to
// dst. An error reply ('-') is returned as a *replyError.
func readReply(br *bufio.Reader, dst []byte) (byte, []byte, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, dst, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return 0, dst, fmt.Errorf("malformed reply %q", line)
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '_': // RESP3's null, on a connection rueidis said HELLO 3 on (batch.go)
		return kindNil, dst, nil
	case '+', ':':
		return kind, append(dst, body...), nil
	case '-':
		return kind, dst, &replyError{msg: string(body)}
	case '$':
		n, err := strconv.Atoi(string(body))
		switch {
		case err != nil || n < -1:
			return 0, dst, fmt.Errorf("malformed bulk length %q", body)
		case n == -1:
			return kindNil, dst, nil
		}
		start := len(dst)
		dst = slices.Grow(dst, n+2)[:start+n+2]
		if _, err := io.ReadFull(br, dst[start:]); err != nil {
			return 0, dst[:start], err
		}
		if dst[len(dst)-2] != '\r' || dst[len(dst)-1] != '\n' {
			return 0, dst[:start], errors.New("a bulk string not followed by CRLF")
		}
		return kind, dst[:start+n], nil
	}
	return 0, dst, fmt.Errorf("unexpected reply %q", line)
}

// replyError is an error reply of the server.
type replyError struct{ msg string }

func (e *replyError) Error() string { return e.msg }
func (e *replyError) Class() errclass.Class {
	return replyClass(e.msg)
}

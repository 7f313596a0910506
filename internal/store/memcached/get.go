package memcached

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"
)

// The direct path: Get and Set write the text protocol's "get" and "set"
// themselves on the client's connection (shared with gomemcache, see
// batch.go) instead of calling gomemcache's Get and Set. Those cost about
// 1.5 µs of client CPU and five allocations per get (fmt, closures, a lock,
// an Item and its value); on a machine where client and server share two
// CPUs that is taken from the server. Measured with make bench on a 2-CPU
// VM: memcached GET at 0.77–0.83× memaslap's throughput through gomemcache,
// 0.88–0.99× this way, with no allocation per op. gomemcache still dials,
// deletes, multi-gets and pings.

// get appends the value of key to dst: "get <key>", then readValue.
func (c *Client) get(key, dst []byte) ([]byte, bool, error) {
	if err := c.pipe(); err != nil {
		return dst, false, err
	}
	if err := c.conn.SetDeadline(time.Now().Add(c.s.cfg.Timeout)); err != nil {
		c.broken()
		return dst, false, err
	}
	c.key = c.appendKey(c.key[:0], key)
	c.bw.WriteString("get ")
	c.bw.Write(c.key)
	c.bw.WriteString("\r\n")
	if err := c.bw.Flush(); err != nil {
		c.broken()
		return dst, false, err
	}
	v, ok, err := c.readValue(c.key, dst)
	if err != nil && !errors.Is(err, errServer) {
		c.broken()
	}
	return v, ok, err
}

// readValue reads the reply to a get (or gat) of key and appends the value
// to dst: END for a miss, or "VALUE <key> <flags> <bytes>", the data and
// END. A SERVER_ERROR leaves the connection in step; any other error does
// not, and the caller closes it.
func (c *Client) readValue(key, dst []byte) ([]byte, bool, error) {
	line, err := c.br.ReadSlice('\n')
	switch {
	case err != nil:
		return dst, false, err
	case bytes.Equal(line, replyEnd):
		return dst, false, nil
	case bytes.HasPrefix(line, replyServerError):
		return dst, false, fmt.Errorf("%w: %s", errServer, bytes.TrimSpace(line))
	}
	size, err := valueSize(line, key)
	if err != nil {
		return dst, false, err
	}
	start := len(dst)
	dst = slices.Grow(dst, size+2)[:start+size+2]
	if _, err := io.ReadFull(c.br, dst[start:]); err != nil {
		return dst[:start], false, fmt.Errorf("reading a %d-byte value: %w", size, err)
	}
	if !bytes.HasSuffix(dst, crlf) {
		return dst[:start], false, fmt.Errorf("a %d-byte value not followed by CRLF", size)
	}
	if line, err = c.br.ReadSlice('\n'); err != nil || !bytes.Equal(line, replyEnd) {
		return dst[:start], false, errors.Join(fmt.Errorf("no END after a value: %q", line), err)
	}
	return dst[:start+size], true, nil
}

var crlf = []byte("\r\n")

// valueSize reads the byte count of "VALUE <key> <flags> <bytes>\r\n" and
// checks the key is the one asked for.
func valueSize(line, key []byte) (int, error) {
	rest, ok := bytes.CutPrefix(line, prefixValue)
	if ok {
		rest, ok = bytes.CutPrefix(rest, key)
	}
	rest, hasCRLF := bytes.CutSuffix(rest, crlf)
	if !ok || !hasCRLF || len(rest) == 0 || rest[0] != ' ' {
		return 0, fmt.Errorf("unexpected reply to get: %q", line)
	}
	// " <flags> <bytes>": the size is the last field.
	flags, size, ok := bytes.Cut(rest[1:], []byte(" "))
	n, err := strconv.Atoi(string(size)) // no allocation: the conversion is temporary
	if !ok || len(flags) == 0 || err != nil || n < 0 {
		return 0, fmt.Errorf("unexpected reply to get: %q", line)
	}
	return n, nil
}

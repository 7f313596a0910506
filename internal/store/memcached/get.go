package memcached

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// The direct path: Get and Set write the text protocol's "get" and "set"
// themselves on the client's connection (shared with gomemcache, see
// batch.go) instead of calling gomemcache's Get and Set. Those cost about
// 1.5 µs of client CPU and five allocations per get (fmt, closures, a lock,
// an Item and its value); on a machine where client and server share two
// CPUs that is taken from the server. Measured with make bench on a 2-CPU
// VM: memcached GET at 0.77–0.83× memaslap's throughput through gomemcache,
// 0.88–0.99× this way, with no allocation per op. GetBatch's multi-get is
// direct too (getMulti): gomemcache's GetMulti made 84 allocations per
// 16-key batch. gomemcache still dials, deletes and pings.

// get appends the value of key to dst: "get <key>", then readValue.
func (c *Client) get(key, dst []byte) ([]byte, bool, error) {
	if err := c.begin(); err != nil {
		return dst, false, err
	}
	c.key = c.appendKey(c.key[:0], key)
	c.bw.WriteString("get ")
	c.bw.Write(c.key)
	c.bw.WriteString("\r\n")
	if err := c.send(); err != nil {
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
	line, err := c.reply()
	switch {
	case err != nil:
		return dst, false, err
	case bytes.Equal(line, replyEnd):
		return dst, false, nil
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

// getMulti is one "get <key1> <key2> …" for every key: memcached answers
// with a VALUE block per hit, in the order asked, then END. Each value is
// appended to dst[i][:0]; found[i] says whether key i was a hit. A
// SERVER_ERROR leaves the connection in step; any other error closes it.
func (c *Client) getMulti(keys, dst [][]byte, found []bool) error {
	if err := c.begin(); err != nil {
		return err
	}
	// Every memcached key back to back in c.key; c.ends[i] is where key
	// i ends. c.key has room for all of them, so nothing moves below.
	c.key, c.ends = c.key[:0], c.ends[:0]
	for _, k := range keys {
		c.key = c.appendKey(c.key, k)
		c.ends = append(c.ends, len(c.key))
	}
	keyAt := func(i int) []byte {
		start := 0
		if i > 0 {
			start = c.ends[i-1]
		}
		return c.key[start:c.ends[i]]
	}
	c.bw.WriteString("get")
	for i := range keys {
		c.bw.WriteByte(' ')
		c.bw.Write(keyAt(i))
	}
	c.bw.WriteString("\r\n")
	if err := c.send(); err != nil {
		c.broken()
		return err
	}
	for i := range keys {
		dst[i], found[i] = dst[i][:0], false
	}
	next := 0 // hits come in the order asked: the next key a VALUE can be for
	for {
		line, err := c.reply()
		switch {
		case err != nil:
			c.broken() // after a SERVER_ERROR too: the rest of the reply is not known to be in step
			return err
		case bytes.Equal(line, replyEnd):
			return nil
		}
		rest, ok := bytes.CutPrefix(line, prefixValue)
		i := next
		for ; ok && i < len(keys); i++ {
			if k := keyAt(i); bytes.HasPrefix(rest, k) && len(rest) > len(k) && rest[len(k)] == ' ' {
				break
			}
		}
		if !ok || i == len(keys) {
			c.broken()
			return fmt.Errorf("unexpected reply to a multi-get: %q", line)
		}
		size, err := valueSize(line, keyAt(i))
		if err != nil {
			c.broken()
			return err
		}
		v := slices.Grow(dst[i][:0], size+2)[:size+2]
		if _, err := io.ReadFull(c.br, v); err != nil || !bytes.HasSuffix(v, crlf) {
			c.broken()
			return errors.Join(fmt.Errorf("reading a %d-byte value of a multi-get", size), err)
		}
		dst[i], found[i] = v[:size], true
		next = i + 1
	}
}

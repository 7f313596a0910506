package netem

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"
)

// Exchange is a protocol's cheapest request and its reply: a round trip that
// asks the server for no work, so its time is the network's plus a few µs.
type Exchange struct {
	// Name says what is sent, for the record, e.g. "redis PING".
	Name string
	// Request is the i-th request on a connection, i from 0.
	Request func(i int) []byte
	// Reply reads the reply to request i and says whether the connection
	// takes another request.
	Reply func(r *bufio.Reader, i int) (again bool, err error)
}

// RTT is a measured round-trip time.
type RTT struct {
	Median, Min, Max time.Duration
	// P25 is the first quartile: on a busy machine, where noise only ever
	// adds to a round trip, a steadier figure than the median.
	P25     time.Duration
	Samples int
	Method  string // the exchange and how many were timed
}

// probeTimeout bounds MeasureRTT when its context has no deadline.
const probeTimeout = 10 * time.Second

// MeasureRTT times n exchanges with the server at addr (through a proxy or
// not) and returns their median. Each exchange is timed from the write of
// the request to the end of the reply. The first exchange of a connection
// is not counted when the connection takes more (through the proxy it also
// pays for the proxy's connect to the upstream); a protocol that allows one
// exchange per connection has each counted.
func MeasureRTT(ctx context.Context, addr string, x Exchange, n int) (RTT, error) {
	if n <= 0 {
		n = 1
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, probeTimeout)
		defer cancel()
	}
	samples := make([]time.Duration, 0, n)
	for conns := 0; len(samples) < n; conns++ {
		if conns > 2*n {
			return RTT{}, fmt.Errorf("%s at %s: %d connections gave %d timings", x.Name, addr, conns, len(samples))
		}
		if err := exchangeOn(ctx, addr, x, n, &samples); err != nil {
			return RTT{}, fmt.Errorf("%s at %s: %w", x.Name, addr, err)
		}
	}
	slices.Sort(samples)
	return RTT{Median: samples[len(samples)/2], P25: samples[len(samples)/4], Min: samples[0], Max: samples[len(samples)-1], Samples: len(samples),
		Method: fmt.Sprintf("%s, median of %d", x.Name, len(samples))}, nil
}

func exchangeOn(ctx context.Context, addr string, x Exchange, n int, samples *[]time.Duration) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	dl, _ := ctx.Deadline()
	_ = c.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	r := bufio.NewReader(c)
	for i := 0; len(*samples) < n; i++ {
		req := x.Request(i)
		start := time.Now()
		if _, err := c.Write(req); err != nil {
			return err
		}
		again, err := x.Reply(r, i)
		took := time.Since(start)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		if i > 0 || !again {
			*samples = append(*samples, took)
		}
		if !again {
			return nil
		}
	}
	return nil
}

// lineReply reads a reply of one line ending in \r\n, which expected
// must accept: a one-exchange protocol's Reply.
func lineReply(expected func(line string) bool) func(*bufio.Reader, int) (bool, error) {
	return func(r *bufio.Reader, _ int) (bool, error) {
		l, err := r.ReadString('\n')
		if err != nil {
			return false, err
		}
		if !expected(l) {
			return false, fmt.Errorf("unexpected reply %q", l)
		}
		return true, nil
	}
}

// RedisExchange is PING → +PONG (or an error reply such as -NOAUTH: still
// one round trip that does no work).
var RedisExchange = Exchange{
	Name:    "redis PING",
	Request: func(int) []byte { return []byte("PING\r\n") },
	Reply:   lineReply(func(l string) bool { return l[0] == '+' || l[0] == '-' }),
}

// MemcachedExchange is version → VERSION x.y.z.
var MemcachedExchange = Exchange{
	Name:    "memcached version",
	Request: func(int) []byte { return []byte("version\r\n") },
	Reply:   lineReply(func(l string) bool { return len(l) >= 7 && (l[:7] == "VERSION" || l[:5] == "ERROR") }),
}

// PostgreSQL's negotiation requests: answered with one byte before any
// startup message or authentication, so they need no credentials, and a
// connection closed after them leaves nothing in the server's log.
const (
	pgSSLRequest    = 80877103
	pgGSSENCRequest = 80877104
)

// PostgresExchange alternates SSLRequest and GSSENCRequest: the server
// answers 'N' (not supported here, go on) and accepts the other request
// next. A 'S' or 'G' answer would start TLS or GSSAPI, so the connection
// ends there.
var PostgresExchange = Exchange{
	Name: "postgres SSLRequest/GSSENCRequest",
	Request: func(i int) []byte {
		code := uint32(pgSSLRequest)
		if i%2 == 1 {
			code = pgGSSENCRequest
		}
		b := make([]byte, 8)
		binary.BigEndian.PutUint32(b, 8)
		binary.BigEndian.PutUint32(b[4:], code)
		return b
	},
	Reply: func(r *bufio.Reader, _ int) (bool, error) {
		b, err := r.ReadByte()
		if err != nil {
			return false, err
		}
		switch b {
		case 'N':
			return true, nil
		case 'S', 'G':
			return false, nil
		case 'E':
			return false, errors.New("the server refused the negotiation request")
		}
		return false, fmt.Errorf("unexpected reply byte %q", b)
	},
}

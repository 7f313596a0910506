package netem

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
)

// exchanges are the probes of the servers this package is tested against.
var exchanges = map[server.Kind]Exchange{server.Postgres: PostgresExchange, server.Redis: RedisExchange, server.Memcached: MemcachedExchange}

// leastOf3 measures three times and keeps the lowest median: this machine
// is shared and noisy, and noise only ever adds to a round trip.
func leastOf3(t *testing.T, addr string, x Exchange, n int) RTT {
	t.Helper()
	best := measure(t, addr, x, n)
	for range 2 {
		if m := measure(t, addr, x, n); m.Median < best.Median {
			best = m
		}
	}
	return best
}

func measure(t *testing.T, addr string, x Exchange, n int) RTT {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := MeasureRTT(ctx, addr, x, n)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestProxyRTT puts the proxy in front of real servers and checks that the
// round trip measured through it matches the asked one: within 20% at 1 ms
// and 5 ms (the tolerance), never shorter than asked.
func TestProxyRTT(t *testing.T) {
	for _, k := range []server.Kind{server.Redis, server.Postgres, server.Memcached} {
		t.Run(string(k), func(t *testing.T) {
			srv := servertest.Start(t, k, server.Options{})
			x := exchanges[k]
			base := leastOf3(t, srv.Addr, x, 21)
			p, err := Start(srv.Addr, Config{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close() })
			zero := leastOf3(t, p.Addr(), x, 21)
			t.Logf("%s: direct %v, through the proxy at rtt 0 %v (the proxy's own cost %v)", k, base.Median, zero.Median, zero.Median-base.Median)
			for _, rtt := range []time.Duration{100 * time.Microsecond, 500 * time.Microsecond, time.Millisecond, 5 * time.Millisecond} {
				if err := p.Set(Config{RTT: rtt}); err != nil {
					t.Fatal(err)
				}
				raw := measure(t, p.Addr(), x, 21)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				cal, err := p.Calibrate(ctx, x, base.Median, 21)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				if raw.Min < rtt {
					t.Errorf("asked %v: uncalibrated, a round trip took %v", rtt, raw.Min)
				}
				// "Added" is the difference of two medians measured apart; a
				// burst of load in either one (seen: a direct median 6× its
				// usual) skews it, so the pair is measured again, up to 3
				// times, as the run itself re-probes (target.setNetworkWithin).
				var problem string
				for try := 1; try <= 3; try++ {
					direct := leastOf3(t, srv.Addr, x, 21)
					m := leastOf3(t, p.Addr(), x, 21) // fresh measurements, not the calibration's own
					added := m.Median - direct.Median
					ratio := float64(added) / float64(rtt)
					t.Logf("%s: asked %v: uncalibrated %v; calibrated (offset %v, %d rounds) %v (min %v, max %v), added to direct %v: ratio %.2f (try %d)",
						k, rtt, raw.Median, cal.Offset, cal.Rounds, m.Median, m.Min, m.Max, added, ratio, try)
					switch {
					case rtt >= time.Millisecond && (ratio < 0.8 || ratio > 1.2):
						problem = fmt.Sprintf("asked %v, measured %v more than direct: off by more than 20%%", rtt, added)
					case ratio < 0.5 || ratio > 3:
						problem = fmt.Sprintf("asked %v, measured %v more than direct", rtt, added)
					default:
						problem = ""
					}
					if problem == "" {
						break
					}
				}
				if problem != "" {
					t.Error(problem + " (3 tries)")
				}
				if cal.Offset < 0 || cal.Offset > rtt/2 {
					t.Errorf("offset %v out of [0, %v]", cal.Offset, rtt/2)
				}
			}
		})
	}
}

// TestProxyReconfigureOpenConnection: a connection opened before Set gets
// the new delay too (the suite reconfigures one proxy between cells while
// the store keeps its connections).
func TestProxyReconfigureOpenConnection(t *testing.T) {
	srv := servertest.Start(t, server.Redis, server.Options{})
	p, err := Start(srv.Addr, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	ping := func() time.Duration {
		start := time.Now()
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			t.Fatal(err)
		}
		if l, err := r.ReadString('\n'); err != nil || l != "+PONG\r\n" {
			t.Fatalf("reply %q, %v", l, err)
		}
		return time.Since(start)
	}
	ping()
	const rtt = 4 * time.Millisecond
	if err := p.Set(Config{RTT: rtt}); err != nil {
		t.Fatal(err)
	}
	if got := ping(); got < rtt*95/100 {
		t.Errorf("after Set(rtt %v) an open connection's round trip took %v", rtt, got)
	}
	if err := p.Set(Config{}); err != nil {
		t.Fatal(err)
	}
	var best time.Duration = time.Hour
	for range 5 {
		best = min(best, ping())
	}
	if best >= rtt/2 {
		t.Errorf("after Set(rtt 0) the best round trip took %v", best)
	}
}

// TestProxyJitter: each round trip lies within rtt ± jitter, and they vary.
func TestProxyJitter(t *testing.T) {
	srv := servertest.Start(t, server.Memcached, server.Options{})
	const rtt, jitter = 4 * time.Millisecond, 2 * time.Millisecond
	p, err := Start(srv.Addr, Config{RTT: rtt, Jitter: jitter})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	m := measure(t, p.Addr(), MemcachedExchange, 61)
	t.Logf("rtt %v ±%v: min %v, median %v, max %v", rtt, jitter, m.Min, m.Median, m.Max)
	if m.Min < (rtt-jitter)*9/10 || m.Median < rtt-jitter || m.Median > rtt+jitter {
		t.Errorf("round trips from %v to %v, want within %v ± %v", m.Min, m.Max, rtt, jitter)
	}
	if m.Max-m.Min < jitter/2 {
		t.Errorf("round trips from %v to %v: the jitter of ±%v does not show", m.Min, m.Max, jitter)
	}
}

// TestProxyBandwidth: a 200 kB SET through a 2 mbit/s (250 kB/s) link takes
// about 0.8 s more than the same SET without a limit.
func TestProxyBandwidth(t *testing.T) {
	srv := servertest.Start(t, server.Redis, server.Options{})
	rate, err := ParseRate("2mbit")
	if err != nil || rate != 250000 {
		t.Fatalf("ParseRate(2mbit) = %d, %v", rate, err)
	}
	p, err := Start(srv.Addr, Config{Bandwidth: rate})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const size = 200000
	val := strings.Repeat("x", size)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	start := time.Now()
	fmt.Fprintf(c, "*3\r\n$3\r\nSET\r\n$2\r\nbw\r\n$%d\r\n%s\r\n", size, val)
	if l, err := r.ReadString('\n'); err != nil || l != "+OK\r\n" {
		t.Fatalf("reply %q, %v", l, err)
	}
	took := time.Since(start)
	want := time.Duration(float64(size) / float64(rate) * float64(time.Second))
	t.Logf("%d bytes at %s: %v (ideal %v)", size, rate, took, want)
	if ratio := float64(took) / float64(want); ratio < 0.8 || ratio > 1.5 {
		t.Errorf("%d bytes at %s took %v, want about %v", size, rate, took, want)
	}
}

// TestProxyClose: after Close nothing listens on the proxy's port any more,
// neither by dialing nor in /proc/self/net/tcp, and proxied connections are closed.
func TestProxyClose(t *testing.T) {
	srv := servertest.Start(t, server.Redis, server.Options{})
	p, err := Start(srv.Addr, Config{RTT: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !ListeningOn(t, p.Addr()) {
		t.Fatalf("proxy %s not in /proc/self/net/tcp while open", p.Addr())
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if ListeningOn(t, p.Addr()) {
		t.Errorf("proxy %s still listening after Close", p.Addr())
	}
	if d, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		d.Close()
		t.Errorf("dial %s succeeded after Close", p.Addr())
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("a proxied connection stayed open after Close")
	}
	if err := p.Set(Config{}); err == nil {
		t.Error("Set after Close: no error")
	}
}

// ListeningOn reports whether this process's network namespace has a TCP
// socket listening on addr, from /proc/self/net/tcp.
func ListeningOn(t *testing.T, addr string) bool {
	t.Helper()
	ls, err := Listeners()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if l == addr {
			return true
		}
	}
	return false
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{RTT: time.Millisecond, Jitter: 500 * time.Microsecond, Bandwidth: 125000}, ""},
		{Config{}, ""},
		{Config{RTT: -1}, "rtt must not be negative"},
		{Config{RTT: time.Millisecond, Jitter: 2 * time.Millisecond}, "exceeds the rtt"},
		{Config{Bandwidth: 10}, "below the 100 B/s"},
		{Config{RTT: MaxRTT}, ""},
		{Config{RTT: MaxRTT + 1}, "at most 500ms"},
		{Config{RTT: time.Hour}, "at most 500ms"},
		{Config{Bandwidth: MaxRate + 1}, "at most 100gbit"},
	} {
		err := tc.c.Validate()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: err %v, want %q", tc.c, err, tc.want)
		}
	}
	if _, err := Start("127.0.0.1:1", Config{RTT: -1}); err == nil {
		t.Error("Start with a bad config: no error")
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]Rate{"100mbit": 12500000, "1gbit": 125000000, "512kbit": 64000, "10MB/s": 10000000, "1.5 mbit": 187500, "800bit": 100, "100gbit": 12500000000} {
		got, err := ParseRate(in)
		if err != nil || got != want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	// Out of range: NaN, infinities and a float beyond int64 once made
	// "must not be negative, got -9223372036854775808 B/s"; 0 and rates
	// that round to 0 were taken as "no limit".
	for _, bad := range []string{"", "fast", "10", "-1mbit", "mbit", "NaNmbit", "Infgbit", "1e30gbit", "101gbit", "0mbit", "1e-9bit", "799bit"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q): no error", bad)
		}
	}
	if s := Rate(12500000).String(); s != "100mbit" {
		t.Errorf("String = %q", s)
	}
}

// TestDetect: on a kernel without the netem qdisc the mechanism is the
// proxy and says so; where the kernel path runs it is named; either way
// the check leaves no namespace behind.
func TestDetect(t *testing.T) {
	before := namespaces(t)
	m := Detect(context.Background())
	t.Logf("mechanism %q (%s)", m.Name, m.Detail)
	if m.KernelNetem != (m.Name == KernelName) || (!m.KernelNetem && !strings.HasPrefix(m.Name, "proxy (")) {
		t.Errorf("mechanism %+v", m)
	}
	if strings.Contains(m.Detail, "qdisc kind is unknown") && (m.Name != "proxy (kernel has no netem qdisc)" || m.KernelNetem) {
		t.Errorf("tc says no netem, mechanism %+v", m)
	}
	if after := namespaces(t); after != before {
		t.Errorf("named network namespaces changed: %q -> %q", before, after)
	}
}

func namespaces(t *testing.T) string {
	t.Helper()
	entries, err := os.ReadDir("/run/netns")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var n []string
	for _, e := range entries {
		n = append(n, e.Name())
	}
	return strings.Join(n, ",")
}

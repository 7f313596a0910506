// Package netem puts a network between storebench and a target: every byte
// between the clients and the server pays an asked round-trip time (with
// jitter, and optionally a bandwidth limit), so the latency of a store can be
// seen the way an application on another machine sees it, not only over
// loopback.
//
// Two mechanisms do it, behind one Path interface; Detect says which can
// run here. The kernel's (Kernel): a veth pair into a network namespace
// storebench creates, with a netem qdisc on each end delaying each direction
// by RTT/2, and a relay in the namespace forwarding to the target; it needs
// root (CAP_NET_ADMIN, CAP_SYS_ADMIN) and a kernel with netem. Otherwise an
// in-process delaying TCP proxy (Proxy), built on Shopify's toxiproxy used
// as a library (its proxy and toxic chain, no toxiproxy server and no HTTP
// API): it listens on 127.0.0.1:0 in front of a target's host:port and
// delays each direction by RTT/2. MeasureRTT measures the round trip a
// client really gets through either, and Calibrate takes the path's own
// cost off its delays.
package netem

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Config is the network between the clients and a target.
type Config struct {
	// RTT is the round-trip time added: each direction is delayed by RTT/2.
	RTT time.Duration
	// Jitter varies each round trip by up to ±Jitter, uniformly: each
	// direction's delay is RTT/2 ± Jitter/2. It may not exceed RTT.
	// Bytes are never reordered: a chunk waits for the one before it.
	Jitter time.Duration
	// Bandwidth limits each direction to that many bytes per second; 0 is no limit.
	Bandwidth Rate
}

// MaxRTT bounds the round trip storebench adds. Round trips between
// continents are 100–300 ms; and a store's connect and first statements
// take about ten round trips (MariaDB's handshake and four prepares: seven)
// within the stores' 5 s connect timeouts: at an rtt of 1 s MariaDB's
// clients could not open. A longer rtt is likely a typo (1s for 1ms) that
// would only fail once the servers were started.
const MaxRTT = 500 * time.Millisecond

// MaxRate bounds a bandwidth limit: 100 Gbit/s is more than loopback
// carries here, so a larger limit limits nothing (leave it out instead).
const MaxRate Rate = 100e9 / 8

// minRate is the least the proxy can limit to.
const minRate Rate = 100

// Validate rejects impossible settings.
func (c Config) Validate() error {
	var errs []error
	if c.RTT < 0 {
		errs = append(errs, fmt.Errorf("rtt must not be negative, got %v", c.RTT))
	}
	if c.RTT > MaxRTT {
		errs = append(errs, fmt.Errorf("rtt %v: at most %v (round trips between continents are 100–300 ms; a store's connect takes about ten round trips within its 5 s connect timeout)", c.RTT, MaxRTT))
	}
	if c.Jitter < 0 {
		errs = append(errs, fmt.Errorf("jitter must not be negative, got %v", c.Jitter))
	}
	if c.Jitter > c.RTT && c.RTT >= 0 {
		errs = append(errs, fmt.Errorf("jitter %v exceeds the rtt %v (a delay cannot be negative)", c.Jitter, c.RTT))
	}
	if c.Bandwidth < 0 {
		errs = append(errs, fmt.Errorf("bandwidth must not be negative, got %d B/s", int64(c.Bandwidth)))
	}
	if c.Bandwidth > 0 {
		if err := rateOutOfBounds(c.Bandwidth.String(), float64(c.Bandwidth)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// String describes the network in a few words, e.g. "rtt 500µs ±50µs, 100mbit".
func (c Config) String() string {
	s := "rtt " + c.RTT.String()
	if c.Jitter > 0 {
		s += " ±" + c.Jitter.String()
	}
	if c.Bandwidth > 0 {
		s += ", " + c.Bandwidth.String()
	}
	return s
}

// Rate is a bandwidth in bytes per second.
type Rate int64

// rateUnits are the suffixes ParseRate knows, longest first, in bytes/s.
var rateUnits = []struct {
	suffix string
	bytes  float64
}{
	{"gbit", 1e9 / 8}, {"mbit", 1e6 / 8}, {"kbit", 1e3 / 8}, {"bit", 1.0 / 8},
	{"gb/s", 1e9}, {"mb/s", 1e6}, {"kb/s", 1e3}, {"b/s", 1},
}

// ParseRate reads a bandwidth as tc writes it, in bits per second
// ("100mbit", "1gbit", "512kbit"), or in bytes per second with "/s"
// ("10MB/s", "500KB/s"). Units are decimal (k = 1000). A rate is a limit:
// from 100 B/s (less, 0 included, would all but stop the traffic) to
// MaxRate.
func ParseRate(s string) (Rate, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for _, u := range rateUnits {
		num, ok := strings.CutSuffix(t, u.suffix)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			break
		}
		// Bounds are checked in bytes/s as a float: converting an
		// out-of-range float to Rate is undefined, and a rate that rounds
		// to 0 would read as no limit.
		b := v * u.bytes
		if err := rateOutOfBounds(s, b); err != nil {
			return 0, err
		}
		return Rate(b + 0.5), nil
	}
	return 0, fmt.Errorf("bandwidth %q: write e.g. 100mbit, 1gbit, 512kbit (bits/s) or 10MB/s (bytes/s)", s)
}

// rateOutOfBounds refuses a limit of bytesPerSec bytes/s (asked as asked)
// outside minRate..MaxRate: ParseRate's check and Validate's.
func rateOutOfBounds(asked string, bytesPerSec float64) error {
	switch {
	case bytesPerSec > float64(MaxRate):
		return fmt.Errorf("bandwidth %q: at most %s (more than loopback carries: leave the bandwidth out for no limit)", asked, MaxRate)
	case bytesPerSec < float64(minRate):
		return fmt.Errorf("bandwidth %q is below the %d B/s (800bit) the proxy can limit to (leave the bandwidth out for no limit)", asked, int64(minRate))
	}
	return nil
}

// String writes the rate in bits per second, as tc does.
func (r Rate) String() string {
	bits := float64(r) * 8
	switch {
	case bits >= 1e9:
		return strconv.FormatFloat(bits/1e9, 'g', 4, 64) + "gbit"
	case bits >= 1e6:
		return strconv.FormatFloat(bits/1e6, 'g', 4, 64) + "mbit"
	case bits >= 1e3:
		return strconv.FormatFloat(bits/1e3, 'g', 4, 64) + "kbit"
	}
	return strconv.FormatFloat(bits, 'g', 4, 64) + "bit"
}

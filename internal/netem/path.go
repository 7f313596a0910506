package netem

import (
	"context"
	"sync"
	"time"
)

// Path is a delayed network path in front of one upstream host:port: the
// in-process Proxy or the Kernel's veth pair into a network namespace.
// Clients connect to Addr instead of the upstream.
type Path interface {
	// Addr is where clients connect: host:port.
	Addr() string
	// Config is the network the path applies now.
	Config() Config
	// Set applies c to new and open connections alike; it undoes a calibration.
	Set(c Config) error
	// Calibrate shortens the path's delays by what its own forwarding costs,
	// so that the round trip is the asked RTT on top of direct.
	Calibrate(ctx context.Context, x Exchange, direct time.Duration, n int) (Calibration, error)
	// Close removes everything the path created. It may be called more than once.
	Close() error
}

var (
	_ Path = (*Proxy)(nil)
	_ Path = (*Kernel)(nil)
)

// pathState is what the Proxy and the Kernel path both keep, under mu:
// where clients connect (addr: 127.0.0.1:port for the Proxy, the
// namespace's address and the relay's port for the Kernel), the upstream
// it forwards to, the network it applies and the calibration's offset.
type pathState struct {
	mu       sync.Mutex
	addr     string
	upstream string
	cfg      Config
	offset   time.Duration // taken off the asked RTT by Calibrate
	closed   bool
}

// Addr is where clients connect instead of the upstream.
func (s *pathState) Addr() string { return s.addr }

// Upstream is the host:port the path forwards to.
func (s *pathState) Upstream() string { return s.upstream }

// Config is the network the path applies now.
func (s *pathState) Config() Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// set is a path's Set: c checked, then installed by apply with no offset.
func (s *pathState) set(c Config, apply func(Config, time.Duration) error) error {
	if err := c.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return apply(c, 0)
}

// calibrate is a path's Calibrate of its current network c, whose offset
// may reach maxOffset(c); apply installs c with an offset.
func (s *pathState) calibrate(ctx context.Context, x Exchange, direct time.Duration, n int, maxOffset func(Config) time.Duration, apply func(Config, time.Duration) error) (Calibration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cfg
	return calibrate(ctx, calibration{addr: s.addr, cfg: c, offset: s.offset, maxOffset: maxOffset(c),
		apply: func(offset time.Duration) error { return apply(c, offset) }}, x, direct, n)
}

// closeOnce is a path's Close: under mu, the first call marks the path
// closed and runs end; later calls do nothing.
func (s *pathState) closeOnce(end func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return end()
}

// StartPath starts the path m names in front of upstream: the Kernel's when
// m.KernelNetem, otherwise the Proxy.
func StartPath(m Mechanism, upstream string, c Config) (Path, error) {
	if m.KernelNetem {
		return StartKernel(upstream, c)
	}
	return Start(upstream, c)
}

// Calibration is what Calibrate did.
type Calibration struct {
	// Offset is how much shorter than asked the path's delays are, in
	// total over a round trip, so that the measured round trip is the
	// asked RTT on top of the direct one.
	Offset time.Duration
	// Rounds is how many measurements it took.
	Rounds int
	// Measured is a measurement through the path at the final setting
	// (of two, the one with the lower first quartile; of FinalProbes such,
	// the one with the lowest median).
	Measured RTT
	// FinalProbes is how many times the final setting was measured: more
	// than one when a median came out more than 10% off.
	FinalProbes int
}

// calibrationRounds bounds Calibrate's measurements.
const calibrationRounds = 4

// measureLeast measures twice and keeps the measurement with the lower
// first quartile: a busy machine only ever adds to a round trip, and one
// descheduled probe must not make the calibration shorten the delays.
func measureLeast(ctx context.Context, addr string, x Exchange, n int) (RTT, error) {
	a, err := MeasureRTT(ctx, addr, x, n)
	if err != nil {
		return a, err
	}
	b, err := MeasureRTT(ctx, addr, x, n)
	if err != nil || a.P25 <= b.P25 {
		return a, err
	}
	return b, nil
}

// calibration is one path's state for calibrate: where to measure, what is
// asked, the offset applied now, the largest allowed, and how to apply another.
type calibration struct {
	addr      string
	cfg       Config
	offset    time.Duration
	maxOffset time.Duration
	apply     func(offset time.Duration) error
}

// calibrate is Calibrate's loop, shared by the paths: measure the round
// trip's first quartile, shorten the delays by its excess over direct+RTT
// (within [0, maxOffset]) and measure again, until the excess is within 3%
// of the RTT or 10 µs. Without a delay it measures once. The caller holds
// the path's lock.
func calibrate(ctx context.Context, p calibration, x Exchange, direct time.Duration, n int) (Calibration, error) {
	var cal Calibration
	for cal.Rounds < calibrationRounds {
		m, err := measureLeast(ctx, p.addr, x, n)
		if err != nil {
			return cal, err
		}
		cal.Rounds++
		cal.Measured, cal.Offset = m, p.offset
		c := p.cfg
		if c.RTT == 0 {
			return cal, nil
		}
		excess := m.P25 - direct - c.RTT
		if excess.Abs() <= max(c.RTT*3/100, 10*time.Microsecond) || cal.Rounds == calibrationRounds {
			break
		}
		offset := min(max(p.offset+excess, 0), p.maxOffset)
		if offset == p.offset {
			break
		}
		if err := p.apply(offset); err != nil {
			return cal, err
		}
		p.offset = offset
	}
	// The figure to record: measured anew at the final setting. A busy
	// machine only adds to a round trip, and a burst of it can shift a
	// whole probe's median (seen: 6.2 ms at 5 ms asked, with tests of
	// other packages running): a median more than 10% off is measured
	// again, up to finalProbes times, and the lowest kept.
	want := direct + p.cfg.RTT
	for k := range finalProbes {
		m, err := measureLeast(ctx, p.addr, x, n)
		if err != nil {
			return cal, err
		}
		if k == 0 || m.Median < cal.Measured.Median {
			cal.Measured = m
		}
		cal.FinalProbes = k + 1
		if (cal.Measured.Median - want).Abs() <= p.cfg.RTT/10 {
			break
		}
	}
	cal.Offset = p.offset
	return cal, nil
}

// finalProbes bounds the measurements of the calibrated round trip.
const finalProbes = 3

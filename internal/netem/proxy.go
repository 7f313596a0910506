package netem

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Proxy is a delaying TCP proxy on 127.0.0.1 in front of one upstream
// host:port. It is safe for concurrent use.
type Proxy struct {
	pathState
	p *toxiproxy.Proxy
}

// Start listens on 127.0.0.1:0 and forwards every connection to upstream
// (host:port), each direction through toxiproxy's toxic chain as c asks.
// Close removes it. Nothing is started on an invalid config.
func Start(upstream string, c Config) (*Proxy, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	tp := toxiproxy.NewProxy(srv, "storebench", "127.0.0.1:0", upstream)
	if err := tp.Start(); err != nil {
		return nil, fmt.Errorf("network proxy in front of %s: %w", upstream, err)
	}
	p := &Proxy{pathState: pathState{addr: tp.Listen, upstream: upstream}, p: tp}
	if err := p.Set(c); err != nil {
		tp.Stop()
		return nil, err
	}
	return p, nil
}

// Set applies c to new and open connections alike: the toxics are removed
// and added anew (toxiproxy interrupts each link's chain to do it, without
// dropping bytes). Meant for between cells, when the connections are idle.
// It undoes a calibration.
func (p *Proxy) Set(c Config) error { return p.set(c, p.apply) }

// apply installs the toxics of c, each direction delayed by (RTT-offset)/2.
func (p *Proxy) apply(c Config, offset time.Duration) error {
	if p.closed {
		return fmt.Errorf("network proxy %s: closed", p.addr)
	}
	p.p.Toxics.ResetToxics(context.Background())
	p.cfg, p.offset = Config{}, 0
	for _, dir := range []string{"upstream", "downstream"} {
		if c.RTT > 0 {
			if err := p.add(dir+"_delay", delayToxicType, dir, delayToxic{Delay: int64(c.RTT-offset) / 2, Jitter: int64(c.Jitter / 2)}); err != nil {
				return err
			}
		}
		if c.Bandwidth > 0 {
			if err := p.add(dir+"_bandwidth", bandwidthToxicType, dir, bandwidthToxic{Rate: int64(c.Bandwidth)}); err != nil {
				return err
			}
		}
	}
	p.cfg, p.offset = c, offset
	return nil
}

// Calibrate makes the round trip through the proxy what was asked: the
// asked RTT on top of direct, the same exchange measured without the proxy.
// An idle Go process wakes a goroutine tens of µs late on each hop (the
// proxy's read, its timer, its write, per direction: 100-300 µs per round
// trip on a virtual machine), which the delays would add to the asked RTT.
// Calibrate measures the round trip (its first quartile, the lower
// of two measurements: steady on a busy machine, and a little below the
// median, so the median stays at or a little above the asked RTT), shortens the delays by the excess
// (never by more than half the RTT) and measures again, until the excess
// is within 3% of the RTT or 10 µs. The offset is recorded, and it is
// calibrated for a client that waits for each reply, as the probe does;
// under many concurrent clients the proxy's goroutines wake sooner and the
// round trip can fall short of the asked one by up to the offset.
// Without a delay there is nothing to calibrate: it measures once.
func (p *Proxy) Calibrate(ctx context.Context, x Exchange, direct time.Duration, n int) (Calibration, error) {
	return p.calibrate(ctx, x, direct, n, func(c Config) time.Duration { return c.RTT / 2 }, p.apply)
}

func (p *Proxy) add(name, typ, dir string, attrs any) error {
	b, err := json.Marshal(map[string]any{"name": name, "type": typ, "stream": dir, "toxicity": 1.0, "attributes": attrs})
	if err != nil {
		return err
	}
	if _, err := p.p.Toxics.AddToxicJson(strings.NewReader(string(b))); err != nil {
		return fmt.Errorf("network proxy: add %s toxic: %w", name, err)
	}
	return nil
}

// Close stops listening and closes every proxied connection. When it
// returns, the listening socket is gone. It may be called more than once.
func (p *Proxy) Close() error {
	return p.closeOnce(func() error {
		p.p.Stop()
		return nil
	})
}

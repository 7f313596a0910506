package target

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"time"

	"github.com/storebench/storebench/internal/netem"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/store"
)

// rttSamples is how many round trips a network probe times.
const rttSamples = 31

// Network is what a cell records about the network it ran through.
type Network struct {
	Asked     netem.Config
	Mechanism string // e.g. "netem (veth + netns)", "proxy (kernel has no netem qdisc)"
	// Proxy is where the clients connect: the proxy's 127.0.0.1:port, or
	// the kernel path's namespace address:port.
	Proxy string
	Probe string // how the round trip was measured
	// Direct is the probe's round trip straight to the server, without
	// the path (0 when the probe has no direct form).
	Direct time.Duration
	// Measured is the probe's round trip through the path, after calibration.
	Measured time.Duration
	// MeasuredProbes is how many probes measured it (the lowest median is
	// kept; more than one when the first was more than 10% off).
	MeasuredProbes int
	// Offset is how much the path's delays were shortened so that
	// Measured is Asked.RTT on top of Direct (netem.Path.Calibrate): the
	// proxy's or the relay's own cost.
	Offset time.Duration
	// StartOffset is the offset the calibration started from: the last
	// cell's when it ran through the same network (one round then often
	// suffices), else 0.
	StartOffset time.Duration
	// ProbeError says why the round trip could not be measured.
	ProbeError string
}

// AskedParams are the asked network's entries in a cell's parameters.
func (n *Network) AskedParams() map[string]any {
	p := map[string]any{"rtt_ms": ms(n.Asked.RTT)}
	if n.Asked.Jitter > 0 {
		p["jitter_ms"] = ms(n.Asked.Jitter)
	}
	if n.Asked.Bandwidth > 0 {
		p["bandwidth"] = n.Asked.Bandwidth.String()
		p["bandwidth_bytes_s"] = int64(n.Asked.Bandwidth)
	}
	return p
}

// Params are the network's entries in a cell's parameters: as asked, how
// it was applied and what was measured.
func (n *Network) Params() map[string]any {
	p := n.AskedParams()
	p["net_mechanism"], p["net_proxy"] = n.Mechanism, n.Proxy
	if n.ProbeError != "" {
		p["rtt_probe_error"] = n.ProbeError
		return p
	}
	p["rtt_probe"] = n.Probe
	p["rtt_measured_ms"] = ms(n.Measured)
	if n.MeasuredProbes > 1 {
		p["rtt_measured_probes"] = n.MeasuredProbes
	}
	if n.Direct > 0 {
		p["rtt_direct_ms"] = ms(n.Direct)
	}
	p["rtt_calibration_ms"] = ms(n.Offset)
	if n.StartOffset != 0 {
		p["rtt_calibration_start_ms"] = ms(n.StartOffset)
	}
	return p
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// ErrNoNetwork is returned when a network is asked for an in-process store.
var ErrNoNetwork = errors.New("runs inside storebench's process: it has no network to delay (rtt, jitter and bandwidth apply to server stores)")

// ErrClusterNetwork is returned when a network is asked for a cluster: the
// network path stands in front of one server, and a cluster's clients
// reach every node at the address the nodes announce.
var ErrClusterNetwork = errors.New("is a cluster, whose clients reach each node at the address it announces: a network path stands in front of one server (rtt, jitter and bandwidth apply to single-server stores)")

// NoNetwork says why no network can be put between the clients and a store
// of this kind (in-process stores have none, a cluster several); nil when
// one can.
func (k Kind) NoNetwork() error {
	switch {
	case k.Cluster:
		return ErrClusterNetwork
	case k.Server == "":
		return ErrNoNetwork
	}
	return nil
}

// SetNetwork puts the target behind net (nil: reached directly, as
// started) before a cell. The first time, it starts a network path in
// front of the server (the kernel's when StartArgs.Network.KernelNetem,
// otherwise the proxy) and reopens the store through it; later it
// reconfigures the same path; with nil it reopens the store directly and
// closes the path. Reopening closes the store, which removes what it
// created: every workload starts from a reset store anyway. It then
// measures the round trip through the path and calibrates the path to the
// asked one. The mechanism recorded is StartArgs.Network's.
func (i *Instance) SetNetwork(ctx context.Context, net *netem.Config) (*Network, error) {
	if net == nil {
		if i.path == nil {
			return nil, nil
		}
		err := i.reopen(ctx, i.url, pathDelay(i.path.Config()))
		cerr := i.path.Close()
		i.path, i.calibrated = nil, nil
		return nil, errors.Join(err, cerr)
	}
	if err := i.Kind.NoNetwork(); err != nil {
		return nil, fmt.Errorf("store %s %w", i.Kind.Name, err)
	}
	upstream, err := upstreamAddr(i.url)
	if err != nil {
		return nil, err
	}
	var start time.Duration
	if i.path == nil {
		p, err := netem.StartPath(i.args.Network, upstream, *net)
		if err != nil {
			return nil, err
		}
		i.path = p
		if err := i.reopen(ctx, proxiedURL(i.url, p.Addr()), pathDelay(*net)); err != nil {
			i.path = nil
			err = errors.Join(err, p.Close())
			if rerr := i.reopen(ctx, i.url, pathDelay(*net)); rerr != nil {
				err = errors.Join(err, rerr)
			}
			return nil, fmt.Errorf("reach %s through the network path: %w", i.Spec.Label(), err)
		}
	} else if i.calibrated != nil && i.calibrated.Asked == *net && i.path.Config() == *net {
		// The same network as the last cell's: its calibration is where this
		// one starts (Set would undo it), and is measured again all the same.
		start = i.calibrated.Offset
	} else if err := i.path.Set(*net); err != nil {
		return nil, err
	}
	n := &Network{Asked: *net, Mechanism: i.args.Network.Name, Proxy: i.path.Addr(), StartOffset: start}
	if n.Mechanism == "" {
		n.Mechanism = "proxy" // not checked: the caller did not run netem.Detect
	}
	i.measureNetwork(ctx, upstream, n)
	i.calibrated = n
	if n.ProbeError != "" {
		i.calibrated = nil // the path's offset is not known: the next cell sets it anew
	}
	return n, nil
}

// measureNetwork probes the round trip with the kind's no-op exchange,
// straight to the server and through the calibrated path; a kind without
// one (MariaDB needs authentication before any request) is timed with a
// get of a missing key through the store's own client, uncalibrated.
func (i *Instance) measureNetwork(ctx context.Context, upstream string, n *Network) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second+60*rttSamples*(n.Asked.RTT+n.Asked.Jitter))
	defer cancel()
	x, ok := exchanges[i.Kind.Server]
	if !ok {
		d, err := storeRTT(ctx, i.Store, rttSamples)
		if err != nil {
			n.ProbeError = err.Error()
			return
		}
		n.Probe, n.Measured = fmt.Sprintf("%s get of a missing key through the store's client, median of %d", i.Kind.Name, rttSamples), d
		return
	}
	// Twice, keeping the lower first quartile: a busy machine only adds.
	var direct netem.RTT
	for k := range 2 {
		m, err := netem.MeasureRTT(ctx, upstream, x, rttSamples)
		if err != nil {
			n.ProbeError = err.Error()
			return
		}
		if k == 0 || m.P25 < direct.P25 {
			direct = m
		}
	}
	cal, err := i.path.Calibrate(ctx, x, direct.P25, rttSamples)
	if err != nil {
		n.ProbeError = err.Error()
		return
	}
	n.Probe, n.Direct, n.Measured, n.Offset = cal.Measured.Method, direct.Median, cal.Measured.Median, cal.Offset
	n.MeasuredProbes = cal.FinalProbes
}

// exchanges are the no-op round trips of the server kinds that have one
// without authentication.
var exchanges = map[server.Kind]netem.Exchange{
	server.Postgres:  netem.PostgresExchange,
	server.Redis:     netem.RedisExchange,
	server.Valkey:    netem.RedisExchange,
	server.Memcached: netem.MemcachedExchange,
}

// storeRTT times n gets of a key that does not exist, on a client of its own.
func storeRTT(ctx context.Context, st store.Store, n int) (time.Duration, error) {
	c, err := st.Open(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	kv, ok := c.(store.KV)
	if !ok {
		return 0, fmt.Errorf("network probe: %w", store.ErrUnsupported)
	}
	key, buf := []byte("storebench-rtt-probe-missing"), []byte(nil)
	var ts []time.Duration
	for range n + 1 {
		start := time.Now()
		if buf, _, err = kv.Get(ctx, key, buf[:0]); err != nil {
			return 0, err
		}
		ts = append(ts, time.Since(start))
	}
	ts = ts[1:] // the first may pay for preparing the statement
	slices.Sort(ts)
	return ts[len(ts)/2], nil
}

// openRoundTrips bounds the round trips a store's open or close makes
// (PostgreSQL: four to connect, then its schema, marker and statements),
// so its timeout grows with the network path's delay: ExternalTimeout
// alone failed PostgreSQL's open at an rtt of 1 s (its schema, marker
// and statements after the connect).
const openRoundTrips = 30

// pathDelay is what a network path adds to one round trip at the most.
func pathDelay(c netem.Config) time.Duration { return c.RTT + c.Jitter }

// reopen closes the store and opens it again at rawURL; delay is what the
// network path adds to each round trip of the store's close and open (the
// close goes through the path the store was opened through).
func (i *Instance) reopen(ctx context.Context, rawURL string, delay time.Duration) error {
	timeout := ExternalTimeout + openRoundTrips*delay
	if i.Store != nil {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		err := i.Store.Close(closeCtx)
		cancel()
		i.Store = nil
		if err != nil {
			return fmt.Errorf("close %s: %w", i.Spec.Label(), err)
		}
	}
	openCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	st, err := i.Kind.Open(openCtx, OpenArgs{URL: rawURL, Namespace: i.args.Namespace, RunDir: i.args.RunDir, Options: i.Spec.Options})
	if err != nil {
		return fmt.Errorf("open %s: %w", i.Spec.Label(), err)
	}
	i.Store = st
	return nil
}

// upstreamAddr is the host:port a server URL points at.
func upstreamAddr(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("cannot put a network path in front of %s: no host:port in its URL", store.RedactURL(raw))
	}
	if u.Port() != "" {
		return u.Host, nil
	}
	port, ok := defaultPorts[u.Scheme]
	if !ok {
		return "", fmt.Errorf("cannot put a network path in front of %s: no port", store.RedactURL(raw))
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

// proxiedURL is raw with its host:port replaced by the path's.
func proxiedURL(raw, addr string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Host = addr
	return u.String()
}

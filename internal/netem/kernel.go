package netem

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Kernel is a network path through the kernel: a veth pair from the host's
// network namespace into one storebench creates, with a netem qdisc on each
// end that delays what leaves it by half the RTT. Inside the namespace a
// relay listens on the namespace's address and forwards each connection to
// the upstream host:port, dialled from the host's namespace, so the target
// stays where it is (loopback or remote). A client connecting to Addr sends
// every byte across the pair and gets every reply back across it: each
// direction pays RTT/2 in the kernel, with its timers, not the Go runtime's.
// It is safe for concurrent use.
type Kernel struct {
	pathState
	name  string // the namespace's and the host link's name: sb-<pid>-<n>
	ns    bool   // the namespace exists
	link  bool   // the veth pair exists
	ln    net.Listener
	qdisc bool // netem qdiscs are installed

	connMu sync.Mutex
	conns  map[net.Conn]struct{} // relayed connections, both sides
	done   bool                  // no more connections are relayed
	wg     sync.WaitGroup
}

// nsLink is the pair's end inside the namespace; the namespace is
// storebench's own, so the name cannot collide.
const nsLink = "sb0"

// commandTimeout bounds each ip or tc command.
const commandTimeout = 10 * time.Second

// ErrNoKernelNetem is returned when the kernel refuses a netem qdisc.
var ErrNoKernelNetem = errors.New("the kernel has no netem qdisc (sch_netem)")

// pathSeq numbers the namespaces of this process.
var pathSeq atomic.Uint32

// setupMu serializes choosing and assigning addresses within the process.
var setupMu sync.Mutex

// StartKernel creates the namespace, the veth pair and the relay in front
// of upstream (host:port), and applies c. Whatever it created is removed
// again when it fails. It first removes what storebench processes that no
// longer run left behind (Sweep).
func StartKernel(upstream string, c Config) (*Kernel, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	_ = Sweep() // best effort: a leftover that cannot be removed does not stop this path
	name, err := nextName()
	if err != nil {
		return nil, err
	}
	k := &Kernel{pathState: pathState{upstream: upstream}, name: name, conns: map[net.Conn]struct{}{}}
	if err := k.setUp(); err != nil {
		return nil, errors.Join(fmt.Errorf("network namespace path in front of %s: %w", upstream, err), k.tearDown())
	}
	k.wg.Add(1)
	go k.serve()
	if err := k.Set(c); err != nil {
		return nil, errors.Join(err, k.Close())
	}
	return k, nil
}

// nextName is a name for a namespace and a link: sb-<pid>-<n>, at most 15
// bytes (IFNAMSIZ-1), so Sweep can tell whose it is.
func nextName() (string, error) {
	name := fmt.Sprintf("sb-%d-%d", os.Getpid(), pathSeq.Add(1))
	if len(name) > 15 {
		return "", fmt.Errorf("network namespace name %s: longer than a link name may be (15)", name)
	}
	return name, nil
}

func (k *Kernel) setUp() error {
	if err := run("ip", "netns", "add", k.name); err != nil {
		return err
	}
	k.ns = true
	// The peer is created inside the namespace: no moment where both ends
	// are in the host's.
	if err := run("ip", "link", "add", k.name, "type", "veth", "peer", "name", nsLink, "netns", k.name); err != nil {
		return err
	}
	k.link = true
	inner, err := k.address()
	if err != nil {
		return err
	}
	for _, args := range [][]string{
		{"-n", k.name, "addr", "add", inner.String() + "/30", "dev", nsLink},
		{"-n", k.name, "link", "set", nsLink, "up"},
		{"-n", k.name, "link", "set", "lo", "up"},
		{"link", "set", k.name, "up"},
	} {
		if err := run("ip", args...); err != nil {
			return err
		}
	}
	ln, err := listenInNetns(k.name, net.JoinHostPort(inner.String(), "0"))
	if err != nil {
		return fmt.Errorf("listen in network namespace %s: %w", k.name, err)
	}
	k.ln, k.addr = ln, ln.Addr().String()
	return nil
}

// address picks a free /30 and gives the host's end its first address; it
// returns the second, for the namespace's end.
func (k *Kernel) address() (netip.Addr, error) {
	setupMu.Lock()
	defer setupMu.Unlock()
	p, err := freeSubnet(os.Getpid())
	if err != nil {
		return netip.Addr{}, err
	}
	host := p.Addr().Next()
	if err := run("ip", "addr", "add", host.String()+"/30", "dev", k.name); err != nil {
		return netip.Addr{}, err
	}
	return host.Next(), nil
}

// subnetRange holds the /30s the paths use: private, and rarely routed.
var subnetRange = netip.MustParsePrefix("10.213.0.0/16")

// freeSubnet is a /30 of subnetRange that no address or specific route of
// the host's namespace overlaps. The search starts at a place derived from
// the pid, so that two storebench processes rarely race for the same one.
func freeSubnet(pid int) (netip.Prefix, error) {
	used, err := usedPrefixes()
	if err != nil {
		return netip.Prefix{}, err
	}
	const n = 1 << (30 - 16)
	base := subnetRange.Addr().As4()
	start := pid * 16
	for i := range n {
		idx := (start + i) % n
		a := base
		a[2], a[3] = byte(idx>>6), byte(idx<<2)
		p := netip.PrefixFrom(netip.AddrFrom4(a), 30)
		free := true
		for _, u := range used {
			if u.Overlaps(p) {
				free = false
				break
			}
		}
		if free {
			return p, nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("no free /30 left in %s", subnetRange)
}

// usedPrefixes are the host's IPv4 addresses, and its networks and routes
// narrower than subnetRange (a default or a 10/8 route is only shadowed by
// a /30, harmlessly).
func usedPrefixes() ([]netip.Prefix, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("list addresses: %w", err)
	}
	var used []netip.Prefix
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if p, err := netip.ParsePrefix(n.String()); err == nil && p.Addr().Is4() {
				used = append(used, netip.PrefixFrom(p.Addr(), 32))
				if p.Bits() > subnetRange.Bits() {
					used = append(used, p.Masked())
				}
			}
		}
	}
	b, err := os.ReadFile("/proc/net/route")
	if err != nil {
		return used, nil // addresses are what matters most; routes are a courtesy
	}
	for _, l := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(l)
		if len(f) < 8 {
			continue
		}
		dst, err1 := strconv.ParseUint(f[1], 16, 32)
		mask, err2 := strconv.ParseUint(f[7], 16, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		// Little-endian hex of network-order bytes.
		d := netip.AddrFrom4([4]byte{byte(dst), byte(dst >> 8), byte(dst >> 16), byte(dst >> 24)})
		bits := 0
		for m := uint32(mask); m != 0; m &= m - 1 {
			bits++
		}
		if bits > subnetRange.Bits() {
			used = append(used, netip.PrefixFrom(d, bits).Masked())
		}
	}
	return used, nil
}

// Namespace is the name of the network namespace (and of the host's link).
func (k *Kernel) Namespace() string { return k.name }

// Set replaces both ends' qdiscs with c's (or removes them when c delays
// nothing); open connections get it at once. It undoes a calibration. On a
// kernel without netem, any delay, jitter or bandwidth fails with
// ErrNoKernelNetem and the path is left without a qdisc.
func (k *Kernel) Set(c Config) error { return k.set(c, k.apply) }

// apply installs c's netem on both ends, each delayed by (RTT-offset)/2.
func (k *Kernel) apply(c Config, offset time.Duration) error {
	if k.closed {
		return fmt.Errorf("network namespace path %s: closed", k.name)
	}
	args := netemArgs(c, offset)
	if args == nil {
		if err := k.removeQdiscs(); err != nil {
			return err
		}
		k.cfg, k.offset = c, offset
		return nil
	}
	for _, e := range k.ends() {
		if err := run("tc", append(e.args("replace"), args...)...); err != nil {
			k.qdisc = true // one end may have it: remove both
			rerr := k.removeQdiscs()
			k.cfg, k.offset = Config{}, 0
			if strings.Contains(err.Error(), "qdisc kind is unknown") {
				err = fmt.Errorf("%w: %w", ErrNoKernelNetem, err)
			}
			return errors.Join(err, rerr)
		}
	}
	k.qdisc = true
	k.cfg, k.offset = c, offset
	return nil
}

// end is one end of the pair, for tc: the namespace it is in ("" for the
// host's) and the device.
type end struct{ netns, dev string }

// args are tc's arguments to op ("replace", "del") the end's root qdisc.
func (e end) args(op string) []string {
	var a []string
	if e.netns != "" {
		a = []string{"-n", e.netns}
	}
	return append(a, "qdisc", op, "dev", e.dev, "root")
}

// ends are the host's end of the pair and the namespace's.
func (k *Kernel) ends() []end {
	return []end{{dev: k.name}, {netns: k.name, dev: nsLink}}
}

// removeQdiscs deletes both ends' root qdiscs, if any were installed.
func (k *Kernel) removeQdiscs() error {
	if !k.qdisc {
		return nil
	}
	var errs []error
	for _, e := range k.ends() {
		// "handle of zero": that end had none (a failed replace).
		if err := run("tc", e.args("del")...); err != nil && !strings.Contains(err.Error(), "handle of zero") {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		k.qdisc = false
	}
	return errors.Join(errs...)
}

// netemArgs are the netem options of c shortened by offset, for one
// direction; nil when there is nothing to apply.
func netemArgs(c Config, offset time.Duration) []string {
	d := max(c.RTT-offset, 0) / 2
	if d == 0 && c.Jitter == 0 && c.Bandwidth == 0 {
		return nil
	}
	// A large limit: netem drops beyond it (1000 packets by default), and
	// a delayed fast link holds many.
	args := []string{"netem", "limit", "100000"}
	if d > 0 || c.Jitter > 0 {
		args = append(args, "delay", tcTime(d))
		if c.Jitter > 0 {
			args = append(args, tcTime(c.Jitter/2)) // uniform, as the proxy's
		}
	}
	switch {
	case c.Bandwidth > 0:
		args = append(args, "rate", strconv.FormatInt(int64(c.Bandwidth)*8, 10)+"bit")
	case c.Jitter > 0:
		// With a rate netem sends packets in order (each waits for the one
		// before); without, jitter reorders them, which TCP answers with
		// retransmissions. The proxy never reorders either.
		args = append(args, "rate", "100gbit")
	}
	return args
}

// tcTime writes d for tc, to the nanosecond.
func tcTime(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', 3, 64) + "us"
}

// Calibrate makes the round trip through the path what was asked: the
// asked RTT on top of direct. The kernel's delays are exact, but the relay
// in the namespace adds its own cost (two more sockets and a goroutine
// wake-up per direction); Calibrate measures the round trip as the Proxy's
// does and shortens the delays by the excess, never below 0.
func (k *Kernel) Calibrate(ctx context.Context, x Exchange, direct time.Duration, n int) (Calibration, error) {
	return k.calibrate(ctx, x, direct, n, func(c Config) time.Duration { return c.RTT }, k.apply)
}

// serve accepts the clients' connections until the listener is closed.
func (k *Kernel) serve() {
	defer k.wg.Done()
	for {
		c, err := k.ln.Accept()
		if err != nil {
			return
		}
		k.wg.Add(1)
		go k.relay(c)
	}
}

// dialTimeout bounds the relay's connect to the upstream.
const dialTimeout = 5 * time.Second

// relay copies c to a new connection to the upstream and back. Between
// TCP connections io.Copy splices in the kernel.
func (k *Kernel) relay(c net.Conn) {
	defer k.wg.Done()
	up, err := net.DialTimeout("tcp", k.upstream, dialTimeout) // from the host's namespace: this thread never left it
	if err != nil {
		c.Close()
		return
	}
	if !k.track(c, up) {
		c.Close()
		up.Close()
		return
	}
	defer k.untrack(c, up)
	pipe := func(dst, src net.Conn) {
		_, err := io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok && err == nil {
			_ = tc.CloseWrite() // pass the end of the stream on; the other way may go on
			return
		}
		c.Close() // an error: stop both ways
		up.Close()
	}
	var wg sync.WaitGroup
	wg.Go(func() { pipe(up, c) })
	pipe(c, up)
	wg.Wait()
	c.Close()
	up.Close()
}

func (k *Kernel) track(cs ...net.Conn) bool {
	k.connMu.Lock()
	defer k.connMu.Unlock()
	if k.done {
		return false
	}
	for _, c := range cs {
		k.conns[c] = struct{}{}
	}
	return true
}

func (k *Kernel) untrack(cs ...net.Conn) {
	k.connMu.Lock()
	defer k.connMu.Unlock()
	for _, c := range cs {
		delete(k.conns, c)
	}
}

// Close stops the relay and closes every relayed connection, then deletes
// the veth pair (deleting one end deletes both, and their qdiscs) and the
// namespace. When it returns, nothing of the path is left. It may be
// called more than once.
func (k *Kernel) Close() error {
	return k.closeOnce(func() error {
		if k.ln != nil {
			_ = k.ln.Close()
		}
		k.connMu.Lock()
		k.done = true
		for c := range k.conns {
			_ = c.Close()
		}
		k.connMu.Unlock()
		k.wg.Wait()
		k.qdisc = false // they go with the links
		return k.tearDown()
	})
}

// tearDown deletes the veth pair, then the namespace. The link goes first:
// deleting a namespace destroys its links only later, asynchronously.
func (k *Kernel) tearDown() error {
	var errs []error
	if k.link {
		if err := run("ip", "link", "del", k.name); err != nil {
			errs = append(errs, err)
		} else {
			k.link = false
		}
	}
	if k.ns {
		if err := run("ip", "netns", "del", k.name); err != nil {
			errs = append(errs, err)
		} else {
			k.ns = false
		}
	}
	return errors.Join(errs...)
}

// Sweep removes the namespaces and links named by storebench processes
// that no longer run: what a storebench killed by SIGKILL left behind.
// Those of running processes, this one included, are left alone.
func Sweep() error {
	var errs []error
	if links, err := net.Interfaces(); err == nil {
		for _, l := range links {
			if pid, ok := ownerPid(l.Name); ok && !pidAlive(pid) {
				if err := run("ip", "link", "del", l.Name); err != nil {
					errs = append(errs, err)
				}
			}
		}
	} else {
		errs = append(errs, fmt.Errorf("list links: %w", err))
	}
	entries, err := os.ReadDir(netnsDir)
	if err != nil && !os.IsNotExist(err) {
		errs = append(errs, err)
	}
	for _, e := range entries {
		if pid, ok := ownerPid(e.Name()); ok && !pidAlive(pid) {
			if err := run("ip", "netns", "del", e.Name()); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// netnsDir is where ip netns keeps its named namespaces.
const netnsDir = "/run/netns"

// ownerPid reads the pid out of a name of the form sb-<pid>-<n>.
func ownerPid(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "sb-")
	if !ok {
		return 0, false
	}
	p, n, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(p)
	if _, err2 := strconv.ParseUint(n, 10, 32); err != nil || err2 != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

// run runs an ip or tc command; its error names the command and carries
// what it printed.
func run(name string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	ownProcessGroup(cmd)
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
		}
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
	}
	return nil
}

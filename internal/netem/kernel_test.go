package netem

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
)

// requireRoot fails where namespaces and links cannot be made: the tests
// run as root (make test, CI), and a silent skip would hide the path.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the kernel path needs root (ip netns add, ip link add): run make test as root or with sudo")
	}
}

// ours lists the namespaces and links this test process named (sb-<pid>-*):
// other storebench processes may run beside it.
func ours(t *testing.T) []string {
	t.Helper()
	prefix := fmt.Sprintf("sb-%d-", os.Getpid())
	var found []string
	for _, args := range [][]string{{"netns", "list"}, {"-o", "link", "show"}} {
		b, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("ip %v: %v %s", args, err, b)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, prefix) {
				found = append(found, args[len(args)-2]+": "+strings.TrimSpace(l))
			}
		}
	}
	return found
}

func qdiscs(t *testing.T, netns, dev string) string {
	t.Helper()
	args := []string{"qdisc", "show", "dev", dev}
	if netns != "" {
		args = append([]string{"-n", netns}, args...)
	}
	b, err := exec.Command("tc", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("tc %v: %v %s", args, err, b)
	}
	return string(b)
}

// redisSetGet stores a value of size bytes through addr and reads it back:
// bytes cross the path both ways, many segments each.
func redisSetGet(t *testing.T, addr string, size int) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	val := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	r := bufio.NewReader(c)
	fmt.Fprintf(c, "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$%d\r\n%s\r\n", len(val), val)
	if l, err := r.ReadString('\n'); err != nil || l != "+OK\r\n" {
		t.Fatalf("SET reply %q, %v", l, err)
	}
	fmt.Fprintf(c, "*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n")
	if l, err := r.ReadString('\n'); err != nil || l != fmt.Sprintf("$%d\r\n", len(val)) {
		t.Fatalf("GET reply %q, %v", l, err)
	}
	got := make([]byte, len(val)+2)
	if _, err := io.ReadFull(r, got); err != nil || !bytes.Equal(got[:len(val)], val) {
		t.Fatalf("GET returned other bytes than were set (%v)", err)
	}
}

// TestKernelPath runs the kernel path at RTT 0, where it needs no netem
// qdisc: namespace, veth pair and relay in front of a real Redis; bytes
// cross both ways, the probe and Calibrate work through it, and Close
// leaves no namespace, link or listener.
func TestKernelPath(t *testing.T) {
	requireRoot(t)
	srv := servertest.Start(t, server.Redis, server.Options{})
	if left := ours(t); len(left) > 0 {
		t.Fatalf("before the test: %v", left)
	}
	k, err := StartKernel(srv.Addr, Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	t.Logf("path %s: %s -> %s", k.Namespace(), k.Addr(), k.Upstream())
	if ap, err := netip.ParseAddrPort(k.Addr()); err != nil || !subnetRange.Contains(ap.Addr()) {
		t.Errorf("address %s: not in %s (%v)", k.Addr(), subnetRange, err)
	}
	if left := ours(t); len(left) != 2 {
		t.Errorf("want the namespace and the host's link, found %v", left)
	}
	if q := qdiscs(t, "", k.Namespace()) + qdiscs(t, k.Namespace(), nsLink); strings.Contains(q, "netem") {
		t.Errorf("a netem qdisc at rtt 0:\n%s", q)
	}
	redisSetGet(t, k.Addr(), 1<<20)

	base := leastOf3(t, srv.Addr, RedisExchange, 21)
	through := leastOf3(t, k.Addr(), RedisExchange, 21)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cal, err := k.Calibrate(ctx, RedisExchange, base.P25, 21)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("direct %v, through the namespace at rtt 0 %v (the relay's own cost %v); calibration %+v", base.Median, through.Median, through.Median-base.Median, cal)
	if cal.Rounds != 1 || cal.Offset != 0 || cal.Measured.Samples != 21 {
		t.Errorf("calibration at rtt 0: %+v", cal)
	}
	if err := k.Set(Config{}); err != nil {
		t.Errorf("Set(rtt 0): %v", err)
	}

	open, err := net.Dial("tcp", k.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	if _, err := open.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	if l, err := bufio.NewReader(open).ReadString('\n'); err != nil || l != "+PONG\r\n" {
		t.Fatalf("PING: %q %v", l, err)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if err := k.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if left := ours(t); len(left) > 0 {
		t.Errorf("left after Close: %v", left)
	}
	if _, err := os.Stat("/run/netns/" + k.Namespace()); !os.IsNotExist(err) {
		t.Errorf("/run/netns/%s after Close: %v", k.Namespace(), err)
	}
	if c, err := net.DialTimeout("tcp", k.Addr(), time.Second); err == nil {
		c.Close()
		t.Errorf("dial %s succeeded after Close", k.Addr())
	}
	_ = open.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := open.Read(make([]byte, 1)); err == nil {
		t.Error("a relayed connection stayed open after Close")
	}
	if err := k.Set(Config{}); err == nil {
		t.Error("Set after Close: no error")
	}
}

// TestKernelPathThreads: making paths leaves every thread of the process,
// the main one included, in the namespace it was in (a thread left inside
// would keep the namespace alive and make /proc/self/net show its sockets).
func TestKernelPathThreads(t *testing.T) {
	requireRoot(t)
	home, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	for range 8 {
		k, err := StartKernel("127.0.0.1:1", Config{})
		if err != nil {
			t.Fatal(err)
		}
		if err := k.Close(); err != nil {
			t.Fatal(err)
		}
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		ns, err := os.Readlink("/proc/self/task/" + task.Name() + "/ns/net")
		if err != nil {
			continue // the thread ended
		}
		if ns != home {
			t.Errorf("thread %s is in %s, the process started in %s", task.Name(), ns, home)
		}
	}
}

// deadPid is the pid of a process that has exited.
func deadPid(t *testing.T) int {
	t.Helper()
	for range 10 {
		cmd := exec.Command("true")
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		if pid := cmd.Process.Pid; !pidAlive(pid) {
			return pid
		}
	}
	t.Fatal("no dead pid found")
	return 0
}

// TestSweep: what a killed storebench left (a namespace with its pair, and
// a lone pair) is removed; a running process's path is not.
func TestSweep(t *testing.T) {
	requireRoot(t)
	dead := deadPid(t)
	ns, lone, peer := fmt.Sprintf("sb-%d-1", dead), fmt.Sprintf("sb-%d-2", dead), fmt.Sprintf("sbpeer%d", dead)
	t.Cleanup(func() {
		_ = exec.Command("ip", "link", "del", lone).Run()
		_ = exec.Command("ip", "link", "del", ns).Run()
		_ = exec.Command("ip", "netns", "del", ns).Run()
	})
	for _, args := range [][]string{
		{"netns", "add", ns},
		{"link", "add", ns, "type", "veth", "peer", "name", nsLink, "netns", ns},
		{"link", "add", lone, "type", "veth", "peer", "name", peer},
	} {
		if b, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v %s", args, err, b)
		}
	}
	srv := servertest.Start(t, server.Redis, server.Options{})
	live, err := StartKernel(srv.Addr, Config{}) // sweeps too
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := Sweep(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ns, lone, peer} {
		if b, err := exec.Command("ip", "link", "show", "dev", name).CombinedOutput(); err == nil {
			t.Errorf("link %s left after Sweep:\n%s", name, b)
		}
	}
	if _, err := os.Stat("/run/netns/" + ns); !os.IsNotExist(err) {
		t.Errorf("namespace %s left after Sweep: %v", ns, err)
	}
	if _, err := MeasureRTT(context.Background(), live.Addr(), RedisExchange, 3); err != nil {
		t.Errorf("a running process's path after Sweep: %v", err)
	}
	if len(ours(t)) != 2 {
		t.Errorf("this process's path after Sweep: %v", ours(t))
	}
}

// TestKernelPathNoNetem: on a kernel without the netem qdisc, asking the
// kernel path for a delay fails, naming the missing qdisc, and leaves
// nothing behind; a running path stays usable without a delay.
func TestKernelPathNoNetem(t *testing.T) {
	requireRoot(t)
	srv := servertest.Start(t, server.Redis, server.Options{})
	if m := Detect(context.Background()); m.KernelNetem {
		// The other side of the same rule: with netem the delay is applied
		// (TestKernelPathRTT measures it) and nothing stays after Close.
		k, err := StartKernel(srv.Addr, Config{RTT: time.Millisecond})
		if err != nil {
			t.Fatalf("the kernel has netem, yet StartKernel(rtt 1ms): %v", err)
		}
		if err := k.Close(); err != nil {
			t.Fatal(err)
		}
		if left := ours(t); len(left) > 0 {
			t.Errorf("left after Close: %v", left)
		}
		return
	}
	_, err := StartKernel(srv.Addr, Config{RTT: time.Millisecond})
	t.Logf("StartKernel(rtt 1ms): %v", err)
	if !errors.Is(err, ErrNoKernelNetem) || !strings.Contains(err.Error(), "tc qdisc replace") {
		t.Errorf("StartKernel(rtt 1ms): err %v, want %v and the tc command", err, ErrNoKernelNetem)
	}
	if left := ours(t); len(left) > 0 {
		t.Errorf("left after a failed start: %v", left)
	}

	k, err := StartKernel(srv.Addr, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	for _, c := range []Config{{RTT: time.Millisecond}, {Bandwidth: 125000}} {
		if err := k.Set(c); !errors.Is(err, ErrNoKernelNetem) {
			t.Errorf("Set(%s): err %v", c, err)
		}
	}
	if c := k.Config(); c != (Config{}) {
		t.Errorf("after a failed Set the path says %s", c)
	}
	if _, err := MeasureRTT(context.Background(), k.Addr(), RedisExchange, 3); err != nil {
		t.Errorf("the path after a failed Set: %v", err)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if left := ours(t); len(left) > 0 {
		t.Errorf("left after Close: %v", left)
	}
}

// TestKernelPathRTT: where the kernel has netem, the round trip through the
// kernel path is the asked one on top of direct, within 20%, at 1 ms and
// 5 ms. Elsewhere it checks the fallback instead: Detect names the proxy
// and says why, and StartPath gives the proxy.
func TestKernelPathRTT(t *testing.T) {
	m := Detect(context.Background())
	srv := servertest.Start(t, server.Redis, server.Options{})
	if !m.KernelNetem {
		if !strings.HasPrefix(m.Name, "proxy (") || m.Detail == "" {
			t.Errorf("no kernel path, mechanism %+v: want the proxy and why", m)
		}
		p, err := StartPath(m, srv.Addr, Config{RTT: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if _, ok := p.(*Proxy); !ok {
			t.Errorf("StartPath(%q) gave a %T", m.Name, p)
		}
		t.Logf("the kernel netem delay path was NOT exercised here: Detect chose %q (%s)", m.Name, m.Detail)
		return
	}
	base := leastOf3(t, srv.Addr, RedisExchange, 21)
	p, err := StartPath(m, srv.Addr, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	k, ok := p.(*Kernel)
	if !ok {
		t.Fatalf("StartPath(%q) gave a %T", m.Name, p)
	}
	for _, rtt := range []time.Duration{time.Millisecond, 5 * time.Millisecond} {
		if err := k.Set(Config{RTT: rtt}); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{qdiscs(t, "", k.Namespace()), qdiscs(t, k.Namespace(), nsLink)} {
			if !strings.Contains(q, "netem") {
				t.Errorf("rtt %v: an end without netem:\n%s", rtt, q)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cal, err := k.Calibrate(ctx, RedisExchange, base.P25, 21)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		got := leastOf3(t, k.Addr(), RedisExchange, 21)
		ratio := float64(got.Median-base.Median) / float64(rtt)
		t.Logf("asked %v: measured %v (direct %v, offset %v, %d rounds): ratio %.2f", rtt, got.Median, base.Median, cal.Offset, cal.Rounds, ratio)
		if ratio < 0.8 || ratio > 1.2 {
			t.Errorf("asked %v, measured %v more than direct: off by more than 20%%", rtt, got.Median-base.Median)
		}
		if cal.Offset < 0 || cal.Offset > rtt {
			t.Errorf("offset %v out of [0, %v]", cal.Offset, rtt)
		}
	}
	const rtt, jitter = 4 * time.Millisecond, 2 * time.Millisecond
	if err := k.Set(Config{RTT: rtt, Jitter: jitter}); err != nil {
		t.Fatal(err)
	}
	j := measure(t, k.Addr(), RedisExchange, 61)
	t.Logf("rtt %v ±%v: min %v, median %v, max %v", rtt, jitter, j.Min, j.Median, j.Max)
	if j.Median < rtt-jitter || j.Median > rtt+jitter || j.Max-j.Min < jitter/2 {
		t.Errorf("round trips from %v to %v (median %v), want within %v ± %v and varying", j.Min, j.Max, j.Median, rtt, jitter)
	}
	redisSetGet(t, k.Addr(), 1<<20) // jitter must not reorder a stream into a stall
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if left := ours(t); len(left) > 0 {
		t.Errorf("left after Close: %v", left)
	}
}

// TestNetemArgs: what each config asks of netem; where root can make a
// throwaway namespace, tc parses every one (a kernel without netem refuses
// only the qdisc kind, after parsing).
func TestNetemArgs(t *testing.T) {
	for _, tc := range []struct {
		c      Config
		offset time.Duration
		want   string
	}{
		{Config{}, 0, ""},
		{Config{RTT: time.Millisecond}, time.Millisecond, ""},
		{Config{RTT: time.Millisecond}, 0, "netem limit 100000 delay 500.000us"},
		{Config{RTT: time.Millisecond}, 101 * time.Microsecond, "netem limit 100000 delay 449.500us"},
		{Config{RTT: 5 * time.Millisecond, Jitter: time.Millisecond}, 0, "netem limit 100000 delay 2500.000us 500.000us rate 100gbit"},
		{Config{Bandwidth: 250000}, 0, "netem limit 100000 rate 2000000bit"},
		{Config{RTT: 100 * time.Microsecond, Jitter: 50 * time.Microsecond, Bandwidth: 12500000}, 0, "netem limit 100000 delay 50.000us 25.000us rate 100000000bit"},
	} {
		got := strings.Join(netemArgs(tc.c, tc.offset), " ")
		if got != tc.want {
			t.Errorf("%s, offset %v: %q, want %q", tc.c, tc.offset, got, tc.want)
		}
		if got == "" || os.Geteuid() != 0 {
			continue
		}
		args := append([]string{"--net", "tc", "qdisc", "add", "dev", "lo", "root"}, netemArgs(tc.c, tc.offset)...)
		if b, err := exec.Command("unshare", args...).CombinedOutput(); err != nil && !strings.Contains(string(b), "qdisc kind is unknown") {
			t.Errorf("tc %q: %v %s", got, err, b)
		}
	}
}

func TestOwnerPid(t *testing.T) {
	for name, want := range map[string]int{"sb-123-4": 123, "sb-1-0": 1, "sb-x-1": 0, "sb-12": 0, "sb-12-": 0, "sb0": 0, "eth0": 0, "sb--1-2": 0, "sb-0-1": 0} {
		got, ok := ownerPid(name)
		if got != want || ok != (want != 0) {
			t.Errorf("ownerPid(%q) = %d, %v; want %d", name, got, ok, want)
		}
	}
}

func TestFreeSubnet(t *testing.T) {
	p, err := freeSubnet(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if p.Bits() != 30 || !subnetRange.Contains(p.Addr()) || p.Masked() != p {
		t.Errorf("freeSubnet = %s", p)
	}
	used, err := usedPrefixes()
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range used {
		if u.Overlaps(p) {
			t.Errorf("%s overlaps %s, in use", p, u)
		}
	}
}

// TestChoose: the mechanism a run can ask for.
func TestChoose(t *testing.T) {
	ctx := context.Background()
	auto, err := Choose(ctx, "auto")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := Choose(ctx, "proxy"); err != nil || p.KernelNetem || !strings.HasPrefix(p.Name, "proxy") {
		t.Errorf("Choose(proxy) = %+v, %v", p, err)
	}
	k, err := Choose(ctx, "netem")
	if auto.KernelNetem != (err == nil) || (err == nil && (!k.KernelNetem || k.Name != KernelName)) {
		t.Errorf("auto %+v; Choose(netem) = %+v, %v", auto, k, err)
	}
	t.Logf("auto: %q; netem: %v", auto.Name, err)
	if _, err := Choose(ctx, "tc"); err == nil {
		t.Error("Choose(tc): no error")
	}
}

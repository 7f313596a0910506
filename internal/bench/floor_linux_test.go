package bench

// The floor of one Redis GET at a time: what a round trip over loopback
// costs with nothing between the program and the kernel, to which
// storebench's own c=1 latency is compared.

import (
	"fmt"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/throughput"
)

// floorDuration is each side's measured time per run.
const floorDuration = 3 * time.Second

// BenchmarkFloorRedisGet compares storebench's throughput get phase with
// one client (c=1: one GET per round trip, 3-byte values over 100,000
// keys) with the floor: a loop on one blocking socket that writes a GET
// and reads its reply with raw system calls (syscall.RawSyscall: no Go
// scheduler, no poller, no timer, no driver), as a C client would, timing
// each round trip with the monotonic clock. -versus.reps pairs, alternated;
// both at the defaults of a run (unpinned; storebench at the client threads
// its run chooses beside a managed Redis). Reported: each side's p50 and
// their ratio (goal: storebench ≤ 1.2× the floor).
func BenchmarkFloorRedisGet(b *testing.B) {
	srv, st := startRedis(b, "")
	placed := defaultThreads(b, srv)
	fillRedisBenchmarkKeys(b, srv.Addr, redisKeyspace, redisValue)
	p := throughput.Params{Keyspace: workload.Keyspace{Keys: redisKeyspace, ValueSize: redisValue}, Operations: []string{throughput.OpGet},
		Load: workload.Load{Clients: 1, Duration: floorDuration}}
	var floor, ours []float64
	var clientIO string
	for i := range max(*reps, 1) {
		f := floorGets(b, srv.Addr, floorDuration)
		o := runOurs(b, srv, st, p, nil)
		floor, ours, clientIO = append(floor, f), append(ours, o.p50Us), o.clientIO
		b.Logf("pair %d: floor p50 %.1f µs, storebench p50 %.1f µs (%.2f×)", i+1, f, o.p50Us, o.p50Us/f)
	}
	pairs, ratios := make([]string, len(floor)), make([]sample, len(floor))
	for i := range floor {
		pairs[i] = fmt.Sprintf("%.2f", ours[i]/floor[i])
		ratios[i].opsS = ours[i] / floor[i]
	}
	ratio := median(ratios, func(x sample) float64 { return x.opsS })
	slices.Sort(floor)
	slices.Sort(ours)
	f, o := floor[len(floor)/2], ours[len(ours)/2]
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(f, "floor-p50-µs")
	b.ReportMetric(o, "ours-p50-µs")
	b.ReportMetric(ratio, "ratio")
	printTable(fmt.Sprintf("Redis GET one at a time (c=1), p50 round trip (medians of %d interleaved pairs; ratio = the median of the pairs' storebench ÷ floor, goal ≤ 1.20)\n%s\n"+
		"  floor p50 %.1f µs, storebench p50 %.1f µs, ratio %.2f (pairs %s)\n"+
		"  floor: one blocking socket, write(2) a GET, read(2) its reply, raw system calls, %s per run; storebench: throughput get, 1 client, %s, keyspace %d, %d-byte values, %s, client I/O %s\n",
		len(floor), machine(), f, o, ratio, strings.Join(pairs, " "), floorDuration, floorDuration, redisKeyspace, redisValue, placed, clientIO))
}

// floorGets GETs redis-benchmark's keys (fillRedisBenchmarkKeys) one at a
// time on one blocking socket for d and returns the median round trip, µs.
// The loop makes no allocation and no call into Go's scheduler: the
// thread is locked and the system calls are raw, so it blocks in read(2)
// exactly as a C client does.
func floorGets(b *testing.B, addr string, d time.Duration) float64 {
	b.Helper()
	fd := floorDial(b, addr)
	defer syscall.Close(fd)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	lat := make([]int64, 0, 1<<20)
	cmd := make([]byte, 0, 64)
	buf := make([]byte, 4096)
	key := uint64(0x9E3779B97F4A7C15)
	start := time.Now()
	for time.Since(start) < d && len(lat) < cap(lat) {
		key = key*6364136223846793005 + 1442695040888963407 // an LCG: uniform enough over the keys
		k := int((key >> 33) % redisKeyspace)
		cmd = append(cmd[:0], "*2\r\n$3\r\nGET\r\n$16\r\nkey:"...)
		cmd = appendPadded(cmd, k, 12)
		cmd = append(cmd, "\r\n"...)
		t0 := time.Now()
		if err := rawWrite(fd, cmd); err != nil {
			b.Fatal(err)
		}
		// The reply is "$3\r\nxxx\r\n": read until all of it is there.
		n, want := 0, -1
		for want < 0 || n < want {
			m, err := rawRead(fd, buf[n:])
			if err != nil {
				b.Fatal(err)
			}
			n += m
			if want < 0 {
				want = replyLen(buf[:n])
			}
		}
		lat = append(lat, int64(time.Since(t0)))
		if n != want || buf[0] != '$' {
			b.Fatalf("GET key:%012d: reply %q", k, buf[:n])
		}
	}
	slices.Sort(lat)
	return float64(lat[len(lat)/2]) / 1e3
}

// floorDial connects a blocking TCP socket to addr (127.0.0.1:port), with
// TCP_NODELAY as every Redis client sets it.
func floorDial(b *testing.B, addr string) int {
	b.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		b.Fatal(err)
	}
	pn, err := strconv.Atoi(port)
	ip := net.ParseIP(host).To4()
	if err != nil || ip == nil {
		b.Fatalf("floor: address %q is not IPv4 host:port", addr)
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	sa := &syscall.SockaddrInet4{Port: pn}
	copy(sa.Addr[:], ip)
	if err := syscall.Connect(fd, sa); err != nil {
		syscall.Close(fd)
		b.Fatal(err)
	}
	if err := syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1); err != nil {
		syscall.Close(fd)
		b.Fatal(err)
	}
	return fd
}

// appendPadded appends v in decimal, zero-padded to width digits.
func appendPadded(dst []byte, v, width int) []byte {
	start := len(dst)
	dst = strconv.AppendInt(dst, int64(v), 10)
	for len(dst)-start < width {
		dst = slices.Insert(dst, start, '0')
	}
	return dst
}

// replyLen is the length of a whole bulk-string reply whose start is in p
// ("$<n>\r\n" then n bytes and CRLF), or -1 until its first line is.
func replyLen(p []byte) int {
	for i := 1; i+1 < len(p); i++ {
		if p[i] == '\r' && p[i+1] == '\n' {
			n, err := strconv.Atoi(string(p[1:i]))
			if err != nil || n < 0 {
				return i + 2 // not a value: the test fails on it
			}
			return i + 2 + n + 2
		}
	}
	return -1
}

// rawWrite writes all of p with write(2), bypassing the Go runtime.
func rawWrite(fd int, p []byte) error {
	for len(p) > 0 {
		n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return fmt.Errorf("write: %w", errno)
		}
		p = p[n:]
	}
	return nil
}

// rawRead is read(2), bypassing the Go runtime.
func rawRead(fd int, p []byte) (int, error) {
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		switch {
		case errno == syscall.EINTR:
			continue
		case errno != 0:
			return 0, fmt.Errorf("read: %w", errno)
		case n == 0:
			return 0, fmt.Errorf("read: the server closed the connection")
		}
		return int(n), nil
	}
}

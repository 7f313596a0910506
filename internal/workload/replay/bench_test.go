package replay

import (
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/storebench/storebench/internal/trace"
	"github.com/storebench/storebench/internal/trace/tracegen"
	"github.com/storebench/storebench/internal/workload"
)

var (
	benchRate    = flag.Int("replay.rate", 10000, "BenchmarkReplayLateness: the trace's requests a second")
	benchSeconds = flag.Int("replay.seconds", 10, "BenchmarkReplayLateness: the trace's seconds")
	benchClients = flag.Int("replay.clients", 4, "BenchmarkReplayLateness: the replay's connections")
	benchBytes   = flag.Int64("replay.bytes", 2<<30, "BenchmarkReplayLargeTrace: the generated trace's size, uncompressed")
)

// BenchmarkReplayLateness replays a flat trace of -replay.rate requests a
// second on the memory store at its recorded pace and reports how late
// the sends left (the acceptance: p99 under 1 ms at 10k requests/s on 2
// cores). A benchmark, not a test: it measures the machine as much as the
// client.
func BenchmarkReplayLateness(b *testing.B) {
	path := filepath.Join(b.TempDir(), "flat.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tracegen.Write(f, trace.CSV, tracegen.Config{Requests: *benchRate * *benchSeconds, Seconds: *benchSeconds, Keys: 10000, Clients: 64, Flat: true}); err != nil {
		b.Fatal(err)
	}
	f.Close()
	st := openers["memory"](b)
	for b.Loop() {
		ph, sum := run(b, st, Params{Trace: path, Load: workload.Load{Clients: *benchClients}})
		b.ReportMetric(sum.LatenessUs.P50, "lateness-p50-us")
		b.ReportMetric(sum.LatenessUs.P99, "lateness-p99-us")
		b.ReportMetric(sum.LatenessUs.Max, "lateness-max-us")
		b.ReportMetric(ph.ThroughputOpsS, "achieved-req/s")
		b.ReportMetric(ph.LatencyUs.P99, "latency-p99-us")
	}
}

// BenchmarkReplayLargeTrace generates a Twitter-format trace of
// -replay.bytes (uncompressed; zstd on disk), replays it at speed max on
// the memory store and reports the process's peak RSS during the replay
// (VmHWM, reset before it): the trace is streamed, so it stays bounded
// whatever the trace's size (the goal: under 200 MB; the memory store's
// own data, a zipfian 100k keys, is in it).
func BenchmarkReplayLargeTrace(b *testing.B) {
	path := filepath.Join(b.TempDir(), "large.csv.zst")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	zw, err := zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		b.Fatal(err)
	}
	const lineBytes = 46 // a generated Twitter line's mean size, measured
	requests := int(*benchBytes / lineBytes)
	stats, err := tracegen.Write(zw, trace.Twitter, tracegen.Config{Requests: requests, Seconds: max(requests/50000, 1), Keys: 100000, Clients: 64})
	if err != nil {
		b.Fatal(err)
	}
	zw.Close()
	f.Close()
	fi, _ := os.Stat(path)
	st := openers["memory"](b)
	for b.Loop() {
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
			b.Logf("cannot reset the peak RSS (%v): it includes the generation", err)
		}
		ph, sum := run(b, st, Params{Trace: path, Speed: SpeedMax, Load: workload.Load{Clients: 4}})
		if sum.Requests != stats.Requests {
			b.Fatalf("replayed %d of the trace's %d requests", sum.Requests, stats.Requests)
		}
		b.ReportMetric(float64(peakRSS(b))/(1<<20), "peak-rss-MB")
		b.ReportMetric(float64(sum.Requests), "requests")
		b.ReportMetric(ph.ThroughputOpsS, "req/s")
		b.ReportMetric(float64(fi.Size())/(1<<20), "zst-MB")
	}
}

// peakRSS is the process's peak resident set (VmHWM), in bytes.
func peakRSS(b *testing.B) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}

package doctor

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cyclictestWake runs cyclictest as the probes run (one thread per CPU,
// pinned, a wake-up every 1 ms, no real-time priority) for d and returns
// the p50 and p99 of its wake-up latency, µs. --laptop keeps it from
// holding the CPUs out of deep idle states (/dev/cpu_dma_latency), which
// our probe does not do either: both see the machine as it is.
func cyclictestWake(b *testing.B, cpus int, d time.Duration) (p50, p99 float64) {
	bin, err := exec.LookPath("cyclictest")
	if err != nil {
		b.Fatal("cyclictest is missing: apt-get install rt-tests (or ./scripts/install-deps.sh bench)")
	}
	out, err := exec.Command(bin, "-q", "-m", "--laptop", "-a", "-t", strconv.Itoa(cpus), "-i", "1000",
		"-D", fmt.Sprintf("%ds", int(d.Seconds())), "-h", "20000").Output()
	if err != nil {
		b.Fatalf("cyclictest: %v", err)
	}
	// Histogram lines: a bucket of 1 µs, then each thread's count.
	var buckets []int64
	var counts []int64
	var total int64
	s := bufio.NewScanner(bytes.NewReader(out))
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) < 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		us, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		var n int64
		for _, c := range f[1:] {
			v, _ := strconv.ParseInt(c, 10, 64)
			n += v
		}
		if n > 0 {
			buckets, counts, total = append(buckets, us), append(counts, n), total+n
		}
	}
	if total == 0 {
		b.Fatalf("cyclictest printed no histogram:\n%s", out)
	}
	at := func(q float64) float64 {
		var seen int64
		for i, n := range counts {
			if seen += n; float64(seen) >= q*float64(total) {
				return float64(buckets[i])
			}
		}
		return float64(buckets[len(buckets)-1])
	}
	return at(0.5), at(0.99)
}

// BenchmarkWakeVersusCyclictest: doctor's 1 ms wake-up figures beside
// cyclictest's on the same machine, in interleaved pairs; the medians of
// the ratios must be within 2× (issue 31).
func BenchmarkWakeVersusCyclictest(b *testing.B) {
	cpus := len(allowedCPUs())
	for b.Loop() {
		var r50, r99 []float64
		for pair := range 3 {
			ours, err := wakeUps(context.Background(), time.Millisecond, 2*time.Second)
			if err != nil {
				b.Fatal(err)
			}
			c50, c99 := cyclictestWake(b, cpus, 2*time.Second)
			b.Logf("pair %d: doctor p50 %.0f µs p99 %.0f µs; cyclictest p50 %.0f µs p99 %.0f µs", pair, ours.P50, ours.P99, c50, c99)
			r50, r99 = append(r50, ours.P50/c50), append(r99, ours.P99/c99)
		}
		slices.Sort(r50)
		slices.Sort(r99)
		b.ReportMetric(r50[1], "p50_ratio")
		b.ReportMetric(r99[1], "p99_ratio")
		if r50[1] < 0.5 || r50[1] > 2 {
			b.Errorf("doctor's p50 wake-up is %.2f× cyclictest's: not within 2×", r50[1])
		}
	}
}

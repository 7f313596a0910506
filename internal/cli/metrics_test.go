package cli

import (
	"context"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/testkit"
)

// cellOps scrapes url and sums storebench_ops_total over the phases of cell.
func cellOps(t *testing.T, url, cell string) float64 {
	t.Helper()
	var sum float64
	for line := range strings.Lines(testkit.Get(t, url)) {
		if !strings.HasPrefix(line, "storebench_ops_total{") || !strings.Contains(line, `cell="`+cell+`"`) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[strings.LastIndexByte(line, ' ')+1:]), 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		sum += v
	}
	return sum
}

// TestRunMetricsAddr: run --metrics-addr serves the running cell's ops
// while the run lasts, a counter that grows from one scrape to the next,
// and closes its port when the run ends.
func TestRunMetricsAddr(t *testing.T) {
	out := t.TempDir()
	buf := new(testkit.Buffer)
	app := testApp()
	app.Stdout, app.Stderr = buf, buf
	code := make(chan int, 1)
	go func() {
		code <- app.Main(context.Background(), []string{"run", "throughput", "--stores", "memory", "--duration", "5s",
			"--clients", "4", "--no-hiccup", "--metrics-addr", "127.0.0.1:0", "--out", out})
	}()
	served := regexp.MustCompile(`metrics: serving (http://(127\.0\.0\.1:\d+)/metrics)`)
	var m []string
	testkit.Eventually(t, 30*time.Second, 50*time.Millisecond, "the metrics address logged", func() bool {
		m = served.FindStringSubmatch(buf.String())
		return m != nil
	})
	url, addr := m[1], m[2]
	var first float64
	testkit.Eventually(t, 30*time.Second, 100*time.Millisecond, "a measured second scraped", func() bool {
		first = cellOps(t, url, "memory/throughput")
		return first > 0
	})
	time.Sleep(1500 * time.Millisecond)
	if second := cellOps(t, url, "memory/throughput"); second <= first {
		t.Errorf("ops counter %v then %v 1.5 s later: it should grow while the cell runs", first, second)
	}
	select {
	case c := <-code:
		if c != ExitOK {
			t.Fatalf("exit %d\n%s", c, buf.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("the run did not end\n%s", buf.String())
	}
	testkit.Refused(t, addr) // the port closed with the run
}

// TestRunMetricsAddrRefused: a bad address and a port in use are bad
// input: one line, exit 2, before any work (no result written).
func TestRunMetricsAddrRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	out := t.TempDir()
	for addr, want := range map[string]string{
		"9100":             "want HOST:PORT or :PORT",
		":99999":           "port must be a number",
		ln.Addr().String(): "address already in use",
		"127.0.0.1:http":   "port must be a number",
		"192.0.2.1:9100":   "cannot assign requested address", // an address of no interface here
	} {
		buf := new(testkit.Buffer)
		app := testApp()
		app.Stdout, app.Stderr = buf, buf
		code := app.Main(context.Background(), []string{"run", "throughput", "--stores", "memory", "--duration", "1s",
			"--metrics-addr", addr, "--out", out})
		msg := buf.String()
		if code != ExitUsage || !strings.Contains(msg, want) || strings.Count(strings.TrimSpace(msg), "\n") != 0 {
			t.Errorf("--metrics-addr %q: exit %d, %q; want exit 2 and one line saying %q", addr, code, msg, want)
		}
	}
	if entries, err := os.ReadDir(out); err != nil || len(entries) != 0 {
		t.Errorf("refused runs left %v in --out (%v)", entries, err)
	}
}

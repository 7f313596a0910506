package cli

import (
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/server/servertest"
)

// compare --fail-on (issue 33): a Redis cell behind a 2 ms round trip is a
// p50 regression beyond noise (exit 3, the cell named, a JUnit failure);
// five pairs of identical runs are not (exit 0): noise is not a
// regression. Client and server share CPU 0, as the quick suite pins
// them, so the scheduler's choice of one CPU or two (a 4× round trip on a
// small VM) is not the noise judged; each run repeats the cell three
// times, so its interval is its repeats' range: one run's own 99%
// interval cannot see a busy spell of the machine, which on the 2-CPU VM
// made two single runs' p50 30 and 53 µs (+78%, intervals apart). The
// hiccup meter stays on: a whole run once ran 2× slower (three repeats
// alike, p50 24.7 → 47.9 µs), and the CPU speed its probes measure is what
// lets compare say that such a change is the machine's (not judged).
func TestCompareFailOn(t *testing.T) {
	base := servertest.BaseDir(t)
	runOnce := func(extra ...string) string {
		t.Helper()
		out := t.TempDir()
		var buf bytes.Buffer
		args := append([]string{"run", "kv", "--stores", "redis", "--keys", "3000", "--repeat", "3", "--client-cpus", "0", "--server-cpus", "0",
			"--out", out, "--data-dir", base, "--quiet"}, extra...)
		if code := netApp(&buf).Main(context.Background(), args); code != ExitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, buf.String())
		}
		matches, _ := filepath.Glob(filepath.Join(out, "*", "result.json"))
		return matches[0]
	}
	compare := func(a, b string, extra ...string) (int, string) {
		var buf bytes.Buffer
		code := netApp(&buf).Main(context.Background(), append([]string{"compare", a, b, "--fail-on", "p50>+50%"}, extra...))
		return code, buf.String()
	}
	plain := runOnce()
	slow := runOnce("--rtt", "2ms", "--net-mechanism", "proxy")
	junit := filepath.Join(t.TempDir(), "compare.xml")
	code, text := compare(plain, slow, "--junit", junit)
	if code != ExitAssert || !strings.Contains(text, "FAIL p50>+50%: redis/kv/keys=3000 · read") {
		t.Fatalf("--rtt 2ms against none: exit %d, want %d naming the cell\n%s", code, ExitAssert, text)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil || doc.Failures != 1 {
		t.Errorf("junit: %v, %d failures (want 1: the cell × rule)\n%s", err, doc.Failures, b)
	}
	for i := range 5 {
		a, b := runOnce(), runOnce()
		if code, text := compare(a, b); code != ExitOK {
			t.Errorf("pair %d of identical runs: exit %d, want 0\n%s", i+1, code, text)
		}
	}
	for _, bad := range []string{"p99>10", "p99>-10%", "latency>+1%", "ops_s<+5%"} {
		var buf bytes.Buffer
		if code := netApp(&buf).Main(context.Background(), []string{"compare", plain, slow, "--fail-on", bad}); code != ExitUsage {
			t.Errorf("--fail-on %q: exit %d, want 2\n%s", bad, code, buf.String())
		}
	}
}

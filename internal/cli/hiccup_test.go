package cli

import (
	"bytes"
	"context"
	"runtime"
	"testing"
)

// TestHiccupBesideEveryPhase: every measured phase carries the hiccup
// meter's window (wake-ups counted on each CPU the run used, the probes'
// CPU out of the client's); --no-hiccup leaves it out.
func TestHiccupBesideEveryPhase(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the hiccup probes are Linux's")
	}
	for _, off := range []bool{false, true} {
		out := t.TempDir()
		args := []string{"run", "throughput", "--stores", "memory", "--duration", "300ms", "--clients", "2", "--out", out, "--quiet"}
		if off {
			args = append(args, "--no-hiccup")
		}
		var buf bytes.Buffer
		if code := netApp(&buf).Main(context.Background(), args); code != ExitOK {
			t.Fatalf("exit %d\n%s", code, buf.String())
		}
		for _, c := range readOnlyResult(t, out).Cells {
			for _, p := range c.Phases {
				switch h := p.Hiccup; {
				case off && h != nil:
					t.Errorf("--no-hiccup: %s %s has %+v", c.ID, p.Name, h)
				case !off && (h == nil || h.All.Wakes < 100 || len(h.PerCPU) != runtime.NumCPU() || h.ProbeCPUS <= 0):
					t.Errorf("%s %s: hiccup %+v", c.ID, p.Name, h)
				}
			}
		}
	}
}

package progress

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/run"
)

func progressCells() []run.CellInfo {
	mk := func(store string, keys int64) run.CellInfo {
		return run.CellInfo{Label: fmt.Sprintf("%s/kv/keys=%d", store, keys), Target: store, Weight: float64(keys)}
	}
	return []run.CellInfo{mk("memory", 1000), mk("memory", 10000), mk("redis", 1000), mk("redis", 10000)}
}

// fakeClock is a clock a test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// TestProgressLine: on a terminal, the live line names the cell, i of n, the
// live ops/s and p99, elapsed and remaining time, and is cleared before any
// log line and at the end.
func TestProgressLine(t *testing.T) {
	var b bytes.Buffer
	clk := &fakeClock{t: time.Unix(1000, 0)}
	p := newProgressTo(&b, false, true, false)
	p.now = clk.now
	cells := progressCells()
	p.Begin(cells)
	defer p.Close()

	p.Logf("[%d/%d] %s", 1, 4, cells[0].Label)
	p.CellStarted(0)
	clk.advance(2 * time.Second)
	p.CellDone(0, 2) // memory: 2 s per 1,000 keys
	p.Logf("[%d/%d] %s", 2, 4, cells[1].Label)
	p.CellStarted(1)
	clk.advance(5 * time.Second)
	p.Second("write", metrics.Second{T: 4, Ops: 12345, P99: 1500})
	out := b.String()
	last := out[strings.LastIndex(out, "\r\x1b[K")+4:]
	// 10,000 keys at 2 s per 1,000 = 20 s, 5 s done: 15 s left for this
	// cell; redis has no finished cell: 2 ms per key overall, 22 s.
	for _, want := range []string{"[2/4]", "memory/kv/keys=10000", "write 12,345 ops/s", "p99 1.5 ms", "elapsed 0:07", "about 0:37 left"} {
		if !strings.Contains(last, want) {
			t.Errorf("live line %q lacks %q", last, want)
		}
	}
	if strings.Contains(out, "\x1b[0m") || strings.Contains(out, "\x1b[1m") {
		t.Errorf("colour with colour off: %q", out)
	}
	// A log line first clears the live line, then the line comes back.
	p.Logf("a message")
	out = b.String()
	if !strings.Contains(out, "\r\x1b[Ka message\n\r\x1b[K[2/4]") {
		t.Errorf("log line not written between clearing and redrawing the live line: %q", out[len(out)-200:])
	}
	// The phase's last, partial second: 500 ops in the 10 ms since the
	// previous second arrived.
	clk.advance(10 * time.Millisecond)
	p.Second("write", metrics.Second{T: 5, Ops: 500})
	out = b.String()
	if last := out[strings.LastIndex(out, "\r\x1b[K")+4:]; !strings.Contains(last, "write 50,000 ops/s") {
		t.Errorf("partial second: %q, want 50,000 ops/s", last)
	}
	p.CellDone(1, 20)
	if !strings.HasSuffix(b.String(), "\r\x1b[K") {
		t.Errorf("live line not cleared when the cell ended: %q", b.String())
	}
}

// TestProgressNarrow: the line never wraps, whatever the terminal's width.
func TestProgressNarrow(t *testing.T) {
	var b bytes.Buffer
	p := newProgressTo(&b, false, true, true)
	p.width = func() int { return 40 }
	p.Begin(progressCells())
	defer p.Close()
	p.CellStarted(3)
	p.Second("read", metrics.Second{Ops: 99999, P99: 250})
	line := b.String()[strings.LastIndex(b.String(), "\r\x1b[K")+4:]
	plain := strings.NewReplacer("\x1b[0m", "", "\x1b[1m", "", "\x1b[2m", "", "\x1b[36m", "").Replace(line)
	if n := len([]rune(plain)); n > 39 {
		t.Errorf("line of %d characters on a 40-column terminal: %q", n, plain)
	}
	if !strings.Contains(line, "\x1b[1m") {
		t.Errorf("no colour with colour on: %q", line)
	}
}

// TestProgressQuietAndNotATerminal: --quiet prints nothing; off a terminal
// only the log lines are printed, without control characters.
func TestProgressQuietAndNotATerminal(t *testing.T) {
	var quiet, plain bytes.Buffer
	for _, c := range []struct {
		buf         *bytes.Buffer
		quiet, live bool
	}{{&quiet, true, false}, {&plain, false, false}} {
		p := newProgressTo(c.buf, c.quiet, c.live, true)
		p.Begin(progressCells())
		p.Logf("starting %s", "memory")
		p.CellStarted(0)
		p.Second("write", metrics.Second{Ops: 5})
		p.CellDone(0, 1)
		p.Close()
	}
	if quiet.Len() != 0 {
		t.Errorf("--quiet printed %q", quiet.String())
	}
	if plain.String() != "starting memory\n" {
		t.Errorf("off a terminal: %q, want the log line alone", plain.String())
	}
	// New itself: a bytes.Buffer is not a terminal.
	if p := New(&plain, &plain, false); p.live {
		t.Error("live progress on a buffer")
	}
}

// Package progress is what storebench run shows on the terminal while it
// works; its Display is the run's Observer.
package progress

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/report"
	"github.com/storebench/storebench/internal/run"
	"github.com/storebench/storebench/internal/tick"
)

// Display is what run shows while it works: the log lines ("starting redis",
// "[3/12] redis/kv/keys=1000") and, on a terminal, one live status line under
// them, redrawn every second:
//
//	[3/12] redis/kv/keys=1000 · write 36,129 ops/s · p99 104 µs · elapsed 0:14 · about 0:40 left
//
// The live line is drawn only when both stdout and stderr are terminals (so
// `storebench run > out.txt` and `2> log` get no control characters) and
// TERM is not dumb; --quiet silences the log and the line; NO_COLOR turns
// colour off. The remaining time is estimated from the finished cells: per
// target, time per key (or per cell where cells have no key count).
type Display struct {
	mu    sync.Mutex
	w     io.Writer
	quiet bool
	live  bool
	color bool
	width func() int
	now   func() time.Time

	cells     []run.CellInfo
	secs      []float64 // wall time of each finished cell; -1 if not finished
	start     time.Time
	cur       int // the running cell, -1 between cells
	cellStart time.Time
	phase     string
	last      metrics.Second
	rate      float64   // ops/s of the last second
	lastEvent time.Time // when the previous second (or the cell) arrived
	haveLast  bool
	drawn     bool
	stop      context.CancelFunc // of the ticking goroutine
	stopped   chan struct{}
}

// New decides from the streams and the environment how to show progress.
func New(stdout, stderr io.Writer, quiet bool) *Display {
	live := !quiet && isTerminal(stdout) && isTerminal(stderr) && os.Getenv("TERM") != "dumb"
	p := newProgressTo(stderr, quiet, live, os.Getenv("NO_COLOR") == "")
	if f, ok := stderr.(fileWriter); ok && live {
		p.width = func() int {
			if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 20 {
				return w
			}
			return 80
		}
	}
	return p
}

// newProgressTo is New with every choice made by the caller (tests).
func newProgressTo(w io.Writer, quiet, live, color bool) *Display {
	return &Display{w: w, quiet: quiet, live: live, color: color && live, cur: -1,
		width: func() int { return 100 }, now: time.Now}
}

// fileWriter is an *os.File, or a writer over one that says which (the
// CLI's, which redacts passwords on their way out).
type fileWriter interface{ Fd() uintptr }

func isTerminal(w io.Writer) bool {
	f, ok := w.(fileWriter)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Logf prints one log line (to stderr), keeping the live line below it.
func (p *Display) Logf(format string, args ...any) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
	fmt.Fprintf(p.w, format+"\n", args...)
	p.drawLocked()
}

// Begin starts the clock for the planned cells.
func (p *Display) Begin(cells []run.CellInfo) {
	p.mu.Lock()
	p.cells = cells
	p.secs = make([]float64, len(cells))
	for i := range p.secs {
		p.secs[i] = -1
	}
	p.start = p.now()
	p.mu.Unlock()
	if p.live && p.stop == nil {
		var ticking context.Context
		ticking, p.stop = context.WithCancel(context.Background())
		p.stopped = make(chan struct{})
		go p.tick(ticking)
	}
}

// tick redraws the line every second, so elapsed time moves while a
// server starts or a phase prepares.
func (p *Display) tick(ctx context.Context) {
	defer close(p.stopped)
	tick.Every(ctx, time.Second, func() {
		p.mu.Lock()
		p.drawLocked()
		p.mu.Unlock()
	})
}

// CellStarted marks cell i as running.
func (p *Display) CellStarted(i int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cur, p.cellStart, p.phase, p.haveLast = i, p.now(), "", false
	p.lastEvent = p.cellStart
	p.drawLocked()
}

// Second receives each completed second of the running cell's phases
// (workload.Hooks.OnSecond); it is called from the engine's goroutine. A
// phase's last second is usually partial: its ops are divided by the time
// since the previous second arrived (at most 1 s), which is its length.
func (p *Display) Second(phase string, s metrics.Second) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	d := min(max(now.Sub(p.lastEvent).Seconds(), 0.001), 1)
	p.phase, p.last, p.rate, p.lastEvent, p.haveLast = phase, s, float64(s.Ops)/d, now, true
	p.drawLocked()
}

// CellDone records how long cell i took and clears the live line.
func (p *Display) CellDone(i int, seconds float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i >= 0 && i < len(p.secs) {
		p.secs[i] = seconds
	}
	p.cur = -1
	p.clearLocked()
}

// close stops the ticker and leaves the terminal clean.
func (p *Display) Close() {
	if p.stop != nil {
		p.stop()
		<-p.stopped
		p.stop = nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cur = -1
	p.clearLocked()
}

func (p *Display) clearLocked() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

func (p *Display) drawLocked() {
	if !p.live || p.cur < 0 || p.cur >= len(p.cells) {
		return
	}
	line := p.statusLocked()
	fmt.Fprint(p.w, "\r\x1b[K"+line)
	p.drawn = true
}

// statusLocked composes the live line, cut to the terminal's width so it
// never wraps (a wrapped line could not be redrawn in place).
func (p *Display) statusLocked() string {
	type part struct{ text, sgr string }
	now := p.now()
	parts := []part{
		{fmt.Sprintf("[%d/%d]", p.cur+1, len(p.cells)), "1"},
		{p.cells[p.cur].Label, "1"},
	}
	if p.haveLast {
		live := fmt.Sprintf("%s %s ops/s", p.phase, report.Whole(p.rate))
		if p.last.P99 > 0 {
			live += " · p99 " + latencyText(p.last.P99)
		}
		if p.last.Errors > 0 {
			live += fmt.Sprintf(" · %d errors", p.last.Errors)
		}
		parts = append(parts, part{live, "36"})
	}
	parts = append(parts, part{"elapsed " + clock(now.Sub(p.start)), "2"})
	if left, ok := p.remainingLocked(now); ok {
		parts = append(parts, part{"about " + clock(left) + " left", "2"})
	}
	var b strings.Builder
	width := p.width() - 1
	n := 0
	for i, pt := range parts {
		sep := ""
		if i == 1 {
			sep = " "
		} else if i > 1 {
			sep = " · "
		}
		text := sep + pt.text
		if rest := width - n; utf8.RuneCountInString(text) > rest {
			if rest > 1 {
				r := []rune(text)
				text = string(r[:rest-1]) + "…"
			} else {
				break
			}
		}
		n += utf8.RuneCountInString(text)
		if p.color {
			b.WriteString(sep + "\x1b[" + pt.sgr + "m" + strings.TrimPrefix(text, sep) + "\x1b[0m")
		} else {
			b.WriteString(text)
		}
		if n >= width {
			break
		}
	}
	return b.String()
}

// remainingLocked estimates the time left (run.Remaining).
func (p *Display) remainingLocked(now time.Time) (time.Duration, bool) {
	return run.Remaining(p.cells, p.secs, p.cur, now.Sub(p.cellStart))
}

// clock prints a duration as m:ss or h:mm:ss.
func clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

func latencyText(us float64) string {
	switch {
	case us >= 1e6:
		return fmt.Sprintf("%.2f s", us/1e6)
	case us >= 1e3:
		return fmt.Sprintf("%.1f ms", us/1e3)
	}
	return fmt.Sprintf("%.0f µs", us)
}

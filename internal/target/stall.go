package target

import (
	"context"
	"fmt"
	"time"

	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/server"
)

// Stall stops a managed server for For, After into a measured phase, and
// continues it: what a long GC pause or a swapped-out VM does, to show
// which way of driving the load records it (coordinated omission).
type Stall struct {
	After time.Duration
	For   time.Duration
}

// String is the stall as --stall takes it: AFTER:FOR.
func (s Stall) String() string { return s.After.String() + ":" + s.For.String() }

// StallProbe returns a probe that observes the phase with inner (nil for
// none) and stalls the instance's managed server during it. The server is
// continued when the stall is over, when the phase ends first and when ctx
// is cancelled (Ctrl-C), before inner's End asks the server anything. What
// was done is a note of the phase; a stall that did not happen, a warning.
func (i *Instance) StallProbe(ctx context.Context, s Stall, inner load.Probe) load.Probe {
	return &stallProbe{ctx: ctx, srv: i.Server, stall: s, inner: inner}
}

type stallProbe struct {
	ctx   context.Context
	srv   *server.Server
	stall Stall
	inner load.Probe

	stop chan struct{} // closed by End
	done chan struct{} // closed by run once the server runs again
	// Written by run, read after done.
	begun, stopped, resumed time.Time
	what, why               string // what was signalled; why the stall ended early
	err                     error
}

func (p *stallProbe) Begin() {
	if p.inner != nil {
		p.inner.Begin()
	}
	p.begun = time.Now()
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	if p.srv == nil {
		p.err = fmt.Errorf("no managed server to stop")
		close(p.done)
		return
	}
	go p.run()
}

func (p *stallProbe) run() {
	defer close(p.done)
	t := time.NewTimer(p.stall.After)
	defer t.Stop()
	select {
	case <-t.C:
	case <-p.stop:
		p.why = "the phase ended first"
		return
	case <-p.ctx.Done():
		p.why = "the run was interrupted first"
		return
	}
	// Pause and Resume signal the root process first thing: the moments
	// before the calls are the stall's, not the /proc walks after.
	p.stopped = time.Now()
	what, err := p.srv.Pause()
	if err != nil {
		p.err = err
		_ = p.srv.Resume() // whatever part of the tree did stop
		return
	}
	p.what = what
	t.Reset(p.stall.For - time.Since(p.stopped)) // the /proc walk is part of the stall
	select {
	case <-t.C:
	case <-p.stop:
		p.why = "at the phase's end"
	case <-p.ctx.Done():
		p.why = "when the run was interrupted"
	}
	p.resumed = time.Now()
	p.err = p.srv.Resume()
}

func (p *stallProbe) End(ph *metrics.Phase) {
	if p.stop == nil {
		p.why = "the measured phase never began"
	} else {
		close(p.stop)
		<-p.done
	}
	switch {
	case p.what == "" && p.err != nil:
		ph.Warnings = append(ph.Warnings, fmt.Sprintf("stall %s not done: %v", p.stall, p.err))
	case p.what == "":
		ph.Warnings = append(ph.Warnings, fmt.Sprintf("stall %s not done: %s", p.stall, p.why))
	default:
		held := p.resumed.Sub(p.stopped)
		n := fmt.Sprintf("stall: %s %.3f s into the measured phase, SIGCONT %s later", p.what, p.stopped.Sub(p.begun).Seconds(), held.Round(100*time.Microsecond))
		if p.why != "" {
			n += ", " + p.why + " (asked for " + p.stall.For.String() + ")"
		}
		ph.Notes = append(ph.Notes, n)
		if p.err != nil {
			ph.Warnings = append(ph.Warnings, fmt.Sprintf("stall: %v", p.err))
		}
	}
	if p.inner != nil {
		p.inner.End(ph) // after the SIGCONT: it may query the server
	}
}

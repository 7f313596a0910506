package netem

import (
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// delayToxicType is the name the delay toxic is registered under in
// toxiproxy's toxic registry (its documented way to add a toxic type).
const delayToxicType = "storebench_delay"

func init() {
	toxics.Register(delayToxicType, new(delayToxic))
}

// delayToxic is toxiproxy's latency toxic with nanosecond settings and a
// precise wait: toxiproxy's own takes whole milliseconds and waits on a Go
// timer, which wakes up to 1 ms late in an idle process; a 0.1 ms round
// trip needs 50 µs per direction.
type delayToxic struct {
	Delay  int64 `json:"delay_ns"`  // each chunk's delay
	Jitter int64 `json:"jitter_ns"` // ± this much, uniformly
}

// GetBufferSize lets chunks queue while earlier ones wait, so a stream is
// delayed, not throttled to one chunk per delay.
func (t *delayToxic) GetBufferSize() int { return 1024 }

func (t *delayToxic) delay() time.Duration {
	d := t.Delay
	if t.Jitter > 0 {
		d += rand.Int64N(2*t.Jitter+1) - t.Jitter
	}
	return time.Duration(d)
}

// Pipe passes each chunk on once its delay has passed since it was read
// from the socket. Chunks go out in order: one never overtakes another.
func (t *delayToxic) Pipe(stub *toxics.ToxicStub) {
	pipeChunks(stub, func(c *stream.StreamChunk) bool {
		if !waitUntil(c.Timestamp.Add(t.delay()), stub.Interrupt) {
			stub.Output <- c // interrupted (reconfigured): pass it on, drop nothing
			return false
		}
		stub.Output <- c
		return true
	})
}

// pipeChunks is a toxic's Pipe loop: it hands each chunk to pass until the
// toxic is interrupted (toxiproxy reconfigures it), pass returns false
// (interrupted while it held a chunk, which it has passed on), or the input
// ends (the stub is closed).
func pipeChunks(stub *toxics.ToxicStub, pass func(c *stream.StreamChunk) bool) {
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			if !pass(c) {
				return
			}
		}
	}
}

// spinFree is the part of a wait left to nanosleep rather than a Go timer.
const spinFree = 2 * time.Millisecond

// spinWindow is the end of a wait spent yielding in a loop rather than
// asleep: nanosleep wakes 50-150 µs late on a virtual machine, and the
// goroutines that then carry the bytes on wake as late from an idle state.
const spinWindow = 100 * time.Microsecond

// spinning is held by the one goroutine of the process that may spin at a
// time, so the proxy never burns more than one CPU that the server and the
// clients could use (it is process-wide because CPUs are). The others sleep
// to the end; Calibrate absorbs the difference.
var spinning atomic.Bool

// waitUntil waits until due: a Go timer for all but the last spinFree/2,
// nanosleep until spinWindow is left, then a yielding loop (or nanosleep if
// another goroutine spins). It returns false when interrupted first; an
// interrupt may wait up to spinFree.
func waitUntil(due time.Time, interrupt chan struct{}) bool {
	for {
		d := time.Until(due)
		if d <= 0 {
			return true
		}
		if d <= spinFree {
			if d > spinWindow {
				sleepShort(d - spinWindow)
				continue
			}
			if spinning.CompareAndSwap(false, true) {
				for time.Now().Before(due) {
					runtime.Gosched()
				}
				spinning.Store(false)
				return true
			}
			sleepShort(d)
			return true
		}
		tm := time.NewTimer(d - spinFree/2)
		select {
		case <-tm.C:
		case <-interrupt:
			tm.Stop()
			return false
		}
	}
}

// bandwidthToxicType is the name the bandwidth toxic is registered under.
const bandwidthToxicType = "storebench_bandwidth"

func init() {
	toxics.Register(bandwidthToxicType, new(bandwidthToxic))
}

// bandwidthToxic passes bytes on at Rate bytes per second, in pieces of
// 10 ms worth, waiting as the delay toxic does. It replaces toxiproxy's own,
// which counts whole KB/s, waits on Go timers and logs to stderr through
// zerolog's global logger each time it is reconfigured.
type bandwidthToxic struct {
	Rate int64 `json:"rate_bytes_s"`
}

// GetBufferSize lets the delay toxic before it hand chunks over while it waits.
func (t *bandwidthToxic) GetBufferSize() int { return 1024 }

// Pipe sends each piece once the link has had time to carry the ones before.
func (t *bandwidthToxic) Pipe(stub *toxics.ToxicStub) {
	piece := max(1, int(t.Rate/100))
	var free time.Time // when the link has carried everything sent so far
	pipeChunks(stub, func(c *stream.StreamChunk) bool {
		for len(c.Data) > 0 {
			n := min(len(c.Data), piece)
			if now := time.Now(); free.Before(now) {
				free = now
			}
			free = free.Add(time.Duration(float64(n) / float64(t.Rate) * float64(time.Second)))
			out := &stream.StreamChunk{Data: c.Data[:n], Timestamp: c.Timestamp}
			c.Data = c.Data[n:]
			if !waitUntil(free, stub.Interrupt) {
				stub.Output <- out
				if len(c.Data) > 0 {
					stub.Output <- c // interrupted: pass the rest on, drop nothing
				}
				return false
			}
			stub.Output <- out
		}
		return true
	})
}

// Package tick is the one "every d until stopped" loop behind storebench's
// samplers, probes, watchers and the progress line.
package tick

import (
	"context"
	"time"
)

// Every calls fn every d until ctx is done. The first call comes after d,
// not at once; a call that overruns skips the ticks it missed (a
// time.Ticker drops them), so calls never pile up; and fn is not called
// once ctx is done, even when a tick was waiting. Every returns when ctx
// is done; run it in a goroutine of its own.
func Every(ctx context.Context, d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			// A select with both ready picks at random: without this check
			// a stopped loop could run fn once more.
			if ctx.Err() != nil {
				return
			}
			fn()
		}
	}
}

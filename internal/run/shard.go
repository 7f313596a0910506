package run

import (
	"context"
	"time"

	"github.com/storebench/storebench/internal/result"
	"github.com/storebench/storebench/internal/workload"
)

// MaxStartAhead bounds --start-at: a barrier further ahead is more likely
// a wrong date than a plan, and would hold a machine idle for a day.
const MaxStartAhead = 24 * time.Hour

// shardFlags parses --shard and --start-at; each is unset when "".
func (o Options) shardFlags(now time.Time) (workload.Shard, time.Time, error) {
	var shard workload.Shard
	var at time.Time
	var err error
	if o.Shard != "" {
		if shard, err = workload.ParseShard(o.Shard); err != nil {
			return shard, at, inputf("--shard %v", err)
		}
	}
	if o.StartAt == "" {
		return shard, at, nil
	}
	if at, err = time.Parse(time.RFC3339, o.StartAt); err != nil {
		return shard, at, inputf("--start-at %q: want an RFC 3339 instant, e.g. 2026-11-24T07:00:00Z", o.StartAt)
	}
	return shard, at, checkStartAt(at, now)
}

// checkStartAt refuses a --start-at in the past (the shards would not start
// together) or more than MaxStartAhead after now. Whether one was given is
// the flag's string, not the instant: 0001-01-01T00:00:00Z parses to the
// zero time.Time, which is in the past like any other.
func checkStartAt(at, now time.Time) error {
	switch {
	case !at.After(now):
		return inputf("--start-at %s is in the past (now %s): give an instant every shard can still wait for", at.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	case at.Sub(now) > MaxStartAhead:
		return inputf("--start-at %s is more than %v ahead: give an instant within a day", at.UTC().Format(time.RFC3339), MaxStartAhead)
	}
	return nil
}

// shardRecord is what result.json says of this process's part of a run.
func (p *Plan) shardRecord(host string) *result.Shard {
	if p.shard.Whole() && p.startAt.IsZero() {
		return nil
	}
	// --start-at alone: the whole run is shard 0 of 1.
	s := &result.Shard{Index: p.shard.Index, Count: max(p.shard.Count, 1), Host: host, Clock: result.ReadClock()}
	if !p.startAt.IsZero() {
		at := p.startAt.UTC()
		s.StartAt = &at
	}
	return s
}

// barrier waits once for --start-at, before the first cell (its target is
// started already, so a server's start-up time does not shift the shard),
// and records when the shard was released. It returns false when ctx ended
// while waiting.
type barrier struct {
	at   time.Time
	done bool
}

func (b *barrier) wait(ctx context.Context, w *result.Writer, logf func(string, ...any)) bool {
	if b.done || b.at.IsZero() {
		return true
	}
	b.done = true
	if d := time.Until(b.at); d > 0 {
		logf("waiting %v for --start-at %s", d.Round(time.Millisecond), b.at.UTC().Format(time.RFC3339Nano))
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	released := time.Now().UTC().Round(0)
	if late := released.Sub(b.at); late > time.Second {
		logf("--start-at passed %v before the first cell could begin (its target took that long to start): this shard begins late", late.Round(time.Millisecond))
	}
	logWriteErr(w.Update(func(r *result.Result) {
		if r.Shard != nil {
			r.Shard.Released = &released
		}
	}), logf)
	return true
}

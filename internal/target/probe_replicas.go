package target

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/tick"
)

// replicaProbe waits, before a phase, for a replica set's replicas to
// replay what the earlier phases wrote (so a phase that reads them reads
// what was written, not a replica's past), then samples their lag on the
// primary during the phase (Phase.ReplicaLag).
type replicaProbe struct {
	rs       store.Replicated
	interval time.Duration
	catchUp  time.Duration
	err      error // of the catch-up, or the first failed sample
	stop     context.CancelFunc
	done     chan struct{}
	mu       sync.Mutex
	samples  []lagSample
}

// lagSample is one reading: the worst replica's figures.
type lagSample struct {
	streaming     int
	timed         bool
	replay, flush time.Duration
	bytes         int64
}

const replicaSource = "pg_stat_replication on the primary: replay_lag, flush_lag and the WAL bytes between pg_current_wal_lsn() and replay_lsn, the worst replica per sample"

func (p *replicaProbe) Begin() {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*nodeReadTimeout+time.Minute)
	p.err = p.rs.CatchUp(ctx)
	cancel()
	p.catchUp = time.Since(start)
	p.samples = nil
	p.sample()
	var sampling context.Context
	sampling, p.stop = context.WithCancel(context.Background())
	p.done = make(chan struct{})
	go func() {
		defer close(p.done)
		tick.Every(sampling, p.interval, p.sample)
	}()
}

func (p *replicaProbe) sample() {
	ctx, cancel := context.WithTimeout(context.Background(), nodeReadTimeout)
	defer cancel()
	lags, err := p.rs.ReplicaLag(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		if p.err == nil {
			p.err = err
		}
		return
	}
	s := lagSample{streaming: len(lags), timed: true}
	for _, l := range lags {
		s.bytes = max(s.bytes, l.Bytes)
		s.timed = s.timed && l.TimeKnown
		s.replay, s.flush = max(s.replay, l.Replay), max(s.flush, l.Flush)
	}
	p.samples = append(p.samples, s)
}

func (p *replicaProbe) End(ph *metrics.Phase) {
	p.stop()
	<-p.done
	p.sample()
	if p.err != nil {
		ph.Warnings = append(ph.Warnings, fmt.Sprintf("replica lag: %v", p.err))
	}
	ph.ReplicaLag = summarizeLag(p.samples, p.rs.Replicas(), p.catchUp)
}

// summarizeLag is the samples' median and maximum; nil without samples.
func summarizeLag(samples []lagSample, replicas int, catchUp time.Duration) *metrics.ReplicaLag {
	if len(samples) == 0 {
		return nil
	}
	l := &metrics.ReplicaLag{Source: replicaSource, Replicas: replicas, Streaming: replicas, Samples: len(samples), CatchUpMs: ms(catchUp)}
	var replay, flush, bytes []float64
	for _, s := range samples {
		l.Streaming = min(l.Streaming, s.streaming)
		bytes = append(bytes, float64(s.bytes))
		if s.timed {
			replay, flush = append(replay, ms(s.replay)), append(flush, ms(s.flush))
		}
	}
	l.TimedSamples = len(replay)
	l.ReplayMs, l.FlushMs, l.Bytes = lagFigures(replay), lagFigures(flush), lagFigures(bytes)
	return l
}

// lagFigures is the median (the lower middle of an even count) and the
// maximum of xs.
func lagFigures(xs []float64) metrics.LagFigures {
	if len(xs) == 0 {
		return metrics.LagFigures{}
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return metrics.LagFigures{P50: xs[(len(xs)-1)/2], Max: xs[len(xs)-1]}
}

// Package sessions is the sessions workload of the "Storing sessions or
// cache data in PostgreSQL" article (../shared/workloads/sessions.md):
//
//   - Phase A, "insert": the article's micro-benchmark. One connection
//     inserts Inserts sessions of PayloadSize characters one by one, for one
//     of the article's four PostgreSQL variants or the spec's controls.
//   - Phase B, "churn": steady-state session churn on any store with the
//     store.Sessions capability. Creates arrive at CreateRate, each session
//     is active for an exponentially distributed period (mean ActiveMean)
//     during which it is read; reads go at ReadRate (or as fast as Clients
//     connections can) to a random active session, or, for a share
//     ExpiredReads of them, to a session that has expired; a flusher keeps
//     read sessions alive every KeepaliveEvery in chunks of KeepaliveChunk
//     (or every read does, per the design); a reaper deletes expired
//     sessions every ReapEvery where the store has no native expiry; an
//     observer samples the store every ObserveEvery. TimeScale shrinks the
//     TTL and every interval together.
//
// Every read is checked against a model of each session's expiry: the
// bounds of when it must expire, from the client-side times around its
// create and keepalives. A hit after the latest possible expiry is a stale
// read, a miss before the earliest is a lost session (a Memcached eviction,
// say); sessions whose fate the client cannot know (a keepalive that may
// have come after the expiry) are not judged and are counted as such.
package sessions

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/storebench/storebench/internal/metrics"
	schema "github.com/storebench/storebench/internal/result/sessions"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
)

// Phases of the workload (Params.Phase).
const (
	PhaseInsert = schema.PhaseInsert
	PhaseChurn  = schema.PhaseChurn
)

// Params are one sessions cell's parameters. Durations are the article's,
// unscaled, unless said otherwise; Timing gives the scaled ones.
type Params struct {
	Phase string // PhaseInsert or PhaseChurn

	// Phase A.
	Variant     string // one of Variants
	Inserts     int64  // inserts measured; the article: 100000
	WarmupOps   int64  // inserts before the measured ones
	PayloadSize int    // characters of JSON per session; the article: 250

	// Phase B.
	Design         string        // "preset[,knob=value]..." (ParseDesign)
	TTL            time.Duration // session lifetime; the article: 30 min
	RefreshBelow   time.Duration // skip-if-fresh threshold; the article: 20 min
	KeepaliveEvery time.Duration // flush interval; the article: 30 s
	KeepaliveChunk int           // ids per keepalive statement; the article: 50000
	ReapEvery      time.Duration // reaper interval; the article: 5 min
	ReapBatch      int           // rows per capped reap; the article: 1000
	// ReapMaxBatches caps the batches of one reaper run; 0 repeats until a
	// batch comes back short (the article's literal "1000 per 5 minutes"
	// is 1).
	ReapMaxBatches int
	ActiveMean     time.Duration // mean active period of a session
	CreateRate     float64       // sessions created per second, real time
	ReadRate       float64       // reads per second, real time; 0 = closed loop
	Clients        int           // reader connections
	CreateClients  int           // creator connections
	ExpiredReads   float64       // share of reads aimed at expired sessions
	// TimeScale multiplies the TTL and every interval (not the rates): 0.01
	// turns 30 minutes into 18 seconds.
	TimeScale float64
	// Duration is the measured time, real; at least twice the scaled TTL.
	Duration time.Duration
	// Warmup is the real time before measuring; 0 = the scaled TTL plus
	// the scaled active mean, when the population has reached steady state.
	Warmup time.Duration
	// ObserveEvery is the real interval between observations of the store.
	ObserveEvery time.Duration
	// Replica sends reads to Env.ReplicaURL.
	Replica bool

	Seed uint64
}

// Defaults are the article's figures and a load two CPUs can carry.
func Defaults() Params {
	return Params{
		Phase: PhaseChurn, Inserts: 100000, PayloadSize: 250,
		Design: "tuned", TTL: 30 * time.Minute, RefreshBelow: 20 * time.Minute,
		KeepaliveEvery: 30 * time.Second, KeepaliveChunk: 50000, ReapEvery: 5 * time.Minute, ReapBatch: 1000,
		ActiveMean: 10 * time.Minute, CreateRate: 200, ReadRate: 2000, Clients: 4, CreateClients: 2,
		ExpiredReads: 0.05, TimeScale: 1, ObserveEvery: 10 * time.Second, Seed: 42,
	}
}

func scale(d time.Duration, s float64) time.Duration {
	return time.Duration(math.Round(float64(d) * s))
}

// Timing scales the parameters.
func (p Params) Timing() schema.Timing {
	s := p.TimeScale
	t := schema.Timing{
		Scale: s, TTL: scale(p.TTL, s), RefreshBelow: scale(p.RefreshBelow, s),
		KeepaliveEvery: scale(p.KeepaliveEvery, s), ReapEvery: scale(p.ReapEvery, s), ActiveMean: scale(p.ActiveMean, s),
		ObserveEvery: p.ObserveEvery,
	}
	t.Warmup = p.Warmup
	if t.Warmup == 0 {
		t.Warmup = t.TTL + t.ActiveMean
	}
	t.Duration = max(p.Duration, 2*t.TTL)
	t.TTLS, t.RefreshBelowS, t.KeepaliveEveryS = t.TTL.Seconds(), t.RefreshBelow.Seconds(), t.KeepaliveEvery.Seconds()
	t.ReapEveryS, t.ActiveMeanS, t.WarmupS, t.DurationS = t.ReapEvery.Seconds(), t.ActiveMean.Seconds(), t.Warmup.Seconds(), t.Duration.Seconds()
	t.ObserveEveryS = t.ObserveEvery.Seconds()
	t.ExpectedLive = p.CreateRate * (t.ActiveMean + t.TTL).Seconds()
	return t
}

// Validate rejects impossible parameters before any work.
func (p Params) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("sessions: "+format, a...)) }
	if p.PayloadSize < minPayload || p.PayloadSize > 1<<20 {
		bad("payload size %d: want %d to 1 MiB characters of JSON", p.PayloadSize, minPayload)
	}
	switch p.Phase {
	case PhaseInsert:
		if _, err := VariantDesign(p.Variant); err != nil {
			bad("%v", err)
		}
		for _, err := range []error{workload.CheckOps("ops", p.Inserts, 1), workload.CheckOps("warmup_ops", p.WarmupOps, 0)} {
			if err != nil {
				bad("%v", err)
			}
		}
	case PhaseChurn:
		if _, err := ParseDesign(p.Design); err != nil {
			bad("%v", err)
		}
		// Bounded first: the timing's sums of these would overflow.
		for _, d := range []struct {
			field string
			v     time.Duration
		}{{"ttl", p.TTL}, {"refresh_below", p.RefreshBelow}, {"keepalive_every", p.KeepaliveEvery}, {"reap_every", p.ReapEvery}, {"active_mean", p.ActiveMean}} {
			if d.v > MaxSessionTime {
				bad("%s %v: at most %v: Memcached reads a longer expiry as a date", d.field, d.v, MaxSessionTime)
				return errors.Join(errs...)
			}
		}
		t := p.Timing()
		switch {
		case p.TimeScale <= 0 || p.TimeScale > 1 || math.IsNaN(p.TimeScale):
			bad("time scale %v: want more than 0, at most 1", p.TimeScale)
		case t.TTL < time.Second:
			bad("the scaled TTL is %v: want at least 1 s (Memcached's unit); raise the TTL or the time scale", t.TTL)
		}
		if p.RefreshBelow < 0 || p.RefreshBelow >= p.TTL {
			bad("refresh_below %v must lie between 0 and the TTL %v", p.RefreshBelow, p.TTL)
		}
		if t.KeepaliveEvery <= 0 || t.KeepaliveEvery >= t.TTL {
			bad("the scaled keepalive interval %v must be positive and below the TTL %v", t.KeepaliveEvery, t.TTL)
		}
		if t.ReapEvery <= 0 {
			bad("the scaled reaper interval %v must be positive", t.ReapEvery)
		}
		if p.KeepaliveChunk <= 0 || p.ReapBatch <= 0 || p.ReapMaxBatches < 0 {
			bad("keepalive chunk %d and reap batch %d must be positive, reap max batches %d not negative", p.KeepaliveChunk, p.ReapBatch, p.ReapMaxBatches)
		}
		if p.KeepaliveChunk > maxStatementIDs || p.ReapBatch > maxStatementIDs {
			bad("keepalive chunk %d and reap batch %d: at most %d sessions per statement (the article's are 50000 and 1000)", p.KeepaliveChunk, p.ReapBatch, maxStatementIDs)
		}
		if p.ActiveMean <= 0 {
			bad("active mean must be positive, got %v", p.ActiveMean)
		}
		if p.CreateRate <= 0 {
			bad("create_rate %v must be positive", p.CreateRate)
		}
		for _, err := range []error{
			workload.CheckRate("create_rate", p.CreateRate, t.Duration, 0), workload.CheckRate("rate", p.ReadRate, t.Duration, 0),
			workload.CheckClients("clients", p.Clients), workload.CheckClients("create_clients", p.CreateClients),
			workload.CheckDuration("duration", p.Duration), workload.CheckDuration("warmup", p.Warmup),
		} {
			if err != nil {
				bad("%v", err)
			}
		}
		if t.Duration > workload.MaxDuration || t.Warmup > workload.MaxDuration {
			bad("the scaled TTL %v makes a %v warm-up and a %v measured phase (TTL + active mean, at least twice the TTL), more than a phase may last (%v): lower ttl or time_scale", t.TTL, t.Warmup, t.Duration, workload.MaxDuration)
		}
		if p.ExpiredReads < 0 || p.ExpiredReads >= 1 {
			bad("expired reads share %v: want 0 to below 1", p.ExpiredReads)
		}
		if p.Duration < 0 || p.Warmup < 0 {
			bad("duration %v and warm-up %v must not be negative", p.Duration, p.Warmup)
		}
		if p.ObserveEvery < 100*time.Millisecond {
			bad("observe interval %v: want at least 100ms", p.ObserveEvery)
		}
		if d, err := ParseDesign(p.Design); err == nil && p.Replica && d.KeepaliveOnRead() {
			bad("design %q keeps sessions alive on every read (an UPDATE), which a read replica cannot run: use keepalive=batched", p.Design)
		}
	default:
		bad("phase %q: want %s (phase A) or %s (phase B)", p.Phase, PhaseInsert, PhaseChurn)
	}
	return errors.Join(errs...)
}

// MaxSessionTime bounds the TTL and every interval of a churn cell:
// Memcached reads an expiry of more than 30 days as a Unix time.
const MaxSessionTime = 30 * 24 * time.Hour

// maxStatementIDs bounds the sessions one keepalive or reap statement
// touches.
const maxStatementIDs = 1_000_000

// trackedBytes is what the client's model of one live session takes
// (tracker: its slot, its heap entries and list positions).
const trackedBytes = 128

// Memory estimates a cell's memory (workload.Estimate): per client its
// payload buffer, and for churn the model of every live session the
// parameters aim at (Timing.ExpectedLive).
func (p Params) Memory() workload.Estimate {
	if p.Phase == PhaseInsert {
		return workload.Estimate{Clients: 1, PerClient: workload.ClientBytes(0, int64(p.PayloadSize))}
	}
	return workload.Estimate{
		Clients: p.Clients + p.CreateClients, PerClient: workload.ClientBytes(0, 2*int64(p.PayloadSize)),
		Shared: int64(min(p.Timing().ExpectedLive*trackedBytes, math.MaxInt64/2)),
	}
}

// Reconfigurer restarts a managed server with extra settings (a
// *server.Server does); the workload uses it for settings a design needs
// that only a restart applies, such as autovacuum_max_workers.
type Reconfigurer interface {
	Reconfigure(ctx context.Context, settings map[string]string) error
}

// Env is what a sessions cell runs against.
type Env struct {
	Store store.Store
	// Server is the managed server of Store; nil for external and
	// in-process targets, whose settings storebench does not change.
	Server Reconfigurer
	// ReplicaURL is a streaming replica of Store's server, for Params.Replica.
	ReplicaURL string
}

// Outcome is what a sessions cell measured.
type Outcome struct {
	Phases  []metrics.Phase
	Summary *schema.Summary
}

// Hooks are the shared workload hooks.
type Hooks = workload.Hooks

// Run runs one sessions cell. It returns what was measured so far also
// when it fails half-way.
func Run(ctx context.Context, env Env, p Params, h Hooks) (Outcome, error) {
	if err := p.Validate(); err != nil {
		return Outcome{}, err
	}
	if _, ok := env.Store.(store.Sessions); !ok {
		return Outcome{}, fmt.Errorf("sessions: %w", store.ErrUnsupported)
	}
	if p.Phase == PhaseInsert {
		return runInsert(ctx, env, p, h)
	}
	return runChurn(ctx, env, p, h)
}

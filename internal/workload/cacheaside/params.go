package cacheaside

import (
	"errors"
	"fmt"
	"slices"
	"time"

	schema "github.com/storebench/storebench/internal/result/cacheaside"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/capacity"
	"github.com/storebench/storebench/internal/workload/keydist"
	"github.com/storebench/storebench/internal/workload/replay"
)

// Write policies: what a write does to the cache after the database commit.
const (
	// Invalidate deletes the cache entry; the next read refills it.
	Invalidate = "invalidate"
	// Update writes the new value into the cache.
	Update = "update"
)

// Policies lists the write policies.
var Policies = []string{Invalidate, Update}

// Stampede protections.
const (
	// ProtectNone: every client that misses reads the database and fills.
	ProtectNone = "none"
	// ProtectLease: a client that misses adds a lease key (store.Adder);
	// the one that gets it reads the database and fills, the others wait,
	// re-reading the cache every LeasePoll. No stale copy is kept: losers
	// wait, they do not serve stale.
	ProtectLease = "lease"
	// ProtectXFetch: probabilistic early expiration (Vattani, Chierichetti
	// and Lowenstein, "Optimal probabilistic cache stampede prevention",
	// VLDB 2015): a read recomputes early when
	// now − δ·β·ln(rand()) ≥ expiry, δ the last recomputation's time, β = 1.
	ProtectXFetch = "xfetch"
	// ProtectCoalesce: the misses of one process share one database read
	// and fill (single flight per key), as a client library can.
	ProtectCoalesce = "coalesce"
)

// Protections lists the stampede protections.
var Protections = []string{ProtectNone, ProtectLease, ProtectXFetch, ProtectCoalesce}

// XFetchBeta is XFetch's β: 1, the paper's recommended default.
const XFetchBeta = 1.0

// Defaults, applied by Params.WithDefaults to zero fields.
const (
	DefaultKeys      = 100_000
	DefaultValueSize = 100 // a small cached object, as kv's and mix's
	DefaultReadRatio = 0.95
	DefaultPolicy    = Invalidate
	DefaultTTL       = 5 * time.Minute
	DefaultClients   = 16
	DefaultOps       = 100_000
	DefaultKeyDist   = keydist.Zipfian

	DefaultStampedeClients  = 50
	DefaultStampedeTTL      = time.Second
	DefaultStampedeDuration = 5 * time.Second
	DefaultLeaseTTL         = time.Second
	DefaultLeasePoll        = time.Millisecond
)

// Bounds, each with its reason in the error that cites it.
const (
	// MinValueSize holds a value's header: version, expiry, recompute
	// time and fill generation, 8 bytes each.
	MinValueSize = headerSize
	// MaxTTL: a longer TTL never expires within a phase (MaxDuration).
	MaxTTL = workload.MaxDuration
	// MinStampedeTTL: the hot entry must outlive a refill by far, or
	// every read is a refill and there is no stampede to count.
	MinStampedeTTL = 100 * time.Millisecond
	// MaxStampedeTTL: a phase must see several expiries.
	MaxStampedeTTL = time.Hour
	// MinLeaseTTL, MaxLeaseTTL: the lease must outlive a database read,
	// and a lost lease holder must not stall the others for long.
	MinLeaseTTL = 10 * time.Millisecond
	MaxLeaseTTL = time.Minute
	// MinLeasePoll, MaxLeasePoll: a faster poll is a busy loop on the
	// cache; a slower one is a refill's latency many times over.
	MinLeasePoll = 100 * time.Microsecond
	MaxLeasePoll = time.Second
)

// Params are one cache-aside cell's parameters.
type Params struct {
	// Keyspace: rows [0, Keys) in the database, default 100000; ValueSize
	// default 100 bytes, at least 32 (the value's header); KeyMode; Seed.
	workload.Keyspace
	// ValueSizeMax, when above ValueSize, gives each key a size of its own,
	// uniform in [ValueSize, ValueSizeMax] (a size mix); 0: all ValueSize.
	ValueSizeMax int
	KeyDist      keydist.Dist // zipfian (default) or uniform
	// Theta is the zipfian's θ, 0.01 to 0.999; 0 takes YCSB's 0.99.
	Theta float64
	// ReadRatio is the share of requests that read; nil takes 0.95.
	ReadRatio *float64
	Policy    string // invalidate (default) or update
	// TTL is the cache entries' lifetime; 0 disables the cache (every read
	// goes to the database); nil takes 5 min.
	TTL *time.Duration
	// Load: Clients default 16 (each one database and one cache
	// connection); Ops default 100000 when neither Ops nor Duration is
	// given; Rate for an open loop. Pipeline and ConnectPerOp are not
	// supported.
	Load     workload.Load
	Stampede Stampede
	// Search, when set, runs capacity's search over the main phase's loop
	// after the other phases: the highest open-loop rate of these requests
	// within each SLO, on the Load.Clients connections of the loop.
	Search *capacity.Params
	// Trace, when set, gives the application's requests instead of
	// KeyDist and ReadRatio: a recorded trace (replay's formats, or
	// sample:FORMAT) in its order, its keys hashed onto the rows.
	Trace, TraceFormat string

	// onStale, for tests, sees every stale read of the main phase: the key
	// index, the version read and the last committed one at its start.
	onStale func(key int64, got, committed uint64)
}

// Stampede is the stampede phases: one per protection, each with every
// client reading one hot key whose cache entry expires every TTL.
type Stampede struct {
	Protections []string      `yaml:"protections,omitempty" json:"protections,omitempty"` // none, lease, xfetch, coalesce; empty: no stampede phases
	Clients     int           `yaml:"clients,omitempty" json:"clients,omitempty"`         // default 50
	TTL         time.Duration `yaml:"ttl,omitempty" json:"ttl,omitempty"`                 // the hot entry's TTL, default 1 s
	Duration    time.Duration `yaml:"duration,omitempty" json:"duration,omitempty"`       // each phase's, default 5 s
	Rate        float64       `yaml:"rate,omitempty" json:"rate,omitempty"`               // open loop: requests/s across clients; 0: closed loop
	LeaseTTL    time.Duration `yaml:"lease_ttl,omitempty" json:"lease_ttl,omitempty"`     // how long a lease holds, default 1 s
	LeasePoll   time.Duration `yaml:"lease_poll,omitempty" json:"lease_poll,omitempty"`   // how often a lease loser re-reads, default 1 ms
}

// usesLease says a stampede phase takes leases on the cache (store.Adder).
func (p Params) usesLease() bool { return slices.Contains(p.Stampede.Protections, ProtectLease) }

// ttl is p's TTL after defaults.
func (p Params) ttl() time.Duration {
	if p.TTL == nil {
		return DefaultTTL
	}
	return *p.TTL
}

// readRatio is p's read ratio after defaults.
func (p Params) readRatio() float64 {
	if p.ReadRatio == nil {
		return DefaultReadRatio
	}
	return *p.ReadRatio
}

// WithDefaults returns p with every zero field set to its default: the
// parameters a run actually uses.
func (p Params) WithDefaults() Params {
	p.Keyspace = p.Keyspace.WithDefaults(workload.Keyspace{Keys: DefaultKeys, ValueSize: DefaultValueSize, KeyMode: workload.KeySequential})
	if p.KeyDist == "" {
		p.KeyDist = DefaultKeyDist
	}
	if p.Theta == 0 && p.KeyDist == keydist.Zipfian {
		p.Theta = keydist.ZipfianConstant
	}
	if p.ReadRatio == nil {
		r := DefaultReadRatio
		p.ReadRatio = &r
	}
	if p.Policy == "" {
		p.Policy = DefaultPolicy
	}
	if p.TTL == nil {
		ttl := DefaultTTL
		p.TTL = &ttl
	}
	p.Load = p.Load.WithDefaults(DefaultClients, DefaultOps)
	if len(p.Stampede.Protections) > 0 {
		s := &p.Stampede
		s.Clients = cmpOr(s.Clients, DefaultStampedeClients)
		s.TTL = cmpOr(s.TTL, DefaultStampedeTTL)
		s.Duration = cmpOr(s.Duration, DefaultStampedeDuration)
		s.LeaseTTL = cmpOr(s.LeaseTTL, DefaultLeaseTTL)
		s.LeasePoll = cmpOr(s.LeasePoll, DefaultLeasePoll)
	}
	return p
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Validate rejects impossible parameters (after defaults) before any work,
// every problem at once.
func (p Params) Validate() error {
	p = p.WithDefaults()
	errs := p.Keyspace.Check()
	if p.ValueSize < MinValueSize && p.ValueSize > 0 {
		errs = append(errs, fmt.Errorf("value_size %d: at least %d bytes, the value's header (version, expiry, recompute time, fill generation)", p.ValueSize, MinValueSize))
	}
	if p.ValueSizeMax != 0 {
		if err := workload.CheckValueSize("value_size_max", p.ValueSizeMax); err != nil {
			errs = append(errs, err)
		} else if p.ValueSizeMax < p.ValueSize {
			errs = append(errs, fmt.Errorf("value_size_max %d is below value_size %d: want 0 (one size) or a larger maximum", p.ValueSizeMax, p.ValueSize))
		}
	}
	switch p.KeyDist {
	case keydist.Uniform:
		if p.Theta != 0 {
			errs = append(errs, fmt.Errorf("theta %v is for a zipfian key distribution, not %s", p.Theta, p.KeyDist))
		}
	case keydist.Zipfian:
		if err := keydist.CheckTheta(p.Theta); err != nil {
			errs = append(errs, err)
		}
	default:
		errs = append(errs, fmt.Errorf("key distribution %q: want uniform or zipfian (a sequential walk has no hot keys to cache)", p.KeyDist))
	}
	if r := p.readRatio(); !(r >= 0 && r <= 1) { // NaN fails too
		errs = append(errs, fmt.Errorf("read ratio must be between 0 (all writes) and 1 (all reads), got %v", r))
	}
	if p.Trace != "" {
		if err := p.trace().CheckTrace(); err != nil {
			errs = append(errs, err)
		}
	} else if p.TraceFormat != "" {
		errs = append(errs, errors.New("trace_format without a trace"))
	}
	if !slices.Contains(Policies, p.Policy) {
		errs = append(errs, fmt.Errorf("policy %q: want %s or %s", p.Policy, Invalidate, Update))
	}
	if ttl := p.ttl(); ttl < 0 || ttl > MaxTTL {
		errs = append(errs, fmt.Errorf("ttl %v: want 0 (no cache) to %v: a longer TTL never expires within a phase", ttl, MaxTTL))
	}
	if p.Load.Pipeline > 1 {
		errs = append(errs, fmt.Errorf("pipeline %d is not supported: an application's request is a cache get, then perhaps a database read and a cache fill, one after the other", p.Load.Pipeline))
	}
	if p.Load.ConnectPerOp {
		errs = append(errs, errors.New("connect-per-op is not supported: a request makes up to three calls on two stores, which would each connect"))
	}
	if err := p.Load.Validate(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, p.Stampede.check()...)
	if p.Search != nil {
		if err := p.Search.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return workload.Refuse("cache-aside", errs...)
}

// check lists what is wrong with s, after defaults.
func (s Stampede) check() []error {
	if len(s.Protections) == 0 {
		return nil
	}
	var errs []error
	for i, pr := range s.Protections {
		if !slices.Contains(Protections, pr) {
			errs = append(errs, fmt.Errorf("stampede protection %q: want none, lease, xfetch or coalesce", pr))
		} else if slices.Contains(s.Protections[:i], pr) {
			errs = append(errs, fmt.Errorf("stampede protection %q is listed twice", pr))
		}
	}
	if err := workload.CheckClients("stampede clients", s.Clients); err != nil {
		errs = append(errs, err)
	}
	if s.TTL < MinStampedeTTL || s.TTL > MaxStampedeTTL {
		errs = append(errs, fmt.Errorf("stampede ttl %v: want %v to %v: the hot entry must outlive a refill by far, and a phase must see it expire", s.TTL, MinStampedeTTL, MaxStampedeTTL))
	}
	if err := workload.CheckDuration("stampede duration", s.Duration); err != nil {
		errs = append(errs, err)
	} else if s.Duration < s.TTL {
		errs = append(errs, fmt.Errorf("stampede duration %v is shorter than its ttl %v: the hot entry would not expire during the phase", s.Duration, s.TTL))
	}
	if err := workload.CheckRate("stampede rate", s.Rate, s.Duration, 0); err != nil {
		errs = append(errs, err)
	}
	if s.LeaseTTL < MinLeaseTTL || s.LeaseTTL > MaxLeaseTTL {
		errs = append(errs, fmt.Errorf("lease ttl %v: want %v to %v: it must outlive a database read, and a lost holder must not stall the others long", s.LeaseTTL, MinLeaseTTL, MaxLeaseTTL))
	}
	if s.LeasePoll < MinLeasePoll || s.LeasePoll > MaxLeasePoll {
		errs = append(errs, fmt.Errorf("lease poll %v: want %v to %v: faster is a busy loop on the cache, slower adds to every refill's latency", s.LeasePoll, MinLeasePoll, MaxLeasePoll))
	}
	return errs
}

// Memory estimates a cell's client memory (workload.Estimate): per client
// a key, four values in flight (the cache's, the database's, the one it
// writes and the expected filler), a recorder per kind and its table of
// the versions it read (16 bytes a slot); shared, the staleness tracker
// (TrackBytesPerKey a key); the data set as the memory store keeps it, as
// database and as cache.
func (p Params) Memory() workload.Estimate {
	p = p.WithDefaults()
	size := int64(max(p.ValueSize, p.ValueSizeMax))
	buffers := workload.KeyBytes + 4*size + 16*monotonicSlots(p.Keys)
	clients := max(p.Load.Clients, p.Stampede.Clients)
	return workload.Estimate{
		Clients: clients, PerClient: workload.ClientBytes(len(Kinds), buffers) + workload.ConnBytes, // two connections
		Shared: p.Keys*TrackBytesPerKey + populateBytes(size),
		Data:   2 * p.Keys * workload.EntryBytes(int(size)),
	}
}

// CellParams is what result.json records of p, after defaults.
func (p Params) CellParams() schema.CellParams {
	p = p.WithDefaults()
	c := schema.CellParams{Trace: p.Trace, TraceFormat: p.TraceFormat,
		Keys: p.Keys, ValueSize: p.ValueSize, ValueSizeMax: p.ValueSizeMax, KeyMode: string(p.KeyMode),
		KeyDist: string(p.KeyDist), Theta: p.Theta, Seed: p.Seed, ReadRatio: p.readRatio(), Policy: p.Policy,
		TTLS: p.ttl().Seconds(), Clients: p.Load.Clients, RateOpsS: p.Load.Rate, Ops: p.Load.Ops,
		DurationS: p.Load.Duration.Seconds(), WarmupS: p.Load.Warmup.Seconds(), WarmupOps: p.Load.WarmupOps,
	}
	if s := p.Stampede; len(s.Protections) > 0 {
		c.Stampede = &schema.StampedeParams{
			Protections: slices.Clone(s.Protections), Clients: s.Clients, TTLS: s.TTL.Seconds(), DurationS: s.Duration.Seconds(),
			RateOpsS: s.Rate, LeaseTTLS: s.LeaseTTL.Seconds(), LeasePollS: s.LeasePoll.Seconds(), XFetchBeta: XFetchBeta,
		}
	}
	if p.Search != nil {
		for _, slo := range p.Search.SLOs {
			c.SLO = append(c.SLO, slo.String())
		}
		c.NeedOpsS = p.Search.Need
	}
	return c
}

// trace is the replay of the entry's trace the application reads from.
func (p Params) trace() replay.Params {
	return replay.Params{Trace: p.Trace, Format: p.TraceFormat}
}

// sizeOf is key i's value size: ValueSize, or with a size mix a size of
// its own in [ValueSize, ValueSizeMax], the same on every target.
func (p Params) sizeOf(i int64) int {
	if p.ValueSizeMax <= p.ValueSize {
		return p.ValueSize
	}
	span := uint64(p.ValueSizeMax - p.ValueSize + 1)
	return p.ValueSize + int(workload.Mix(uint64(i)^p.Seed*0x9e3779b97f4a7c15)%span)
}

// ratio is a/b, 0 when b is 0 (a report prints no NaN).
func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

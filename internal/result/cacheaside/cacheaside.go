// Package cacheaside is the cache-aside workload's part of the result
// schema: the data types the workload fills and every report reads. They
// belong to the schema, not to the workload, so that renaming a field of
// the workload cannot change storebench.result/v1.
package cacheaside

import "github.com/storebench/storebench/internal/metrics"

// CellParams are a cell's parameters as result.json records them, after
// defaults: what was asked, in the units a reader expects.
type CellParams struct {
	Keys         int64   `json:"keys"`
	ValueSize    int     `json:"value_size"`
	ValueSizeMax int     `json:"value_size_max,omitempty"` // sizes spread over [value_size, value_size_max] by key
	KeyMode      string  `json:"key_mode"`
	KeyDist      string  `json:"key_dist"`
	Theta        float64 `json:"theta,omitempty"` // the zipfian's θ
	Seed         uint64  `json:"seed"`
	ReadRatio    float64 `json:"read_ratio"`
	Policy       string  `json:"policy"`     // invalidate or update
	TTLS         float64 `json:"ttl_s"`      // the cache entries' TTL; 0: the cache is not used
	Clients      int     `json:"clients"`    // application clients: one database and one cache connection each
	RateOpsS     float64 `json:"rate_ops_s"` // offered requests/s; 0: closed loop
	Ops          int64   `json:"ops,omitempty"`
	DurationS    float64 `json:"duration_s,omitempty"`
	WarmupS      float64 `json:"warmup_s,omitempty"`
	WarmupOps    int64   `json:"warmup_ops,omitempty"`
	// Stampede is the stampede phases' set-up; nil when none ran.
	Stampede *StampedeParams `json:"stampede,omitempty"`
	// SLO are the objectives of the capacity search over the application
	// loop (its rules are in result.Cell.Capacity); none: no search.
	SLO []string `json:"slo,omitempty"`
	// NeedOpsS is the rate the search costs at capacity; 0 for none.
	NeedOpsS float64 `json:"need_ops_s,omitempty"`
	// Trace is the recorded trace that gave the requests (its keys hashed
	// onto the rows; KeyDist and ReadRatio then do not apply); "" for none.
	Trace       string `json:"trace,omitempty"`
	TraceFormat string `json:"trace_format,omitempty"`
}

// StampedeParams is how the stampede phases ran.
type StampedeParams struct {
	Protections []string `json:"protections"`
	Clients     int      `json:"clients"`
	TTLS        float64  `json:"ttl_s"` // the hot entry's TTL: it expires this often
	DurationS   float64  `json:"duration_s"`
	RateOpsS    float64  `json:"rate_ops_s"` // 0: closed loop
	LeaseTTLS   float64  `json:"lease_ttl_s"`
	LeasePollS  float64  `json:"lease_poll_s"`
	XFetchBeta  float64  `json:"xfetch_beta"`
}

// Summary is what a cache-aside cell adds to the result beside its phases.
// Counts cover the measured part of the main phase (warm-up excluded).
type Summary struct {
	Params CellParams `json:"params"`
	// Database and Cache are the stores' kinds as they report them; Cache
	// is "" when the cell ran the database alone.
	Database string `json:"database"`
	Cache    string `json:"cache,omitempty"`
	// CacheUsed is false for the database alone (no cache, or TTL 0).
	CacheUsed bool `json:"cache_used"`

	DurationS float64 `json:"duration_s"`
	Requests  int64   `json:"requests"` // reads + writes
	Reads     int64   `json:"reads"`
	Writes    int64   `json:"writes"`
	Hits      int64   `json:"hits"`
	Misses    int64   `json:"misses"` // reads the cache did not answer (all reads without a cache)
	HitRatio  float64 `json:"hit_ratio"`
	Errors    int64   `json:"errors"`

	// DBReads and DBWrites are the queries the database received.
	DBReads             int64   `json:"db_reads"`
	DBWrites            int64   `json:"db_writes"`
	DBQueriesPerS       float64 `json:"db_queries_per_s"`
	DBQueriesPerRequest float64 `json:"db_queries_per_request"`
	DBReadsPerRead      float64 `json:"db_reads_per_read"`

	// Latency is end to end per request, from its intended start in an
	// open loop: hits, misses (cache get, database read, cache fill),
	// writes, and every request together.
	Latency Latencies `json:"latency_us"`

	Staleness Staleness `json:"staleness"`

	// PerSecond is the measured part, second by second.
	PerSecond []Second `json:"per_second"`

	// CPU is the servers' CPU per request, from each server's probe over
	// the main phase; the runner that owns the servers fills it (SetCPU).
	CPU CPU `json:"cpu"`

	// Stampede has one entry per protection measured.
	Stampede []Stampede `json:"stampede,omitempty"`

	// SearchPhases are what the cache did in each phase of the capacity
	// search (result.Cell.Capacity's steps name these phases), and
	// AtCapacity the figures of each SLO's confirming step; none without
	// an SLO.
	SearchPhases []SearchPhase `json:"search_phases,omitempty"`
	AtCapacity   []AtCapacity  `json:"at_capacity,omitempty"`

	Notes []string `json:"notes,omitempty"`
}

// Latencies are the main phase's latencies by kind of request, in µs.
type Latencies struct {
	Hit   metrics.Latency `json:"hit"`
	Miss  metrics.Latency `json:"miss"`
	Write metrics.Latency `json:"write"`
	All   metrics.Latency `json:"all"`
}

// Staleness is what the reads returned against the last committed version
// of their key when they started.
type Staleness struct {
	// Checked is how many reads were checked: every measured read.
	Checked int64 `json:"checked"`
	// Stale reads returned a version older than the last one committed
	// when they started.
	Stale int64 `json:"stale"`
	// MaxAgeUs and MeanAgeUs: a stale read's age is the time from the
	// commit of the first newer version to the read's end.
	MaxAgeUs  float64 `json:"max_age_us"`
	MeanAgeUs float64 `json:"mean_age_us"`
	// AgesLowerBound counts stale reads whose first newer version had
	// left the per-key ring of commit times (more newer versions than it
	// holds): their age is a lower bound, from the oldest commit it held.
	AgesLowerBound int64 `json:"ages_lower_bound,omitempty"`
	// MonotonicBroken counts reads older than a version the same client
	// had already read of that key.
	MonotonicBroken int64 `json:"monotonic_broken"`
	// MonotonicSlots is how many keys each client remembers (direct-mapped
	// by key index): with a larger keyspace, a key whose slot another took
	// is not checked, so MonotonicBroken is then a lower bound.
	MonotonicSlots int64 `json:"monotonic_slots"`
}

// Second is one second of the measured part.
type Second struct {
	Reads     int64   `json:"reads"`
	Hits      int64   `json:"hits"`
	HitRatio  float64 `json:"hit_ratio"` // NaN-free: 0 when no reads
	DBQueries int64   `json:"db_queries"`
	Stale     int64   `json:"stale"`
}

// CPU is server CPU per request of the main phase, in µs; nil: not
// measured (an external server, or a runner that did not probe it).
type CPU struct {
	CacheUsPerRequest    *float64 `json:"cache_us_per_request,omitempty"`
	DatabaseUsPerRequest *float64 `json:"database_us_per_request,omitempty"`
}

// SetCPU records the cache's and the database's server CPU seconds over
// the main phase (from each server's probe, metrics.ServerCost.CPUS) as
// µs per request; a negative figure means not measured.
func (s *Summary) SetCPU(cacheCPUS, databaseCPUS float64) {
	per := func(cpuS float64) *float64 {
		if cpuS < 0 || s.Requests <= 0 {
			return nil
		}
		v := cpuS * 1e6 / float64(s.Requests)
		return &v
	}
	s.CPU = CPU{CacheUsPerRequest: per(cacheCPUS), DatabaseUsPerRequest: per(databaseCPUS)}
}

// Stampede is one protection's stampede phase: one hot key whose cache
// entry expires every TTL, read by every client.
type Stampede struct {
	Protection string  `json:"protection"`
	Phase      string  `json:"phase"`
	DurationS  float64 `json:"duration_s"`
	Requests   int64   `json:"requests"`
	// Expiries counts the hot entry's expiries the clients met: the first
	// miss (or, with XFetch, the first early recomputation) of each
	// generation of the entry.
	Expiries           int64   `json:"expiries"`
	DBQueries          int64   `json:"db_queries"`
	DBQueriesPerExpiry float64 `json:"db_queries_per_expiry"`
	// MaxDBQueriesPerExpiry is the most queries one expiry caused.
	MaxDBQueriesPerExpiry int64 `json:"max_db_queries_per_expiry"`
	// Refills are requests that did not find a fresh entry at once
	// (missed, waited on the lease or the coalesced query, or recomputed
	// early); RefillP99Us is their p99, the latency during the refill.
	Refills     int64   `json:"refills"`
	RefillP99Us float64 `json:"refill_p99_us"`
	P99Us       float64 `json:"p99_us"`
	// LeaseWaits counts the re-reads of clients that lost the lease.
	LeaseWaits int64 `json:"lease_waits,omitempty"`
	// EarlyRecomputes counts XFetch's recomputations before expiry.
	EarlyRecomputes int64 `json:"early_recomputes,omitempty"`
}

// SearchPhase is one open-loop phase of the capacity search over the
// application loop: its requests as the main phase counts them.
type SearchPhase struct {
	Phase     string  `json:"phase"`
	DurationS float64 `json:"duration_s"`
	Requests  int64   `json:"requests"`
	Reads     int64   `json:"reads"`
	Hits      int64   `json:"hits"`
	HitRatio  float64 `json:"hit_ratio"`
	// DBQueries are the database's reads (one per miss) and writes.
	DBQueries           int64   `json:"db_queries"`
	DBQueriesPerRequest float64 `json:"db_queries_per_request"`
	Stale               int64   `json:"stale"`
}

// AtCapacity is one SLO's capacity of the application loop with what the
// cache did at that rate: the confirming step's phases summed. Found
// false: no rate met the SLO, and the figures are zero.
type AtCapacity struct {
	SLO   string  `json:"slo"`
	Found bool    `json:"found"`
	OpsS  float64 `json:"ops_s,omitempty"`
	// AtLeast says the rate is a lower bound (the client, or the search's
	// highest rate, bounded it).
	AtLeast             bool    `json:"at_least,omitempty"`
	Requests            int64   `json:"requests,omitempty"`
	HitRatio            float64 `json:"hit_ratio,omitempty"`
	DBQueriesPerRequest float64 `json:"db_queries_per_request,omitempty"`
	DBQueriesPerS       float64 `json:"db_queries_per_s,omitempty"`
	Stale               int64   `json:"stale,omitempty"`
}

// Package sessions is the sessions workload's part of the result schema
// (result.Cell.Sessions): the data types the workload fills and every
// report reads, owned by the schema so that renaming a field of the
// workload cannot change storebench.result/v1.
package sessions

import "time"

// Summary.Phase is one of these.
const (
	PhaseInsert = "insert" // phase A
	PhaseChurn  = "churn"  // phase B
)

// Summary is what a sessions cell records beyond its phases (the result's
// Cell.Sessions). Phase A fills the first block, phase B the rest.
type Summary struct {
	Phase string `json:"phase"`
	// Store is the store kind (store.Info.Kind).
	Store string `json:"store"`

	// Phase A.
	Variant    string `json:"variant,omitempty"`
	VariantDoc string `json:"variant_doc,omitempty"`
	Inserts    int64  `json:"inserts,omitempty"`

	// Design is the design spec (phase B), e.g. "tuned,fillfactor=100".
	Design string `json:"design,omitempty"`
	// Knobs are the design's knob values and whether this store has them.
	Knobs []KnobValue `json:"knobs,omitempty"`
	// Catalog is the design read back from the store (store.SessionClient.Describe).
	Catalog map[string]string `json:"catalog,omitempty"`
	// ServerSettings are the settings the design needed that the server
	// lacked, applied by restarting it (or not in effect: see Notes).
	ServerSettings map[string]string `json:"server_settings,omitempty"`

	Timing   *Timing   `json:"timing,omitempty"`
	Counters *Counters `json:"counters,omitempty"`
	Figures  *Figures  `json:"figures,omitempty"`
	// Samples are the observations, every Timing.ObserveEvery.
	Samples []Sample `json:"samples,omitempty"`
	Replica *Replica `json:"replica,omitempty"`
	Notes   []string `json:"notes,omitempty"`
}

// KnobValue is one knob of a design as run.
type KnobValue struct {
	V       string `json:"v,omitempty"`
	Name    string `json:"name"`
	Value   string `json:"value"`
	Applies bool   `json:"applies"`
}

// Counters are the workload's own counts over the whole run, warm-up
// included, and its correctness checks.
type Counters struct {
	Creates    int64 `json:"creates"`
	Reads      int64 `json:"reads"`
	Hits       int64 `json:"hits"`
	Misses     int64 `json:"misses"`
	ReadErrors int64 `json:"read_errors"`
	// ActiveReads were aimed at sessions in their active period, which
	// must all hit; ExpiredReads at sessions past their latest possible
	// expiry, which must all miss.
	ActiveReads  int64 `json:"active_reads"`
	ExpiredReads int64 `json:"expired_reads"`
	// Stale counts reads that returned a session after its latest possible
	// expiry; StaleMaxS is the latest such read, in seconds after expiry.
	Stale     int64   `json:"stale"`
	StaleMaxS float64 `json:"stale_max_s"`
	// Lost counts reads that missed a session before its earliest possible
	// expiry: evicted, lost in a crash, or never replicated.
	Lost int64 `json:"lost"`
	// Unjudged counts reads of sessions whose expiry the client cannot
	// bound (a keepalive or read-keepalive that may have come after the
	// expiry); they count as neither stale nor lost.
	Unjudged int64 `json:"unjudged"`
	// EarlySlackS and LateSlackS are the tolerances of the checks: how
	// much earlier (the store's expiry resolution + 5 ms) or later (twice
	// the resolution + 5 ms) than the model a session may expire.
	EarlySlackS float64 `json:"early_slack_s"`
	LateSlackS  float64 `json:"late_slack_s"`

	Keepalives   int64 `json:"keepalives"`
	KeepaliveIDs int64 `json:"keepalive_ids"`
	// KeepaliveExtended is how many sessions the keepalives extended, as
	// the store reports it; -1 when it does not.
	KeepaliveExtended int64 `json:"keepalive_extended"`
	KeepaliveErrors   int64 `json:"keepalive_errors"`
	Reaps             int64 `json:"reaps"`
	Reaped            int64 `json:"reaped"`
	ReapErrors        int64 `json:"reap_errors"`
}

// Figures are derived from the samples over the measured part.
type Figures struct {
	PeakRows    int64 `json:"peak_rows"`
	EndRows     int64 `json:"end_rows"`
	PeakExpired int64 `json:"peak_expired"`
	// LingerMaxS is the longest an expired session was seen still stored
	// (the oldest expired one at an observation); 0 where the store cannot
	// tell (Redis, Memcached: their expired items are invisible).
	LingerMaxS float64 `json:"linger_max_s"`
	PeakBytes  int64   `json:"peak_bytes"`
	EndBytes   int64   `json:"end_bytes"`

	// PostgreSQL.
	PeakDeadTuples *int64 `json:"peak_dead_tuples,omitempty"`
	// HOTRatio is Δn_tup_hot_upd / Δn_tup_upd: the share of updates that
	// were heap-only (no index change, room in the page).
	HOTRatio       *float64 `json:"hot_ratio,omitempty"`
	AutovacuumRuns *int64   `json:"autovacuum_runs,omitempty"`
	TableBytes     *int64   `json:"table_bytes,omitempty"`
	IndexBytes     *int64   `json:"index_bytes,omitempty"`
	WALBytes       *int64   `json:"wal_bytes,omitempty"`
	// WALBytesPerOp is WAL bytes per create, read and keepalive id.
	WALBytesPerOp *float64 `json:"wal_bytes_per_op,omitempty"`

	// Redis.
	ExpiredKeys *int64 `json:"expired_keys,omitempty"`
	// Memcached: evictions are lost sessions.
	Evictions *int64 `json:"evictions,omitempty"`
	Reclaimed *int64 `json:"reclaimed,omitempty"`
	// Files: the longest observation walk over the session files.
	WalkMaxS *float64 `json:"walk_max_s,omitempty"`

	// Deltas are the store's cumulative counters' change over the
	// measured part; Peaks every metric's highest value in it.
	Deltas map[string]float64 `json:"deltas,omitempty"`
	Peaks  map[string]float64 `json:"peaks,omitempty"`
}

// Sample is one observation of the store.
type Sample struct {
	// T is the time since the measured part began, in seconds; negative
	// during the warm-up.
	T              float64            `json:"t_s"`
	Rows           int64              `json:"rows"`
	Expired        int64              `json:"expired"`
	OldestExpiredS float64            `json:"oldest_expired_s"`
	Bytes          int64              `json:"bytes"`
	Metrics        map[string]float64 `json:"metrics,omitempty"`
}

// Replica is what the reads on a read replica saw.
type Replica struct {
	URL    string `json:"url"`
	Reads  int64  `json:"reads"`
	Hits   int64  `json:"hits"`
	Misses int64  `json:"misses"`
	// Errors are reads the replica refused; PostgreSQL refuses to read an
	// UNLOGGED table during recovery, so for that design every read fails.
	Errors      int64  `json:"errors"`
	ErrorSample string `json:"error_sample,omitempty"`
	// LagMisses are misses of sessions written on the primary less than
	// LagGraceS before: replication lag (with synchronous_commit=off the
	// WAL is shipped only after the WAL writer flushed it), not lost.
	LagMisses int64   `json:"lag_misses"`
	LagGraceS float64 `json:"lag_grace_s"`
}

// Timing is the scaled clock of a churn cell, recorded in the summary.
type Timing struct {
	Scale          float64       `json:"time_scale"`
	TTL            time.Duration `json:"-"`
	RefreshBelow   time.Duration `json:"-"`
	KeepaliveEvery time.Duration `json:"-"`
	ReapEvery      time.Duration `json:"-"`
	ActiveMean     time.Duration `json:"-"`
	Warmup         time.Duration `json:"-"`
	Duration       time.Duration `json:"-"`
	ObserveEvery   time.Duration `json:"-"`

	TTLS            float64 `json:"ttl_s"`
	RefreshBelowS   float64 `json:"refresh_below_s"`
	KeepaliveEveryS float64 `json:"keepalive_every_s"`
	ReapEveryS      float64 `json:"reap_every_s"`
	ActiveMeanS     float64 `json:"active_mean_s"`
	WarmupS         float64 `json:"warmup_s"`
	DurationS       float64 `json:"duration_s"`
	ObserveEveryS   float64 `json:"observe_every_s"`
	// ExpectedLive is CreateRate × (active mean + TTL): the steady-state
	// number of live sessions the parameters aim at.
	ExpectedLive float64 `json:"expected_live"`
}

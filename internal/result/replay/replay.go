// Package replay is the replay workload's part of the result schema: what
// a cell replayed of its trace. It belongs to the schema, not to the
// workload, so that renaming a field of the workload cannot change
// storebench.result/v1.
package replay

// Summary is one replay cell's own result.
type Summary struct {
	// Trace is the file's base name; Format its format (given or
	// detected), Compression gzip, zstd or "".
	Trace       string `json:"trace"`
	Format      string `json:"format"`
	Compression string `json:"compression,omitempty"`
	// Speed is the speed factor ("1", "2", …) or "max": as fast as the
	// connections allow.
	Speed string `json:"speed"`
	// Spread: the trace's times are whole seconds, each second's requests
	// spread evenly over it. Untimed: it has no times (kvcache v1), and
	// is sent as fast as the connections allow.
	Spread  bool `json:"spread,omitempty"`
	Untimed bool `json:"untimed,omitempty"`
	// Requests are the trace's requests after expansion (op_count),
	// Replayed those sent to the store, Unsupported the others, by
	// command: Requests = Replayed + the Unsupported's sum, unless the
	// cell failed part-way.
	Requests    int64            `json:"requests"`
	Replayed    int64            `json:"replayed"`
	Unsupported map[string]int64 `json:"unsupported,omitempty"`
	// Hits and Misses are the keys gets (and read-modify-writes) found
	// and did not find.
	Hits   int64 `json:"hits"`
	Misses int64 `json:"misses"`
	// LatenessUs is how far behind its scaled recorded time each request
	// was sent; nil when none had a time to keep (speed max, untimed).
	LatenessUs *Lateness `json:"lateness_us,omitempty"`
	// DurationS is the replay's measured time; TraceDurationS the
	// trace's span at the speed asked (0 untimed or at max).
	DurationS      float64 `json:"duration_s"`
	TraceDurationS float64 `json:"trace_duration_s,omitempty"`
	// TraceRate is the trace's own requests per second, by second of its
	// scaled time (the achieved rate is the phase's series).
	TraceRate []int64 `json:"trace_rate,omitempty"`
	// Notes say what a reader must know of the mapping (spread seconds,
	// the mapped commands).
	Notes []string `json:"notes,omitempty"`
}

// Lateness are percentiles of the sends' lateness, in µs.
type Lateness struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

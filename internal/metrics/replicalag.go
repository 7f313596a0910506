package metrics

// ReplicaLag is how far a replica set's replicas trailed their primary
// over a phase's measured part, sampled on the primary
// (pg_stat_replication) every ReplicaLagIntervalMs and at both ends. Each
// sample counts its worst replica; the figures are over the samples.
type ReplicaLag struct {
	Source string `json:"source"`
	// Replicas is how many the store was given; Streaming the fewest a
	// sample saw streaming (fewer: a replica was down or reconnecting).
	Replicas  int `json:"replicas"`
	Streaming int `json:"streaming"`
	Samples   int `json:"samples"`
	// ReplayMs is how long ago the worst replica had replayed what the
	// primary flushed last; FlushMs the same for its flush to its disk.
	// Over the samples whose lag the primary could tell (TimedSamples).
	ReplayMs     LagFigures `json:"replay_ms"`
	FlushMs      LagFigures `json:"flush_ms"`
	TimedSamples int        `json:"timed_samples"`
	// Bytes is the WAL written on the primary and not yet replayed by the
	// worst replica.
	Bytes LagFigures `json:"bytes"`
	// CatchUpMs is how long the run waited, before the phase, for every
	// replica to replay the earlier phases' writes (outside the measured time).
	CatchUpMs float64 `json:"catch_up_ms"`
}

// LagFigures are a lag's median and maximum over a phase's samples.
type LagFigures struct {
	P50 float64 `json:"p50"`
	Max float64 `json:"max"`
}

// ReplicaLagIntervalMs is how often a replica set's lag is sampled.
const ReplicaLagIntervalMs = 100

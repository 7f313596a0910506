package result

import "time"

// Shard says the result is one part of a run split over several processes
// (run --shard I/N), or, in a merged result, how many parts it merged.
type Shard struct {
	Index int `json:"index"` // 0..Count-1 (a merged result lists its shards in Merged)
	Count int `json:"count"`
	// Host is the machine the shard ran on (also Environment.Hostname).
	Host string `json:"host,omitempty"`
	// StartAt is the wall-clock instant asked (--start-at): the shard waited
	// for it after starting its first target, just before its first cell.
	StartAt *time.Time `json:"start_at,omitempty"`
	// Released is when the shard really began its first cell: StartAt, or
	// later when starting its first target took longer than the wait.
	Released *time.Time `json:"released,omitempty"`
	// Clock is how far the shard's wall clock can be trusted, which bounds
	// how well shards' seconds line up when merged.
	Clock *Clock `json:"clock,omitempty"`
	// Merged lists the shards a merged result was made of, in index order.
	Merged []MergedShard `json:"merged,omitempty"`
}

// Clock is the kernel's view of the wall clock's discipline (adjtimex(2)).
type Clock struct {
	// Synchronized says an NTP (or PTP) daemon disciplines the clock.
	Synchronized bool `json:"synchronized"`
	// MaxErrorUs is the kernel's bound on the clock's error, in µs, as the
	// daemon last set it.
	MaxErrorUs int64 `json:"max_error_us"`
	// EstErrorUs is the estimated error, in µs.
	EstErrorUs int64 `json:"est_error_us"`
}

// MergedShard is one shard of a merged result: where it ran and what it
// recorded of itself.
type MergedShard struct {
	Index       int         `json:"index"`
	ID          string      `json:"id"`
	Environment Environment `json:"environment"`
	StartAt     *time.Time  `json:"start_at,omitempty"`
	Released    *time.Time  `json:"released,omitempty"`
	Clock       *Clock      `json:"clock,omitempty"`
	Status      string      `json:"status"`
}

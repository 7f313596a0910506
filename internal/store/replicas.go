package store

import (
	"context"
	"time"
)

// Replicated is a store whose reads may go to streaming replicas of the
// server its writes go to (PostgreSQL with read replicas): the run waits
// for the replicas to catch up before a measured phase, so a phase reads
// what the earlier ones wrote, and samples how far they trail during it.
type Replicated interface {
	// Replicas is how many replicas the store was given.
	Replicas() int
	// CatchUp waits until every replica has replayed all the primary had
	// written when it was called.
	CatchUp(ctx context.Context) error
	// ReplicaLag reads, on the primary, how far each streaming replica
	// trails it now; a replica not streaming is absent.
	ReplicaLag(ctx context.Context) ([]ReplicaLag, error)
}

// ReplicaLag is one replica's distance behind its primary at one instant.
type ReplicaLag struct {
	Replica string // how the primary names it: its address as the primary sees it, and its application name
	// Write, Flush and Replay are how long ago the replica had written,
	// flushed and replayed the WAL the primary flushed last (PostgreSQL's
	// write_lag, flush_lag, replay_lag); TimeKnown is false when the
	// primary could not tell (no WAL flushed recently while the replica
	// is behind).
	Write, Flush, Replay time.Duration
	TimeKnown            bool
	// Bytes is the WAL the primary wrote that the replica has not replayed.
	Bytes int64
}

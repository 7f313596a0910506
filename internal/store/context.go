package store

import (
	"context"
	"time"
)

// SyncContext prepares ctx for a driver call on the per-op path. Drivers that
// watch a cancellable context spend a goroutine or a background pipeline on
// it (measured: +2-4 µs per op for database/sql, a switch to rueidis's
// pipelining goroutines). A context without a deadline is therefore checked
// once here and replaced by context.Background(); one with a deadline is
// passed on, so a bounded call stays bounded.
func SyncContext(ctx context.Context) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); ok {
		return ctx, nil
	}
	return context.Background(), nil
}

// SharedContext is ctx for a query on a connection other callers share (a
// store's administrative connection). pgx closes a connection whose query's
// context is cancelled, so one caller giving up (a sampler stopped at the
// end of a run) would take the connection from every other. ctx is checked
// once; the query is then bounded by ctx's deadline or limit, whichever
// comes first, but not cancelled with ctx.
func SharedContext(ctx context.Context, limit time.Duration) (context.Context, context.CancelFunc, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	d := time.Now().Add(limit)
	if dl, ok := ctx.Deadline(); ok && dl.Before(d) {
		d = dl
	}
	c, cancel := context.WithDeadline(context.WithoutCancel(ctx), d)
	return c, cancel, nil
}

package workload

import (
	"context"
	"fmt"

	"github.com/storebench/storebench/internal/store"
)

// WriteChunk writes one chunk of key-value pairs.
type WriteChunk func(ctx context.Context, keys, vals [][]byte) error

// ChunkWriter returns the fastest way to write a chunk of new pairs on kv:
// its store.BulkLoader's Load (PostgreSQL COPY, pipelined sets), else its
// store.Batcher's SetBatch without expiry. It fails with
// store.ErrUnsupported when kv has neither. Load may refuse keys that
// already exist (COPY does not upsert): write chunks into a store that
// Reset has emptied.
func ChunkWriter(kv store.KV) (WriteChunk, error) {
	if l, ok := kv.(store.BulkLoader); ok {
		return l.Load, nil
	}
	if b, ok := kv.(store.Batcher); ok {
		return func(ctx context.Context, keys, vals [][]byte) error { return b.SetBatch(ctx, keys, vals, 0) }, nil
	}
	return nil, fmt.Errorf("writing in chunks needs bulk load or batches: %w", store.ErrUnsupported)
}

package memory

import (
	"context"
	"time"

	"github.com/storebench/storebench/internal/store"
)

// Batches are loops over Get and Set: there is no round trip to save, but
// implementing them lets the floor run the same pipelined workloads.

var _ store.Batcher = (*Client)(nil)

// SetBatch sets every pair in turn; unlike Set it checks ctx, once.
func (c *Client) SetBatch(ctx context.Context, keys, vals [][]byte, ttl time.Duration) error {
	if err := store.CheckPairs(keys, vals); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, k := range keys {
		if err := c.Set(ctx, k, vals[i], ttl); err != nil {
			return err
		}
	}
	return nil
}

// GetBatch gets every key in turn; unlike Get it checks ctx, once.
func (c *Client) GetBatch(ctx context.Context, keys, dst [][]byte, found []bool) ([][]byte, error) {
	dst, err := store.BatchDst(dst, found, len(keys))
	if err != nil {
		return dst, err
	}
	if err := ctx.Err(); err != nil {
		return dst, err
	}
	for i, k := range keys {
		if dst[i], found[i], err = c.Get(ctx, k, dst[i]); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

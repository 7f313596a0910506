package postgres

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/storebench/storebench/internal/store"
)

// Batches.
//
// SetBatch and GetBatch queue one Bind/Execute of the client's prepared
// statement per key (pgconn.Batch, binary format, no Describe) and send
// them with a single Sync: one round trip. Between two Syncs the statements
// form one implicit transaction, so a batch of writes commits once (one WAL
// flush for the batch, as Redis's appendfsync always flushes once per event
// loop iteration for a pipeline) and a failing statement rolls the whole
// batch back. The row locks of a batch's upserts are held until its end, so
// SetBatch sends them in key order: two clients' batches of random keys
// then lock in one order and cannot deadlock (in arrival order they did,
// SQLSTATE 40P01, at 50 clients × 16). The sort is stable: a key given
// twice keeps its last value, as sent one by one.
//
// Load is COPY kv (k, v) FROM STDIN (binary) through pgx's CopyFrom. COPY
// only inserts: a key already in the table fails the whole Load with a
// unique violation (SQLSTATE 23505) instead of overwriting it. Workloads
// call Load on a table that Reset has just emptied, with distinct keys, so
// plain COPY is what they need; use SetBatch to upsert.

var (
	_ store.Batcher    = (*Client)(nil)
	_ store.BulkLoader = (*Client)(nil)
)

// SetBatch upserts every pair in one round trip and one transaction.
func (c *Client) SetBatch(ctx context.Context, keys, vals [][]byte, ttl time.Duration) error {
	if err := store.CheckPairs(keys, vals); err != nil {
		return opErr("set batch", err)
	}
	if len(keys) == 0 {
		return nil
	}
	var ttlParam []byte
	if ttl > 0 {
		ms := (ttl + time.Millisecond - 1) / time.Millisecond
		binary.BigEndian.PutUint64(c.ttl[:], uint64(ms))
		ttlParam = c.ttl[:]
	}
	c.order = c.order[:0]
	for i := range keys {
		c.order = append(c.order, i)
	}
	slices.SortStableFunc(c.order, func(i, j int) int { return bytes.Compare(keys[i], keys[j]) })
	var b pgconn.Batch // Bind encodes the parameters: nothing of the caller's is kept
	for _, i := range c.order {
		c.params[0], c.params[1], c.params[2] = store.NonNil(keys[i]), store.NonNil(vals[i]), ttlParam
		b.ExecStatement(c.set, c.params[:], binary1, binary1)
	}
	c.params = [3][]byte{}
	if err := c.pg.ExecBatch(ctx, &b).Close(); err != nil {
		return opErr("set batch", err)
	}
	return nil
}

// GetBatch looks up every key in one round trip.
func (c *Client) GetBatch(ctx context.Context, keys, dst [][]byte, found []bool) ([][]byte, error) {
	return store.GetBatch(keys, dst, found, opErr, func(dst [][]byte) error {
		var err error
		var b pgconn.Batch
		for _, k := range keys {
			c.params[0] = store.NonNil(k)
			b.ExecStatement(c.get, c.params[:1], binary1, binary1)
		}
		c.params[0] = nil
		mrr := c.pg.ExecBatch(ctx, &b)
		n := 0
		for mrr.NextResult() {
			rr := mrr.ResultReader()
			if n >= len(keys) {
				rr.Close()
				continue
			}
			d, ok := dst[n][:0], false
			for rr.NextRow() {
				d, ok = append(d, rr.Values()[0]...), true
			}
			if _, err = rr.Close(); err != nil {
				d, ok = d[:0], false
			}
			dst[n], found[n] = d, ok
			n++
		}
		if cerr := mrr.Close(); err == nil {
			err = cerr
		}
		if err == nil && n != len(keys) {
			err = fmt.Errorf("%d results for %d keys", n, len(keys))
		}
		if err != nil {
			for i := range keys {
				dst[i], found[i] = dst[i][:0], false
			}
			return opErr("get batch", err)
		}
		return nil
	})
}

var kvColumns = []string{"k", "v"}

// Load copies the pairs into the table with COPY FROM (see the package
// doc of batch.go: insert only, no upsert; expires_at stays NULL).
func (c *Client) Load(ctx context.Context, keys, vals [][]byte) error {
	if err := store.CheckPairs(keys, vals); err != nil {
		return opErr("load", err)
	}
	if len(keys) == 0 {
		return nil
	}
	rows := pgx.CopyFromSlice(len(keys), func(i int) ([]any, error) {
		c.row[0], c.row[1] = store.NonNil(keys[i]), store.NonNil(vals[i])
		return c.row[:], nil
	})
	n, err := c.conn.CopyFrom(ctx, c.table, kvColumns, rows)
	c.row = [2]any{}
	if err != nil {
		return opErr("load: copy", err)
	}
	if n != int64(len(keys)) {
		return opErr("load: copy", fmt.Errorf("copied %d rows of %d", n, len(keys)))
	}
	return nil
}

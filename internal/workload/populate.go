package workload

import (
	"context"
	"fmt"
	"sync"

	"github.com/storebench/storebench/internal/store"
)

// fillChunk is how many pairs one pre-population call writes.
const fillChunk = 1000

// fillClients bounds the connections that pre-populate a keyspace.
const fillClients = 4

// Keyspace is the keys [0, Keys) of a workload that reads what it did not
// write in the same phase (throughput's gets, mix), with their values of
// version 0.
type Keyspace struct {
	Keys      int64
	ValueSize int
	KeyMode   KeyMode
	Seed      uint64
}

// WithDefaults returns ks with each zero field (but Seed) taken from def.
func (ks Keyspace) WithDefaults(def Keyspace) Keyspace {
	if ks.Keys == 0 {
		ks.Keys = def.Keys
	}
	if ks.ValueSize == 0 {
		ks.ValueSize = def.ValueSize
	}
	if ks.KeyMode == "" {
		ks.KeyMode = def.KeyMode
	}
	return ks
}

// Check lists what is wrong with ks, once a workload has applied its defaults.
func (ks Keyspace) Check() []error {
	var errs []error
	if ks.Keys <= 0 {
		errs = append(errs, fmt.Errorf("keyspace must be positive, got %d", ks.Keys))
	}
	if ks.ValueSize < 0 {
		errs = append(errs, fmt.Errorf("value size must be positive, got %d", ks.ValueSize))
	}
	if _, err := ParseKeyMode(string(ks.KeyMode)); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// Populate empties the store and writes every key of ks with its value,
// unmeasured: in chunks through store.BulkLoader or store.Batcher where the
// store has them, else one Set at a time, on up to 4 connections of its own
// (never more than clients).
func Populate(ctx context.Context, st store.Store, ks Keyspace, clients int) error {
	if err := st.Reset(ctx); err != nil { // COPY inserts only: start from an empty store
		return fmt.Errorf("populate: reset: %w", err)
	}
	chunks := (ks.Keys + fillChunk - 1) / fillChunk
	conns := int(min(fillClients, int64(max(clients, 1)), chunks))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = fmt.Errorf("populate: %w", err)
		}
		mu.Unlock()
		cancel()
	}
	for w := range conns {
		c, err := st.Open(ctx)
		if err != nil {
			fail(err)
			break
		}
		wg.Go(func() {
			defer c.Close()
			kv, ok := c.(store.KV)
			if !ok {
				fail(store.ErrUnsupported)
				return
			}
			write, err := ChunkWriter(kv)
			if err != nil { // one Set at a time
				write = func(ctx context.Context, keys, vals [][]byte) error {
					for i, k := range keys {
						if err := kv.Set(ctx, k, vals[i], 0); err != nil {
							return err
						}
					}
					return nil
				}
			}
			buf := make([]byte, 0, fillChunk*(32+ks.ValueSize))
			keys := make([][]byte, 0, fillChunk)
			vals := make([][]byte, 0, fillChunk)
			for ch := int64(w); ch < chunks; ch += int64(conns) {
				buf, keys, vals = buf[:0], keys[:0], vals[:0]
				for i := ch * fillChunk; i < min((ch+1)*fillChunk, ks.Keys); i++ {
					at := len(buf)
					buf = AppendKey(buf, ks.KeyMode, ks.Seed, i)
					mid := len(buf)
					buf = AppendValue(buf, ks.Seed, i, 0, ks.ValueSize)
					keys, vals = append(keys, buf[at:mid:mid]), append(vals, buf[mid:len(buf):len(buf)])
				}
				if err := write(ctx, keys, vals); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

package workload

import (
	"context"
	"fmt"
	"sync"

	"github.com/storebench/storebench/internal/store"
)

// fillChunk is how many pairs one pre-population call writes, at most;
// large values make fewer (fillKeys).
const fillChunk = 1000

// fillBytes bounds the keys and values of one pre-population call, which
// are built in memory first: 1,000 values of 100 MiB would need 100 GiB.
const fillBytes = 4 << 20

// fillKeys is how many pairs one pre-population call writes for values of
// valueSize bytes: fillChunk, fewer when they would pass fillBytes, at
// least one.
func fillKeys(valueSize int) int64 {
	return max(1, min(fillChunk, fillBytes/(KeyBytes+int64(valueSize))))
}

// fillClients bounds the connections that pre-populate a keyspace.
const fillClients = 4

// Keyspace is the keys [0, Keys) of a workload that reads what it did not
// write in the same phase (throughput's gets, mix), with their values of
// version 0.
type Keyspace struct {
	Keys      int64   `json:"keyspace"`
	ValueSize int     `json:"value_size"`
	KeyMode   KeyMode `json:"key_mode"`
	Seed      uint64  `json:"seed"`
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

// KeyspaceSpec is a scenario entry's keyspace as written (inline in the
// entries of mix and throughput); zero fields take the workload's defaults.
type KeyspaceSpec struct {
	Keyspace  int64  `yaml:"keyspace,omitempty" json:"keyspace,omitempty"`
	ValueSize int    `yaml:"value_size,omitempty" json:"value_size,omitempty"`
	KeyMode   string `yaml:"key_mode,omitempty" json:"key_mode,omitempty"`
}

// Seeded is the entry's keyspace under the run's seed.
func (k KeyspaceSpec) Seeded(seed uint64) Keyspace {
	return Keyspace{Keys: k.Keyspace, ValueSize: k.ValueSize, KeyMode: KeyMode(k.KeyMode), Seed: seed}
}

// Written is ks as an entry writes it (a Spec's Defaults).
func (ks Keyspace) Written() KeyspaceSpec {
	return KeyspaceSpec{Keyspace: ks.Keys, ValueSize: ks.ValueSize, KeyMode: string(ks.KeyMode)}
}

// Check lists what is wrong with ks, once a workload has applied its defaults.
func (ks Keyspace) Check() []error {
	var errs []error
	if err := CheckKeys("keyspace", ks.Keys); err != nil {
		errs = append(errs, err)
	}
	if err := CheckValueSize("value_size", ks.ValueSize); err != nil {
		errs = append(errs, err)
	}
	if _, err := ParseKeyMode(string(ks.KeyMode)); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// PopulatedEstimate is the memory of a cell that populates ks, unmeasured,
// then drives clients over it, perClient bytes each (ClientBytes): the
// population's buffers are shared, the keyspace is the data set.
func PopulatedEstimate(ks Keyspace, clients int, perClient int64) Estimate {
	return Estimate{Clients: clients, PerClient: perClient, Shared: PopulateBytes(ks, clients), Data: ks.Keys * EntryBytes(ks.ValueSize)}
}

// PopulateBytes estimates Populate's memory: each of its connections'
// buffers and a chunk of keys and values.
func PopulateBytes(ks Keyspace, clients int) int64 {
	conns := int64(min(fillClients, max(clients, 1)))
	return conns * (ConnBytes + 2*fillKeys(ks.ValueSize)*(KeyBytes+int64(ks.ValueSize)))
}

// Populate empties the store and writes every key of ks with its value,
// unmeasured: in chunks through store.BulkLoader or store.Batcher where the
// store has them, else one Set at a time, on up to 4 connections of its own
// (never more than clients), in chunks of at most 1,000 pairs and 4 MiB
// (one pair where a value is larger).
func Populate(ctx context.Context, st store.Store, ks Keyspace, clients int) error {
	return PopulateRows(ctx, st, ks.Keys, clients, ks.ValueSize, func(buf []byte, i int64) ([]byte, int) {
		at := len(buf)
		buf = AppendKey(buf, ks.KeyMode, ks.Seed, i)
		keyLen := len(buf) - at
		return AppendValue(buf, ks.Seed, i, 0, ks.ValueSize), keyLen
	})
}

// PopulateRows is Populate for rows [0, rows) that pair spells: it appends
// row i's key and then its value (of at most maxValue bytes) to buf, and
// says how long the key is.
func PopulateRows(ctx context.Context, st store.Store, rows int64, clients, maxValue int, pair func(buf []byte, i int64) ([]byte, int)) error {
	if err := st.Reset(ctx); err != nil { // COPY inserts only: start from an empty store
		return fmt.Errorf("populate: reset: %w", err)
	}
	chunk := fillKeys(maxValue)
	chunks := (rows + chunk - 1) / chunk
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
			buf := make([]byte, 0, chunk*(KeyBytes+int64(maxValue)))
			keys := make([][]byte, 0, chunk)
			vals := make([][]byte, 0, chunk)
			for ch := int64(w); ch < chunks; ch += int64(conns) {
				buf, keys, vals = buf[:0], keys[:0], vals[:0]
				for i := ch * chunk; i < min((ch+1)*chunk, rows); i++ {
					// A slice taken before buf grows keeps the old array.
					at := len(buf)
					var keyLen int
					buf, keyLen = pair(buf, i)
					mid := at + keyLen
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

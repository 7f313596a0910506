package ycsb

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/ycsb/gen"
)

// Layouts: how a cell's store keeps the records (Params.Layout).
const (
	// LayoutRecords is the store's own (store.Records): a SQL store's
	// usertable row, a Redis hash and its index, as YCSB's bindings.
	LayoutRecords = "records"
	// LayoutValue is one KV value per record holding its fields
	// (valueRecords), on a store that keeps values only.
	LayoutValue = "value"
)

// valueLayout says the value layout in the result's words.
const valueLayout = "one value per record holding its fields (each a length-prefixed name and value); an update of one field rewrites the whole record"

// A record kept as one value holds its fields in order, each as a
// length-prefixed name and a length-prefixed value (uvarint lengths):
// compact, and decodable without a schema.

// appendBytes appends b with its length.
func appendBytes(dst, b []byte) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(b))), b...)
}

// appendFresh appends n bytes drawn from r: printable ASCII (' ' to '~'),
// as YCSB's RandomByteIterator's are.
func appendFresh(dst []byte, r interface{ Uint64() uint64 }, n int64) []byte {
	for n > 0 {
		u := r.Uint64()
		for i := 0; i < 8 && n > 0; i++ {
			dst = append(dst, ' '+byte(u%95))
			u >>= 8
			n--
		}
	}
	return dst
}

// fieldAt is the first field of rec, and where the record continues.
func fieldAt(rec []byte) (name, val, rest []byte, err error) {
	n, k := binary.Uvarint(rec)
	if k <= 0 || n > uint64(len(rec)-k) {
		return nil, nil, nil, errors.New("truncated field name")
	}
	name, rec = rec[k:k+int(n)], rec[k+int(n):]
	n, k = binary.Uvarint(rec)
	if k <= 0 || n > uint64(len(rec)-k) {
		return nil, nil, nil, errors.New("truncated field value")
	}
	return name, rec[k : k+int(n)], rec[k+int(n):], nil
}

// mismatch is the error of a record read back that is not one.
func mismatch(key []byte, fields int, why string) error {
	return errclass.WithClass(errclass.ClassMismatch, fmt.Errorf("%w: key %s: not a record of %d fields: %s", workload.ErrMismatch, key, fields, why))
}

// valueRecords keeps records as one KV value each (LayoutValue): the
// store.RecordsConn of a store that is not store.Records. It cannot scan.
type valueRecords struct {
	kv    store.KV
	names [][]byte
	rec   []byte // the record being written or read, reused
}

var _ store.RecordsConn = (*valueRecords)(nil)

func newValueRecords(kv store.KV, names [][]byte, recBytes int64) *valueRecords {
	return &valueRecords{kv: kv, names: names, rec: make([]byte, 0, recBytes)}
}

func (v *valueRecords) Close() error { return nil } // the KV clients are closed apart

// encode builds the record of vals in v.rec.
func (v *valueRecords) encode(vals [][]byte) {
	v.rec = v.rec[:0]
	for i, name := range v.names {
		v.rec = appendBytes(v.rec, name)
		v.rec = appendBytes(v.rec, vals[i])
	}
}

func (v *valueRecords) Insert(ctx context.Context, key []byte, vals [][]byte) error {
	v.encode(vals)
	return v.kv.Set(ctx, key, v.rec, 0)
}

// Update rewrites the whole record from vals, also for one field: a value
// holds every field (the documented deviation).
func (v *valueRecords) Update(ctx context.Context, key []byte, _ int, vals [][]byte) error {
	return v.Insert(ctx, key, vals)
}

// Read reads the whole value and decodes every field into dst; one that
// does not decode into the fields, by name and in order, is a mismatch.
func (v *valueRecords) Read(ctx context.Context, key []byte, _ int, dst [][]byte) (bool, error) {
	got, ok, err := v.kv.Get(ctx, key, v.rec[:0])
	v.rec = got
	if err != nil || !ok {
		return false, err
	}
	rec := got
	for i, want := range v.names {
		name, val, rest, err := fieldAt(rec)
		if err != nil {
			return true, mismatch(key, len(v.names), fmt.Sprintf("field %d: %v", i, err))
		}
		if string(name) != string(want) {
			return true, mismatch(key, len(v.names), fmt.Sprintf("field %d is named %.20q, want %s", i, name, want))
		}
		dst[i] = append(dst[i][:0], val...)
		rec = rest
	}
	if len(rec) != 0 {
		return true, mismatch(key, len(v.names), fmt.Sprintf("%d bytes after the last field", len(rec)))
	}
	return true, nil
}

func (v *valueRecords) Scan(context.Context, []byte, int, func([]byte, [][]byte) error) (int, error) {
	return 0, fmt.Errorf("ycsb: a record kept as one value cannot be scanned in key order: %w", store.ErrUnsupported)
}

// checker checks the fields of a record read back: each value within the
// field length's bounds. Values are drawn at random, as YCSB's are without
// dataintegrity, so their bytes cannot be compared.
type checker struct {
	fields   int
	min, max int64
}

func newChecker(c *gen.Core) checker {
	p := c.Properties()
	lo := p.FieldLength
	if p.FieldLengthDistribution != gen.LengthConstant {
		lo = p.MinFieldLength
	}
	return checker{fields: int(p.FieldCount), min: lo, max: p.FieldLength}
}

// check returns nil when vals' field (every field when field < 0) is
// within bounds, else the mismatch error. It allocates only on a mismatch.
func (ch *checker) check(key []byte, vals [][]byte, field int) error {
	if len(vals) != ch.fields {
		return mismatch(key, ch.fields, fmt.Sprintf("%d fields", len(vals)))
	}
	lo, hi := 0, len(vals)
	if field >= 0 {
		lo, hi = field, field+1
	}
	for i := lo; i < hi; i++ {
		if n := int64(len(vals[i])); n < ch.min || n > ch.max {
			return mismatch(key, ch.fields, fmt.Sprintf("field %d holds %d bytes, want %d to %d", i, n, ch.min, ch.max))
		}
	}
	return nil
}

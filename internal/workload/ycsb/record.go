package ycsb

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/workload"
	"github.com/storebench/storebench/internal/workload/ycsb/gen"
)

// A record is one value holding its fields in order, each as a
// length-prefixed name and a length-prefixed value (uvarint lengths):
// compact, and decodable without a schema. Every store keeps it as one
// key-value pair.

// appendBytes appends b with its length.
func appendBytes(dst, b []byte) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(b))), b...)
}

// appendFresh appends n bytes drawn from r with their length: printable
// ASCII (' ' to '~'), as YCSB's RandomByteIterator's are.
func appendFresh(dst []byte, r interface{ Uint64() uint64 }, n int64) []byte {
	dst = binary.AppendUvarint(dst, uint64(n))
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

// checker checks a record read back: it holds fieldcount fields, named
// field0 … in order, each value within the field length's bounds. Values
// are drawn at random, as YCSB's are without dataintegrity, so their bytes
// cannot be compared; a record that does not decode is a mismatch.
type checker struct {
	c        *gen.Core
	fields   int64
	min, max int64
	name     []byte // scratch for the expected field name
}

func newChecker(c *gen.Core) checker {
	p := c.Properties()
	lo := p.FieldLength
	if p.FieldLengthDistribution != gen.LengthConstant {
		lo = p.MinFieldLength
	}
	return checker{c: c, fields: p.FieldCount, min: lo, max: p.FieldLength, name: make([]byte, 0, 32)}
}

// check returns nil for a well-formed record, else the mismatch error. It
// allocates only on a mismatch. Each field's bounds in rec (start and end
// offsets) go to bounds, when not nil, for a read-modify-write to rewrite
// one.
func (ch *checker) check(key, rec []byte, bounds [][2]int) error {
	whole := len(rec)
	for i := range ch.fields {
		start := whole - len(rec)
		name, val, rest, err := fieldAt(rec)
		if err != nil {
			return ch.bad(key, fmt.Sprintf("field %d: %v", i, err))
		}
		ch.name = ch.c.AppendFieldName(ch.name[:0], i)
		if string(name) != string(ch.name) {
			return ch.bad(key, fmt.Sprintf("field %d is named %.20q, want %s", i, name, ch.name))
		}
		if n := int64(len(val)); n < ch.min || n > ch.max {
			return ch.bad(key, fmt.Sprintf("field %d holds %d bytes, want %d to %d", i, n, ch.min, ch.max))
		}
		rec = rest
		if bounds != nil {
			bounds[i] = [2]int{start, whole - len(rec)}
		}
	}
	if len(rec) != 0 {
		return ch.bad(key, fmt.Sprintf("%d bytes after the last field", len(rec)))
	}
	return nil
}

func (ch *checker) bad(key []byte, why string) error {
	return errclass.WithClass(errclass.ClassMismatch, fmt.Errorf("%w: key %s: not a record of %d fields: %s", workload.ErrMismatch, key, ch.fields, why))
}

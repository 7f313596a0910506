package cacheaside

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/workload"
)

// A value, in the database row and in the cache alike, starts with a
// header the workload reads back, then filler derived from the key and the
// version, checked byte for byte:
//
//	[0:8]   version: the write that made it (0: the initial row)
//	[8:16]  expiry, Unix ns: when a cached copy expires (0 in the database)
//	[16:24] recompute time, ns: the database read that filled it (XFetch's δ)
//	[24:32] fill generation: which fill of the cache wrote it (stampede)
const headerSize = 32

// header is a value's header.
type header struct {
	version  uint64
	expiry   int64
	delta    int64
	fillGen  uint64
	fillSize int // the value's length, header included
}

// appendValue appends key i's value of version v with header h.
func appendValue(dst []byte, seed uint64, i int64, h header) []byte {
	dst = binary.BigEndian.AppendUint64(dst, h.version)
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.expiry))
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.delta))
	dst = binary.BigEndian.AppendUint64(dst, h.fillGen)
	return workload.AppendValue(dst, seed, i, h.version, h.fillSize-headerSize)
}

// restamp rewrites a value's cache fields (expiry, δ, fill generation) in
// place: a database row becomes the copy the cache keeps.
func restamp(val []byte, expiry, delta int64, fillGen uint64) {
	binary.BigEndian.PutUint64(val[8:], uint64(expiry))
	binary.BigEndian.PutUint64(val[16:], uint64(delta))
	binary.BigEndian.PutUint64(val[24:], fillGen)
}

// parseValue reads val's header and checks its filler against key i's
// value of that version, using scratch for the expected bytes.
func parseValue(key, val []byte, seed uint64, i int64, size int, scratch []byte) (header, []byte, error) {
	if len(val) != size {
		return header{}, scratch, errclass.WithClass(errclass.ClassMismatch, fmt.Errorf("%w: key %s: value of %d bytes, want %d", workload.ErrMismatch, key, len(val), size))
	}
	h := header{
		version: binary.BigEndian.Uint64(val), expiry: int64(binary.BigEndian.Uint64(val[8:])),
		delta: int64(binary.BigEndian.Uint64(val[16:])), fillGen: binary.BigEndian.Uint64(val[24:]), fillSize: size,
	}
	scratch = workload.AppendValue(scratch[:0], seed, i, h.version, size-headerSize)
	if !bytes.Equal(val[headerSize:], scratch) {
		return h, scratch, workload.Differs(key, val[headerSize:], scratch)
	}
	return h, scratch, nil
}

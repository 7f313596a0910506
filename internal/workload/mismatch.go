package workload

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/storebench/storebench/internal/errclass"
)

// ErrMismatch marks a read that did not return what was written: a missing
// key or a different value. It is counted as errclass.ClassMismatch, never as
// a success.
var ErrMismatch = errors.New("read does not match the write")

// Missing is the mismatch error of a key that should exist. Build it only
// on the error path: it allocates.
func Missing(key []byte) error {
	return errclass.WithClass(errclass.ClassMismatch, fmt.Errorf("%w: key %s is missing", ErrMismatch, key))
}

// Differs is the mismatch error of a value that is not the one written.
func Differs(key, got, want []byte) error {
	return errclass.WithClass(errclass.ClassMismatch, fmt.Errorf("%w: key %s: got %d bytes %.20q…, want %d bytes %.20q…", ErrMismatch, key, len(got), got, len(want), want))
}

// CheckRead is the check of every verified read: nil when the read found
// key and returned want byte for byte, else the mismatch error. It
// allocates only on a mismatch.
func CheckRead(key, got []byte, ok bool, want []byte) error {
	switch {
	case !ok:
		return Missing(key)
	case !bytes.Equal(got, want):
		return Differs(key, got, want)
	}
	return nil
}

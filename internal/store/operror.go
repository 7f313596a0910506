package store

import "github.com/storebench/storebench/internal/errclass"

// OpError names the store and the operation that failed. Every store builds
// its errors with NewOpError, only on the error path.
type OpError struct {
	Store string // "postgres", "redis", …
	Op    string
	Err   error
}

func (e *OpError) Error() string { return e.Store + ": " + e.Op + ": " + e.Err.Error() }
func (e *OpError) Unwrap() error { return e.Err }

// NewOpError wraps err as storeName's failed op, with class c attached when
// the store's own reading of err (SQLSTATE, error number, reply prefix) found
// one; "" leaves the class to errclass.Classify (deadlines, refused connections).
func NewOpError(storeName, op string, err error, c errclass.Class) error {
	e := &OpError{Store: storeName, Op: op, Err: err}
	if c == "" {
		return e
	}
	return errclass.WithClass(c, e)
}

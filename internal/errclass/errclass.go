// Package errclass sorts errors into the few classes the load engine counts
// (timeout, conflict, unavailable, mismatch, other). It is a leaf: stores
// attach classes, metrics counts them, and neither needs the other for it.
package errclass

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
)

// Class is the kind of an error, so metrics can count errors by class.
type Class string

// The error classes counted by the load engine.
const (
	ClassTimeout     Class = "timeout"
	ClassConflict    Class = "conflict"
	ClassUnavailable Class = "unavailable"
	ClassMismatch    Class = "mismatch"
	ClassOther       Class = "other"
)

// Classes lists every class in a fixed order, for reports and array indexes.
var Classes = [...]Class{ClassTimeout, ClassConflict, ClassUnavailable, ClassMismatch, ClassOther}

// Index returns the position of c in Classes.
func (c Class) Index() int {
	for i, k := range Classes {
		if k == c {
			return i
		}
	}
	return len(Classes) - 1
}

// Classifier is implemented by errors that know their own class, such as a
// store's wrapped driver error (a PostgreSQL serialization failure is a conflict).
type Classifier interface {
	error
	Class() Class
}

// ClassError attaches a class to an error.
type ClassError struct {
	C   Class
	Err error
}

func (e *ClassError) Error() string { return e.Err.Error() }
func (e *ClassError) Unwrap() error { return e.Err }

// Class returns the attached class.
func (e *ClassError) Class() Class { return e.C }

// WithClass wraps err with class c; nil stays nil.
func WithClass(c Class, err error) error {
	if err == nil {
		return nil
	}
	return &ClassError{C: c, Err: err}
}

// Classify returns the class of err.
func Classify(err error) Class {
	// errors.AsType, unlike errors.As, does not allocate: this runs per failed op.
	if c, ok := errors.AsType[Classifier](err); ok {
		return c.Class()
	}
	ne, isNet := errors.AsType[net.Error](err)
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return ClassTimeout
	case isNet && ne.Timeout():
		return ClassTimeout
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed):
		return ClassUnavailable
	}
	return ClassOther
}

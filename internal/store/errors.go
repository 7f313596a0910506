package store

import (
	"errors"

	"github.com/storebench/storebench/internal/errclass"
)

// ErrUnsupported means a store cannot do what a workload asks of it.
var ErrUnsupported = errors.New("not supported by this store")

// ErrNotOwned is returned when storebench is asked to drop or flush something
// it did not create.
var ErrNotOwned = errors.New("not created by storebench; refusing to touch it")

// The error classes live in package errclass (a leaf that metrics imports
// too); these aliases keep store's names until the callers are rewritten.
type (
	Class      = errclass.Class
	Classifier = errclass.Classifier
	ClassError = errclass.ClassError
)

const (
	ClassTimeout     = errclass.ClassTimeout
	ClassConflict    = errclass.ClassConflict
	ClassUnavailable = errclass.ClassUnavailable
	ClassMismatch    = errclass.ClassMismatch
	ClassOther       = errclass.ClassOther
)

var Classes = errclass.Classes

func WithClass(c Class, err error) error { return errclass.WithClass(c, err) }

func Classify(err error) Class { return errclass.Classify(err) }

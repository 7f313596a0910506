package store

import (
	"errors"
)

// ErrUnsupported means a store cannot do what a workload asks of it.
var ErrUnsupported = errors.New("not supported by this store")

// ErrNotOwned is returned when storebench is asked to drop or flush something
// it did not create.
var ErrNotOwned = errors.New("not created by storebench; refusing to touch it")

package scenario

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/storebench/storebench/internal/store"
)

// MaxFileMiB bounds what a scenario may be: the built-in suites are under
// 6 KiB, and 1 MiB is also the most a Kubernetes ConfigMap holds
// (deploy/kubernetes ships the scenario as one). Nothing reads past it, so
// /dev/zero or a file still being written cannot fill the memory.
const (
	MaxFileMiB   = 1
	MaxFileBytes = MaxFileMiB << 20
)

// ReadFile reads and parses the scenario file at path. Only a regular file
// is read: a FIFO is opened without waiting for a writer (O_NONBLOCK, which
// a regular file ignores), then refused with directories and devices by
// what the opened file is, so nothing can swap it in between.
func ReadFile(path string) (*Scenario, error) {
	name := store.RedactURL(path) // a path, but whatever was typed
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %v", name, pathCause(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %v", name, pathCause(err))
	}
	if err := store.CheckWholeFile(st, MaxFileMiB); err != nil {
		return nil, fmt.Errorf("scenario %s: %v: give a scenario's YAML file, a few KiB", name, err)
	}
	return Parse(name, f)
}

// pathCause is a *PathError's cause alone ("no such file or directory"):
// the message names the file already.
func pathCause(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

// readBounded reads r to its end, or refuses it past MaxFileBytes.
func readBounded(name string, r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > MaxFileBytes {
		return nil, fmt.Errorf("scenario %s: larger than %d MiB, the most storebench reads: give a scenario's YAML file, a few KiB", name, MaxFileMiB)
	}
	return b, nil
}

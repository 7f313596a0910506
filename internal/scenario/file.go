package scenario

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/storebench/storebench/internal/store"
)

// MaxFileBytes bounds what a scenario may be: the built-in suites are
// under 6 KiB, and 1 MiB is also the most a Kubernetes ConfigMap holds
// (deploy/kubernetes ships the scenario as one). Nothing reads past it, so
// /dev/zero or a file still being written cannot fill the memory.
const MaxFileBytes = 1 << 20

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
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("scenario %s: %s, not a regular file: give a scenario's YAML file", name, fileType(st.Mode()))
	}
	if st.Size() > MaxFileBytes {
		return nil, tooLarge(name)
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

func fileType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}

func tooLarge(name string) error {
	return fmt.Errorf("scenario %s: larger than 1 MiB, the most storebench reads: a scenario is a few KiB of YAML", name)
}

// readBounded reads r to its end, or refuses it past MaxFileBytes.
func readBounded(name string, r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > MaxFileBytes {
		return nil, tooLarge(name)
	}
	return b, nil
}

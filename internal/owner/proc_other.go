//go:build !linux

package owner

import (
	"errors"
	"syscall"
)

// procStart says whether pid runs (signal 0); the start time is unknown
// without /proc, so a pid reused after its owner died looks alive: the
// safe mistake, which leaves data in place.
func procStart(pid int) (start uint64, running, known bool) {
	err := syscall.Kill(pid, 0)
	switch {
	case err == nil, errors.Is(err, syscall.EPERM):
		return 0, true, true
	case errors.Is(err, syscall.ESRCH):
		return 0, false, true
	}
	return 0, false, false
}

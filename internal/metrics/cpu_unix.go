//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package metrics

import (
	"syscall"
	"time"
)

// ProcessCPU returns the user+system CPU time the whole process has used so
// far, and whether it is known on this platform.
func ProcessCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

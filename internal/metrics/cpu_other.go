//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package metrics

import "time"

// ProcessCPU reports that process CPU time is not known on this platform.
func ProcessCPU() (time.Duration, bool) { return 0, false }

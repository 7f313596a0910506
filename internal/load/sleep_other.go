//go:build !linux

package load

import "time"

// sleepShort sleeps for about d.
func sleepShort(d time.Duration) { time.Sleep(d) }

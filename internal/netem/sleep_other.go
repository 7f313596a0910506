//go:build !linux

package netem

import "time"

// sleepShort sleeps for about d.
func sleepShort(d time.Duration) { time.Sleep(d) }

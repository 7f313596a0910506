//go:build !linux

package load

import "time"

// napper sleeps with the runtime's own timer off Linux.
type napper struct{}

func newNapper() *napper { return nil }

func (*napper) nap(d time.Duration) { time.Sleep(d) }

func (*napper) close() {}

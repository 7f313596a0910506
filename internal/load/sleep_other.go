//go:build !linux

package load

import "time"

// spinWindow is how long before an intended start a worker stops sleeping
// and yields in a loop.
const spinWindow = 100 * time.Microsecond

// napper sleeps with the runtime's own timer off Linux.
type napper struct{}

func newNapper() *napper { return nil }

func (*napper) nap(d time.Duration) { time.Sleep(d) }

func (*napper) close() {}

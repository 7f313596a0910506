package pollio

import (
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// CPUPerOp makes n calls spread over the goroutines of ops (one each, each
// with a client of its own), and returns this process's CPU per call, user
// and system (getrusage: Go's runtime and the kernel's side of the socket
// calls included), the figure make bench's versus tables compare: how the
// store tests measure a client's CPU per op at a given concurrency. It
// stops at the first error.
func CPUPerOp(n int, ops []func() error) (time.Duration, error) {
	left := atomic.Int64{}
	left.Store(int64(n))
	errs := make([]error, len(ops))
	before, err := processCPU()
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	for i, op := range ops {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if errs[i] = op(); errs[i] != nil {
					left.Store(0)
					return
				}
			}
		})
	}
	wg.Wait()
	after, err := processCPU()
	for _, e := range errs {
		if e != nil {
			return 0, e
		}
	}
	return (after - before) / time.Duration(max(n, 1)), err
}

// processCPU is this process's user and system CPU so far.
func processCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

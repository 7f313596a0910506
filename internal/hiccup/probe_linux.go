//go:build linux && cgo

package hiccup

/*
#cgo CFLAGS: -O2
#include "probe_linux.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cProbe is one probe thread (probe_linux.c), outside the Go runtime.
type cProbe struct{ p *C.hiccup_probe }

func startProbe(cpu int, interval time.Duration) (*cProbe, error) {
	p := C.hiccup_start(C.int(cpu), C.int64_t(interval))
	if p == nil {
		return nil, errors.New("out of memory")
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Microsecond) {
		switch s := C.hiccup_state(p); {
		case s == 1:
			return &cProbe{p}, nil
		case s < 0:
			C.hiccup_stop(p)
			C.hiccup_free(p)
			return nil, syscall.Errno(-s)
		case time.Now().After(deadline):
			// Never freed: the thread may still start and write to it.
			return nil, errors.New("the probe thread did not start in 5 s")
		}
	}
}

// drain moves the wake-ups recorded since the last drain into late (how
// late each was) and work (the speed loop's time after it) and says how
// many.
func (c *cProbe) drain(late, work []int64) int {
	n := min(len(late), len(work))
	return int(C.hiccup_drain(c.p, (*C.int64_t)(unsafe.Pointer(&late[0])), (*C.int64_t)(unsafe.Pointer(&work[0])), C.int(n)))
}

// cpu is the CPU time the probe thread has used.
func (c *cProbe) cpu() time.Duration { return time.Duration(C.hiccup_cpu_ns(c.p)) }

// failure is why the probe stopped by itself, or nil; dropped counts the
// wake-ups lost to a full ring (a reader that did not drain).
func (c *cProbe) failure() (dropped uint64, err error) {
	if e := C.hiccup_err(c.p); e != 0 {
		err = fmt.Errorf("clock_nanosleep: %w", syscall.Errno(e))
	}
	return uint64(C.hiccup_dropped(c.p)), err
}

// stop ends the thread and frees it; the CPU it used stays readable until
// then (cpu after stop is the total at exit).
func (c *cProbe) stop() time.Duration {
	C.hiccup_stop(c.p)
	used := time.Duration(C.hiccup_cpu_ns(c.p))
	C.hiccup_free(c.p)
	c.p = nil
	return used
}

// AllowedCPUs are the CPUs this process may run on (a cpuset may leave
// some of the machine's out).
func AllowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, err
	}
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

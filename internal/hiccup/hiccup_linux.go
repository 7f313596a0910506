package hiccup

import (
	"golang.org/x/sys/unix"
)

// pinThread keeps the calling OS thread on cpu.
func pinThread(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	return unix.SchedSetaffinity(0, &set)
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

// monotonicNow is CLOCK_MONOTONIC in nanoseconds, the clock the probe
// sleeps on.
func monotonicNow() (int64, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0, err
	}
	return ts.Nano(), nil
}

// sleepUntil blocks the thread in the kernel until the absolute monotonic
// time t (clock_nanosleep TIMER_ABSTIME, cyclictest's default), not on a
// Go timer: the runtime's own scheduling would add to what is measured.
func sleepUntil(t int64) error {
	ts := unix.NsecToTimespec(t)
	for {
		err := unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil)
		if err != unix.EINTR {
			return err
		}
	}
}

package server

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxCPUs bounds the CPUs a CPU list may name: sched_setaffinity's default
// set (the kernel's cpu_set_t, unix.CPUSet) holds CPUs 0-1023 only, and the
// bound keeps a list such as "0-4000000000" from expanding to billions of
// entries before anything checks which CPUs exist.
const MaxCPUs = 1024

// ParseCPUList parses a Linux CPU list such as "0", "0-1" or "0,2-3" (the
// form taskset and cpuset use) into its distinct CPUs, in order; "" is no
// CPUs. It checks the form and the bound only: whether the CPUs exist here
// is the caller's question.
func ParseCPUList(list string) ([]int, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	// A set, so that "0-1023" written a thousand times is still 1024 CPUs.
	var named [MaxCPUs]bool
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a {
			return nil, fmt.Errorf("bad CPU list %q: write e.g. 0, 0-1 or 0,2-3", list)
		}
		if b >= MaxCPUs {
			return nil, fmt.Errorf("bad CPU list %q: CPU %d is past %d, the highest a CPU set for sched_setaffinity holds", list, b, MaxCPUs-1)
		}
		for c := a; c <= b; c++ {
			named[c] = true
		}
	}
	var cpus []int
	for c, ok := range named {
		if ok {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

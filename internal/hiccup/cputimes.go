package hiccup

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// CPUTimes are the machine's CPU time by state, in clock ticks, from
// /proc/stat's aggregate line: what every process together did, so a
// window can tell the run's own CPU from other load on the machine.
type CPUTimes struct {
	Busy  uint64 // user, nice, system, irq, softirq
	Steal uint64 // taken by the hypervisor
	Total uint64 // every state, idle and iowait included
}

// ticksPerSecond is USER_HZ, /proc/stat's unit: 100 on every Linux build
// that matters (the kernel's ABI keeps it so whatever HZ is).
const ticksPerSecond = 100

// ReadCPUTimes reads them for the CPUs given (every CPU when none: the
// aggregate line); an error where /proc/stat is not there or lacks one.
func ReadCPUTimes(cpus ...int) (CPUTimes, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUTimes{}, err
	}
	want := map[string]bool{}
	for _, c := range cpus {
		want["cpu"+strconv.Itoa(c)] = true
	}
	if len(cpus) == 0 {
		want["cpu"] = true
	}
	var t CPUTimes
	found := 0
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 9 || !want[fields[0]] {
			continue
		}
		found++
		// user nice system idle iowait irq softirq steal [guest
		// guest_nice, already counted in user and nice].
		for i, f := range fields[1:9] {
			n, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				return CPUTimes{}, fmt.Errorf("/proc/stat: %v", err)
			}
			t.Total += n
			switch i {
			case 0, 1, 2, 5, 6:
				t.Busy += n
			case 7:
				t.Steal += n
			}
		}
	}
	if found != len(want) {
		return CPUTimes{}, errors.New("/proc/stat: no line for some of the CPUs")
	}
	return t, nil
}

// BusyCPUsSince is how many CPUs' worth the machine kept busy on average
// since before, over seconds of wall time.
func (t CPUTimes) BusyCPUsSince(before CPUTimes, seconds float64) float64 {
	if seconds <= 0 || t.Busy < before.Busy {
		return 0
	}
	return float64(t.Busy-before.Busy) / ticksPerSecond / seconds
}

// StealPctSince is the share of CPU time the hypervisor took since before.
func (t CPUTimes) StealPctSince(before CPUTimes) float64 {
	if t.Total <= before.Total || t.Steal < before.Steal {
		return 0
	}
	return 100 * float64(t.Steal-before.Steal) / float64(t.Total-before.Total)
}

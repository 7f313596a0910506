package result

import "golang.org/x/sys/unix"

// allowedCPUs is this process's CPU affinity as a list like "0-1".
func allowedCPUs() string {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return ""
	}
	var cpus []int
	for i := 0; i < 1024; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return FormatCPUList(cpus)
}

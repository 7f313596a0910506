package workload

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// openFileLimit is this process's open-file limit (Go raises the soft limit
// to the hard one at start-up); 0 when unknown.
func openFileLimit() int {
	var r unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &r) != nil || r.Cur > 1<<30 {
		return 0
	}
	return int(r.Cur)
}

// physicalMemory is the memory this process may use: the machine's RAM, or
// its cgroup's limit (a container's) when lower; 0 when unknown.
func physicalMemory() int64 {
	var info unix.Sysinfo_t
	if unix.Sysinfo(&info) != nil {
		return 0
	}
	total := int64(info.Totalram) * int64(info.Unit)
	if n := cgroupMemoryLimit(); n > 0 && n < total {
		total = n
	}
	return total
}

// cgroupMemoryLimit reads the memory limit of this process's cgroup (v2
// memory.max, v1 memory.limit_in_bytes); 0 when there is none.
func cgroupMemoryLimit() int64 {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	var files []string
	for _, line := range strings.Split(string(b), "\n") {
		switch parts := strings.SplitN(line, ":", 3); {
		case len(parts) != 3:
		case parts[0] == "0" && parts[1] == "":
			files = append(files, filepath.Join("/sys/fs/cgroup", parts[2], "memory.max"))
		case parts[1] == "memory":
			files = append(files, filepath.Join("/sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes"))
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// "max" (v2) does not parse: no limit; v1 says so with a huge number.
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 0
}

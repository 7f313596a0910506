package result

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ReadEnvironment describes this machine from /proc and uname; serverCPUs is
// the CPU list managed servers are pinned to ("" = not pinned).
func ReadEnvironment(serverCPUs string) Environment {
	e := Environment{OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU(), GoMaxProcs: runtime.GOMAXPROCS(0)}
	e.Hostname, _ = os.Hostname()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		e.Kernel = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
	}
	if name := osRelease(); name != "" {
		e.OS = name
	}
	e.CPUModel = firstField("/proc/cpuinfo", "model name")
	if kb := firstField("/proc/meminfo", "MemTotal"); kb != "" {
		n, _ := strconv.ParseUint(strings.Fields(kb)[0], 10, 64)
		e.MemoryBytes = n * 1024
	}
	e.ClientCPUs = allowedCPUs()
	e.ServerCPUs = serverCPUs
	if serverCPUs == "" {
		e.ServerCPUs = "not pinned (" + e.ClientCPUs + ")"
	}
	return e
}

func osRelease() string {
	f, err := os.Open("/etc/os-release")
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

func firstField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// FormatCPUList writes CPUs as ranges: [0 1 2 5] -> "0-2,5".
func FormatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

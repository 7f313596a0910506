package server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ProcStats is the resource use of a server's processes so far, summed over
// the server process and all its descendants (PostgreSQL is one process per
// connection). Subtract two samples to get a phase's cost.
type ProcStats struct {
	Processes int // live processes summed
	// CPU seconds, including children that already exited and were reaped
	// (the kernel adds those to their parent's cutime/cstime).
	UserSeconds   float64
	SystemSeconds float64
	CPUSeconds    float64 // UserSeconds + SystemSeconds
	// RSSBytes sums VmRSS, which counts shared memory (PostgreSQL's
	// shared_buffers) once per process; PSSBytes splits shared pages between
	// their users and so is the fair total (0 when smaps_rollup is missing).
	RSSBytes     uint64
	PSSBytes     uint64
	PeakRSSBytes uint64 // sum of VmHWM: an upper bound of the peak
	// Bytes the processes made the storage layer read and write
	// (/proc/PID/io read_bytes, write_bytes), reaped children included.
	ReadBytes  uint64
	WriteBytes uint64
}

// clockTicks is USER_HZ, 100 on every Linux platform Go supports; /proc
// reports CPU time in these ticks.
const clockTicks = 100

// Stats samples the server's resource use from /proc (Linux only).
func (s *Server) Stats() (ProcStats, error) {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil || p.exited() {
		return ProcStats{}, fmt.Errorf("stats %s: server is not running", s.Kind)
	}
	var st ProcStats
	for _, ref := range processTree(p.cmd.Process.Pid) {
		ps, err := readProc(ref.pid)
		if err != nil {
			continue // exited meanwhile; its time moved to its parent
		}
		st.Processes++
		st.UserSeconds += ps.user
		st.SystemSeconds += ps.system
		st.RSSBytes += ps.rss
		st.PSSBytes += ps.pss
		st.PeakRSSBytes += ps.hwm
		st.ReadBytes += ps.readBytes
		st.WriteBytes += ps.writeBytes
	}
	if st.Processes == 0 {
		return ProcStats{}, fmt.Errorf("stats %s: cannot read /proc/%d", s.Kind, p.cmd.Process.Pid)
	}
	st.CPUSeconds = st.UserSeconds + st.SystemSeconds
	return st, nil
}

// PIDs returns the server process and its live descendants (PostgreSQL's
// backends and workers), nil when it is not running.
func (s *Server) PIDs() []int {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil || p.exited() {
		return nil
	}
	var pids []int
	for _, r := range processTree(p.cmd.Process.Pid) {
		if r.alive() {
			pids = append(pids, r.pid)
		}
	}
	return pids
}

type procSample struct {
	user, system                         float64
	rss, pss, hwm, readBytes, writeBytes uint64
}

func readProc(pid int) (procSample, error) {
	var ps procSample
	f, err := readStat(pid)
	if err != nil {
		return ps, err
	}
	// Fields after the command: state(0) ppid(1) ... utime(11) stime(12)
	// cutime(13) cstime(14) ... starttime(19).
	ticks := func(i int) float64 {
		v, _ := strconv.ParseFloat(f[i], 64)
		return v / clockTicks
	}
	ps.user = ticks(11) + ticks(13)
	ps.system = ticks(12) + ticks(14)
	status := keyValues(filepath.Join("/proc", strconv.Itoa(pid), "status"), ":")
	ps.rss = kib(status["VmRSS"])
	ps.hwm = kib(status["VmHWM"])
	ps.pss = kib(keyValues(filepath.Join("/proc", strconv.Itoa(pid), "smaps_rollup"), ":")["Pss"])
	io := keyValues(filepath.Join("/proc", strconv.Itoa(pid), "io"), ":")
	ps.readBytes, _ = strconv.ParseUint(io["read_bytes"], 10, 64)
	ps.writeBytes, _ = strconv.ParseUint(io["write_bytes"], 10, 64)
	return ps, nil
}

// readStat returns the fields of /proc/PID/stat after "(comm)", which may
// itself contain spaces and parentheses.
func readStat(pid int) ([]string, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, errors.New("malformed stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return nil, errors.New("short stat")
	}
	return f, nil
}

func keyValues(path, sep string) map[string]string {
	m := map[string]string{}
	f, err := os.Open(path)
	if err != nil {
		return m
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), sep); ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}

func kib(v string) uint64 {
	n, _ := strconv.ParseUint(strings.TrimSuffix(v, " kB"), 10, 64)
	return n * 1024
}

// procRef names a process robustly: a PID plus its start time, so a PID
// reused after exit is not mistaken for it.
type procRef struct {
	pid   int
	start string
}

// processTree returns root and all its descendants.
func processTree(root int) []procRef {
	children := map[int][]int{}
	starts := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, err := readStat(pid)
		if err != nil {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], pid)
		starts[pid] = f[19]
	}
	if _, ok := starts[root]; !ok {
		return []procRef{{pid: root}} // no /proc: the root alone
	}
	var tree []procRef
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		tree = append(tree, procRef{pid: pid, start: starts[pid]})
		queue = append(queue, children[pid]...)
	}
	return tree
}

// alive reports whether the process still exists and is not a zombie.
func (r procRef) alive() bool {
	f, err := readStat(r.pid)
	if err != nil {
		if r.start == "" { // no /proc: ask the kernel
			return syscall.Kill(r.pid, 0) == nil
		}
		return false
	}
	return f[0] != "Z" && (r.start == "" || f[19] == r.start)
}

func killTree(tree []procRef) {
	for _, r := range tree {
		if r.alive() {
			_ = syscall.Kill(r.pid, syscall.SIGKILL)
		}
	}
}

// waitGone waits until no process of tree is alive, up to timeout.
func waitGone(tree []procRef, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		gone := true
		for _, r := range tree {
			if r.alive() {
				gone = false
				break
			}
		}
		if gone {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// parseCPUList parses a Linux CPU list such as "0", "0-1" or "0,2-3".
func parseCPUList(list string) ([]int, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var cpus []int
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a || b >= 1024 {
			return nil, fmt.Errorf("bad CPU list %q: want e.g. 0 or 0-1,3", list)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

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

	// CPUSeconds is the CPU time used so far: every thread of every live
	// process (threads that already exited included), plus children that
	// exited and were reaped (PostgreSQL backends of closed connections).
	//
	// Live processes are read to the nanosecond from their process CPU clock
	// (clock_gettime of the pid's CPUCLOCK_SCHED: the scheduler's
	// sum_exec_runtime over all its threads, exited ones included, the
	// running slice brought up to date). If that clock cannot be read, the
	// sum of /proc/PID/task/*/schedstat (the same nanoseconds, live threads
	// only), and if that is absent too (a kernel without CONFIG_SCHED_INFO),
	// utime+stime of /proc/PID/stat in 10 ms ticks, and CPUCoarse is set.
	// Reaped children always come from their parent's cutime+cstime, in
	// ticks: that part has 10 ms resolution per parent (the kernel adds each
	// reaped child's exact time, the file truncates the total).
	CPUSeconds float64
	// CPUCoarse reports that the time of some live process came from 10 ms
	// ticks (see CPUSeconds): small differences are then quantised.
	CPUCoarse bool
	// UserSeconds and SystemSeconds split CPU time between user and kernel
	// mode, from /proc/PID/stat (utime+cutime, stime+cstime): 10 ms ticks,
	// and the kernel's split is itself estimated from tick samples. Use them
	// for the proportion over long phases, not for small differences; their
	// sum is close to, but not, CPUSeconds.
	UserSeconds   float64
	SystemSeconds float64

	// RSSBytes sums VmRSS, which counts shared memory (PostgreSQL's
	// shared_buffers) once per process; PSSBytes splits shared pages between
	// their users and so is the fair total (0 when smaps_rollup is missing).
	RSSBytes     uint64
	PSSBytes     uint64
	PeakRSSBytes uint64 // sum of VmHWM: an upper bound of the peak

	// ReadBytes is what the processes made the storage layer fetch from
	// devices (/proc/PID/io read_bytes), reaped children included.
	ReadBytes uint64
	// WriteBytes is /proc/PID/io write_bytes summed, reaped children
	// included (the kernel folds them into the parent's figure, and exited
	// threads into their process's). It counts page-cache dirtying, not
	// device traffic: the kernel charges a whole folio each time a clean
	// folio is written to. Since ext4 caches files in large folios (Linux
	// 6.x), a file first written in big chunks sits in folios of up to
	// 256 KiB or more, and rewriting a few bytes of one after an fsync
	// charges the whole folio again. PostgreSQL zero-fills each WAL segment
	// with 256 KiB writes, so one synchronous commit (an 8 KiB WAL page
	// write + fdatasync) shows ~262,000 bytes here, while the device
	// receives ~8-16 KiB (measured on Linux 6.18, ext4). Compare stores by
	// WriteBytes only on the same kernel and filesystem, and prefer
	// DeviceWriteBytes for what reaches the disk. Writes cancelled before
	// writeback (a file truncated or deleted meanwhile) are still counted.
	WriteBytes uint64

	// Device is the block device holding the data dir ("vda", "nvme0n1p2"),
	// and DeviceWriteBytes what it has written so far (/sys/dev/block/M:m/
	// stat): the true disk traffic, filesystem journal included, but of the
	// whole device, so any other process writing to it counts too. "" and 0
	// when the data dir's filesystem has no block device of its own (tmpfs,
	// overlayfs, btrfs, NFS).
	Device           string
	DeviceWriteBytes uint64
}

// clockTicks is USER_HZ, 100 on every Linux platform Go supports; /proc
// reports CPU time in these ticks.
const clockTicks = 100

// Stats samples the server's resource use from /proc (Linux only).
func (s *Server) Stats() (ProcStats, error) {
	p := s.live()
	if p == nil {
		return ProcStats{}, fmt.Errorf("stats %s: server is not running", s.Kind)
	}
	var st ProcStats
	for _, ref := range processTree(p.cmd.Process.Pid) {
		ps, err := readProc(ref.pid)
		if err != nil {
			continue // exited meanwhile; its time moved to its parent
		}
		st.add(ps)
	}
	if st.Processes == 0 {
		return ProcStats{}, fmt.Errorf("stats %s: cannot read /proc/%d", s.Kind, p.cmd.Process.Pid)
	}
	st.Device, st.DeviceWriteBytes = deviceWrites(s.DataDir)
	return st, nil
}

// PIDs returns the server process and its live descendants (PostgreSQL's
// backends and workers), nil when it is not running.
func (s *Server) PIDs() []int {
	p := s.live()
	if p == nil {
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

// SamplePIDs returns the server and its descendants, as PIDs does (zombies
// not yet reaped included), for sampling them often: it follows the
// kernel's children lists (/proc/PID/task/TID/children), a read per thread
// of the server (0.1 ms for Redis) instead of one per process on the
// machine (1-2 ms with 100 processes). The kernel does not promise those
// lists are complete while children start or exit, so it is not for
// signalling. Without them (no CONFIG_PROC_CHILDREN) it is PIDs.
func (s *Server) SamplePIDs() []int {
	p := s.live()
	if p == nil {
		return nil
	}
	if pids, ok := childrenTree(p.cmd.Process.Pid); ok {
		return pids
	}
	return s.PIDs()
}

// childrenTree returns root and its descendants from the children lists;
// ok is false when root's own list cannot be read.
func childrenTree(root int) (pids []int, ok bool) {
	r := strconv.Itoa(root)
	if _, err := os.Stat(filepath.Join("/proc", r, "task", r, "children")); err != nil {
		return nil, false
	}
	seen := map[int]bool{root: true} // guards against a PID reused meanwhile
	pids = []int{root}
	for i := 0; i < len(pids); i++ {
		dir := filepath.Join("/proc", strconv.Itoa(pids[i]), "task")
		tasks, _ := os.ReadDir(dir) // nil when it exited meanwhile
		for _, t := range tasks {
			b, _ := os.ReadFile(filepath.Join(dir, t.Name(), "children"))
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
					seen[pid] = true
					pids = append(pids, pid)
				}
			}
		}
	}
	return pids, true
}

// add sums o's processes into s; the device's fields, which are not per
// process, stay the caller's.
func (s *ProcStats) add(o ProcStats) {
	s.Processes += o.Processes
	s.CPUSeconds += o.CPUSeconds
	s.CPUCoarse = s.CPUCoarse || o.CPUCoarse
	s.UserSeconds += o.UserSeconds
	s.SystemSeconds += o.SystemSeconds
	s.RSSBytes += o.RSSBytes
	s.PSSBytes += o.PSSBytes
	s.PeakRSSBytes += o.PeakRSSBytes
	s.ReadBytes += o.ReadBytes
	s.WriteBytes += o.WriteBytes
}

// readProc is one process's resource use (Processes 1, no device).
func readProc(pid int) (ProcStats, error) {
	ps := ProcStats{Processes: 1}
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
	ps.UserSeconds = ticks(11) + ticks(13)
	ps.SystemSeconds = ticks(12) + ticks(14)
	ps.CPUSeconds = ticks(13) + ticks(14) // reaped children: ticks only
	if ns, ok := processCPUNanos(pid); ok {
		ps.CPUSeconds += float64(ns) / 1e9
	} else if ns, ok := schedstatNanos(pid); ok {
		ps.CPUSeconds += float64(ns) / 1e9
	} else {
		ps.CPUSeconds += ticks(11) + ticks(12)
		ps.CPUCoarse = true
	}
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	status := keyValues(filepath.Join(dir, "status"), ":")
	ps.RSSBytes = kib(status["VmRSS"])
	ps.PeakRSSBytes = kib(status["VmHWM"])
	ps.PSSBytes = kib(keyValues(filepath.Join(dir, "smaps_rollup"), ":")["Pss"])
	io := keyValues(filepath.Join(dir, "io"), ":")
	ps.ReadBytes, _ = strconv.ParseUint(io["read_bytes"], 10, 64)
	ps.WriteBytes, _ = strconv.ParseUint(io["write_bytes"], 10, 64)
	return ps, nil
}

// schedstatNanos sums the CPU time of the live threads of process pid, in
// nanoseconds: the first field of /proc/PID/task/TID/schedstat. ok is false
// when the kernel does not provide the file (or reports zeros everywhere, as
// it does with scheduler statistics disabled).
func schedstatNanos(pid int) (ns uint64, ok bool) {
	tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "schedstat"))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // thread exited meanwhile
		}
		f := strings.Fields(string(b))
		if len(f) < 3 {
			continue
		}
		v, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			continue
		}
		ns += v
		// A thread that ran has run_delay or a run count; all-zero lines
		// mean the statistics are switched off, not an idle thread.
		ok = ok || f[0] != "0" || f[2] != "0"
	}
	return ns, ok
}

// readStat returns the fields of /proc/PID/stat after "(comm)", which may
// itself contain spaces and parentheses.
func readStat(pid int) ([]string, error) {
	return readStatFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
}

// readStatFile reads a stat file of /proc (a process's or one thread's,
// /proc/PID/task/TID/stat) as readStat does.
func readStatFile(path string) ([]string, error) {
	b, err := os.ReadFile(path)
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

// formatCPUList writes sorted CPUs as a Linux CPU list: 0-3,6.
func formatCPUList(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		} else {
			parts = append(parts, strconv.Itoa(cpus[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

package server

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr puts a child in its own process group and has the kernel
// SIGKILL it when storebench dies, even by SIGKILL, so no server outlives us.
// Go applies Pdeathsig after dropping privileges, so the credential change
// does not clear it (mariadbd --user would).
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
}

// startPinned starts cmd with the CPU affinity cpus (nil: unchanged). The
// child inherits the affinity of the thread that forks it, so setting it on
// our locked thread around Start pins the server from its first instruction,
// including threads and children it creates during startup, which setting
// it on the PID afterwards would miss.
func startPinned(cmd *exec.Cmd, cpus []int) error {
	if len(cpus) == 0 {
		return cmd.Start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return err
	}
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return err
	}
	err := cmd.Start()
	// Restoring our own previous mask cannot reasonably fail; if it did, this
	// thread would merely stay pinned. It must not exit (by staying locked):
	// Pdeathsig fires when the thread that forked the child exits.
	_ = unix.SchedSetaffinity(0, &old)
	return err
}

// processCPUNanos reads the CPU clock of process pid (what
// clock_getcpuclockid(3) returns): the nanoseconds its threads have run,
// exited threads included, children not. Linux lets any process read another
// process's CPU clock, without ptrace rights.
func processCPUNanos(pid int) (int64, bool) {
	const cpuclockSched = 2 // CPUCLOCK_SCHED: sum_exec_runtime
	id := int32(^uint32(pid)<<3 | cpuclockSched)
	var ts unix.Timespec
	if err := unix.ClockGettime(id, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}

// deviceWrites returns the block device holding path and the bytes written
// to it so far; "" and 0 when path's filesystem has no block device (tmpfs,
// overlayfs and btrfs report an anonymous device number, major 0).
func deviceWrites(path string) (string, uint64) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", 0
	}
	major, minor := unix.Major(st.Dev), unix.Minor(st.Dev)
	if major == 0 {
		return "", 0
	}
	sys := fmt.Sprintf("/sys/dev/block/%d:%d", major, minor)
	b, err := os.ReadFile(filepath.Join(sys, "stat"))
	if err != nil {
		return "", 0
	}
	// Field 7 is sectors written, in 512-byte units whatever the device's
	// sector size (Documentation/block/stat.rst).
	f := strings.Fields(string(b))
	if len(f) < 7 {
		return "", 0
	}
	sectors, err := strconv.ParseUint(f[6], 10, 64)
	if err != nil {
		return "", 0
	}
	name := fmt.Sprintf("%d:%d", major, minor)
	if target, err := os.Readlink(sys); err == nil {
		name = filepath.Base(target)
	}
	return name, sectors * 512
}

// startAffinity is the CPU set this process was started with, read once
// before anything (such as --client-cpus) narrows the process's own mask:
// that is what a server may be given.
var startAffinity, startAffinityErr = func() (unix.CPUSet, error) {
	var set unix.CPUSet
	return set, unix.SchedGetaffinity(0, &set)
}()

// checkCPUs refuses CPUs this process was not allowed to run on when it
// started: the kernel would silently pin the server to the remaining ones
// only (or fail late if none).
func checkCPUs(cpus []int) error {
	if len(cpus) == 0 {
		return nil
	}
	if startAffinityErr != nil {
		return startAffinityErr
	}
	allowed := startAffinity
	var bad, ok []int
	for _, c := range cpus {
		if !allowed.IsSet(c) {
			bad = append(bad, c)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	for c := range 1024 {
		if allowed.IsSet(c) {
			ok = append(ok, c)
		}
	}
	return fmt.Errorf("CPUs %s are not available here: storebench may use CPUs %s", formatCPUList(bad), formatCPUList(ok))
}

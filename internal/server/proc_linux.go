package server

import (
	"os/exec"
	"runtime"
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

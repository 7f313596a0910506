//go:build !linux

package server

import (
	"errors"
	"os/exec"
	"syscall"
)

// sysProcAttr puts a child in its own process group. Outside Linux there is
// no parent-death signal: StopAll on exit is the only cleanup.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: cred}
}

func startPinned(cmd *exec.Cmd, cpus []int) error {
	if len(cpus) > 0 {
		return errors.New("CPU pinning is only supported on Linux")
	}
	return cmd.Start()
}

func processCPUNanos(int) (int64, bool) { return 0, false }

func deviceWrites(string) (string, uint64) { return "", 0 }

func checkCPUs(cpus []int) error {
	if len(cpus) > 0 {
		return errors.New("CPU pinning is only supported on Linux")
	}
	return nil
}

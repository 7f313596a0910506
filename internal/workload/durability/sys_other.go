//go:build !linux

package durability

import "syscall"

// childSysProcAttr: see sys_linux.go; without Pdeathsig outside Linux.
func childSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func filesystem(string) string { return "" }

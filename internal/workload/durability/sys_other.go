//go:build !linux

package durability

import "syscall"

func childSysProcAttr() *syscall.SysProcAttr { return nil }

func filesystem(string) string { return "" }

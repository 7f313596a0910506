package pollio

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// ReadsPerOp runs op n times and returns the read(2) calls this process
// made per run, the failed ones included (Linux's /proc/self/io syscr):
// how the store tests check that an exchange reads once. It stops at op's
// first error.
func ReadsPerOp(n int, op func() error) (float64, error) {
	before, err := readCalls()
	if err != nil {
		return 0, err
	}
	for range n {
		if err := op(); err != nil {
			return 0, err
		}
	}
	after, err := readCalls()
	return float64(after-before) / float64(n), err
}

// readCalls is this process's read(2) calls so far.
func readCalls() (int64, error) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("syscr: ")); ok {
			return strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/self/io has no syscr:\n%s", b)
}

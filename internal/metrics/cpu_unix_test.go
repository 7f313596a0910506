//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package metrics

import "testing"

func TestProcessCPU(t *testing.T) {
	a, ok := ProcessCPU()
	if !ok {
		t.Fatal("getrusage gave no process CPU")
	}
	x := 0
	for i := range 20_000_000 {
		x += i % 7
	}
	b, _ := ProcessCPU()
	if b <= a {
		t.Fatalf("CPU did not advance: %v -> %v (%d)", a, b, x)
	}
}

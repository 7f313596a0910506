package cli

import (
	"runtime"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// cannotPin lets a scenario's pin through where the process may run on its
// CPUs (even outside the calling thread's current mask, which a taskset
// narrows but does not fence), and leaves a list that does not parse to
// parseCPUList; it never changes the caller's mask.
func TestCannotPin(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	for _, list := range []string{"0", strconv.Itoa(runtime.NumCPU() - 1), "0-" + strconv.Itoa(runtime.NumCPU()-1)} {
		if why := cannotPin(list); why != "" {
			t.Errorf("cannotPin(%q) = %q, want \"\" (no cpuset here)", list, why)
		}
	}
	if why := cannotPin("0-x"); why != "" {
		t.Errorf("a list that does not parse is parseCPUList's to report: %s", why)
	}
	var after unix.CPUSet
	if err := unix.SchedGetaffinity(0, &after); err != nil || after != before {
		t.Errorf("the caller's mask changed: %v → %v (%v)", before, after, err)
	}
}

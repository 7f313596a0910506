package run

import (
	"errors"
	"runtime"
	"strconv"
	"strings"
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

// A CPU list goes through the one parser (server.ParseCPUList): one past the
// CPU set's 1024 CPUs is an input error that says the limit, and one naming a
// CPU this machine lacks says which it has.
func TestCPUChoiceBounds(t *testing.T) {
	last := runtime.NumCPU() - 1
	for list, want := range map[string]string{
		"0-4000000000":            "--client-cpus: bad CPU list \"0-4000000000\": CPU 4000000000 is past 1023",
		strconv.Itoa(last + 1):    "this machine has CPUs 0-" + strconv.Itoa(last),
		"0-" + strconv.Itoa(last): "",
	} {
		_, err := cpuChoice{list: list, origin: "--client-cpus"}.cpus()
		if want == "" {
			if err != nil {
				t.Errorf("cpus(%q) = %v", list, err)
			}
			continue
		}
		if _, usage := errors.AsType[*InputError](err); !usage || !strings.Contains(err.Error(), want) {
			t.Errorf("cpus(%q) = %v, want an input error saying %q", list, err, want)
		}
	}
}

// pinProcess's restore gives the process back the mask it had: a run in a
// process that goes on (a test binary running many) must not leave it
// pinned (a later test found 1 CPU where the machine has 2).
func TestPinProcessRestores(t *testing.T) {
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	restore, err := pinProcess("0")
	if err != nil {
		t.Fatal(err)
	}
	var pinned unix.CPUSet
	if err := unix.SchedGetaffinity(0, &pinned); err != nil || pinned.Count() != 1 {
		t.Errorf("pinned to %d CPUs (%v), want 1", pinned.Count(), err)
	}
	restore()
	var after unix.CPUSet
	if err := unix.SchedGetaffinity(0, &after); err != nil || after != before {
		t.Errorf("after restore: %v, want %v (%v)", after, before, err)
	}
}

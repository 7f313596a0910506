package run

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/storebench/storebench/internal/server"
)

// canPin says whether CPU lists can be applied here (sched_setaffinity).
const canPin = true

// pinProcess restricts every thread of this process to the CPUs in list
// ("0", "0-1", "0,2"); threads created later inherit it from their creator.
// restore gives every thread the mask the calling thread had before: a run
// in a process that goes on (a test, a library user) leaves it as it was.
func pinProcess(list string) (restore func(), err error) {
	cpus, err := parseCPUList(list)
	if err != nil {
		return nil, err
	}
	var before, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		return nil, fmt.Errorf("read this process's CPUs: %v", err)
	}
	for _, c := range cpus {
		set.Set(c)
	}
	if err := setAffinity(&set); err != nil {
		return nil, fmt.Errorf("pin to CPUs %s: %v", list, err)
	}
	return func() { _ = setAffinity(&before) }, nil
}

// setAffinity gives every thread of this process the mask set. A thread
// the runtime starts while the list is walked, from a thread not yet
// reached, inherits the old mask and is not in the list: the walk repeats
// until it finds no thread it has not set (a few rounds at most; the
// runtime starts threads when a system call blocks its P, which a loaded
// machine makes more likely).
func setAffinity(set *unix.CPUSet) error {
	done := map[int]bool{}
	for range 10 {
		tasks, err := filepath.Glob("/proc/self/task/*")
		if err != nil || len(tasks) == 0 {
			return fmt.Errorf("list this process's threads: %v", err)
		}
		fresh := false
		for _, t := range tasks {
			tid, _ := strconv.Atoi(filepath.Base(t))
			if done[tid] {
				continue
			}
			fresh, done[tid] = true, true
			if err := unix.SchedSetaffinity(tid, set); err != nil && !os.IsNotExist(err) && err != unix.ESRCH {
				return err
			}
		}
		if !fresh {
			return nil
		}
	}
	return nil
}

// cannotPin says why this process cannot be pinned to list although its
// CPUs exist (a container's cpuset that leaves them out), or "" when it can,
// or when list does not parse (parseCPUList reports that). It tries on a
// thread of its own, which exits afterwards rather than keep a changed mask.
func cannotPin(list string) string {
	cpus, err := parseCPUList(list)
	if err != nil {
		return ""
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		errc <- unix.SchedSetaffinity(0, &set)
	}()
	if err := <-errc; err != nil {
		return fmt.Sprintf("this process cannot run on CPUs %s here (%v; a cpuset may leave them out)", list, err)
	}
	return ""
}

// parseCPUList reads "0-2,5" (server.ParseCPUList) and checks every CPU
// exists here.
func parseCPUList(list string) ([]int, error) {
	cpus, err := server.ParseCPUList(list)
	if err != nil {
		return nil, err
	}
	if n := runtime.NumCPU(); len(cpus) > 0 && slices.Max(cpus) >= n {
		return nil, fmt.Errorf("CPU list %q: this machine has CPUs 0-%d", list, n-1)
	}
	return cpus, nil
}

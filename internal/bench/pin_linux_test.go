package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// pinSelf restricts every thread of this process to the CPUs in list ("0",
// "0-1", "0,2"), as the CLI's --client-cpus does; threads and child
// processes (the tools) created later inherit it. It returns how to undo
// that and how many CPUs list names.
func pinSelf(list string) (restore func() error, n int, err error) {
	var set, old unix.CPUSet
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a {
			return nil, 0, fmt.Errorf("CPU list %q: write e.g. 0, 0-1 or 0,2", list)
		}
		for c := a; c <= b; c++ {
			set.Set(c)
		}
	}
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return nil, 0, err
	}
	if err := setAffinity(&set); err != nil {
		return nil, 0, fmt.Errorf("pin to CPUs %s: %v", list, err)
	}
	return func() error { return setAffinity(&old) }, set.Count(), nil
}

// setAffinity sets the CPU mask of every thread of this process.
func setAffinity(set *unix.CPUSet) error {
	tasks, err := filepath.Glob("/proc/self/task/*")
	if err != nil || len(tasks) == 0 {
		return fmt.Errorf("list this process's threads: %v", err)
	}
	for _, t := range tasks {
		tid, _ := strconv.Atoi(filepath.Base(t))
		if err := unix.SchedSetaffinity(tid, set); err != nil && !os.IsNotExist(err) && err != unix.ESRCH {
			return err
		}
	}
	return nil
}

package run

import (
	"cmp"
	"runtime"
	"slices"
)

// cpuChoice is one side's CPU pinning for a run.
type cpuChoice struct {
	list    string // "" is unpinned
	origin  string // where list came from, for errors: a flag or file: field
	dropped string // the scenario's list, when it cannot be applied here,
	why     string // and why
}

// cpus parses the list, distinct CPUs in order; none when unpinned.
func (c cpuChoice) cpus() ([]int, error) {
	if c.list == "" {
		return nil, nil
	}
	cpus, err := parseCPUList(c.list)
	if err != nil {
		return nil, inputf("%s: %v", c.origin, err)
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// pickCPUs takes the flag's list, else the scenario's. Where the scenario's
// cannot be applied (not Linux, or CPUs a cpuset leaves out) it is dropped,
// to be said, rather than refusing a suite; a flag still fails there.
func pickCPUs(flagList, flag, scenarioList, field, source string) cpuChoice {
	switch {
	case flagList == Unpinned:
		return cpuChoice{}
	case flagList != "":
		return cpuChoice{list: flagList, origin: flag}
	case scenarioList == "":
		return cpuChoice{}
	case !canPin:
		return cpuChoice{dropped: field + " " + scenarioList, why: "pinning to CPUs needs Linux"}
	}
	if why := cannotPin(scenarioList); why != "" {
		return cpuChoice{dropped: field + " " + scenarioList, why: why}
	}
	return cpuChoice{list: scenarioList, origin: source + ": " + field}
}

// clientThreads is the GOMAXPROCS a run uses: --client-threads, else the
// scenario's client_threads, else one per pinned client CPU (the runtime
// would notice the new mask only later), else the runtime's own choice.
// The result records it.
func clientThreads(option *int, scenarioThreads, pinnedCPUs int) int {
	var asked int
	if option != nil {
		asked = *option
	}
	return cmp.Or(asked, scenarioThreads, pinnedCPUs, runtime.GOMAXPROCS(0))
}

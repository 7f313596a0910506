// Package owner tells which storebench process made a directory or a
// namespace, and whether that process still runs. A run that is killed
// (SIGKILL, a power cut) cannot remove what it made; what it made carries
// its owner, so a later process can find it, tell it from a live run's and
// remove it (storebench clean) without ever touching a live run's data.
//
// An owner is a process: its host, its boot, its pid and the kernel's start
// time of that pid, so that a pid reused by another process after the owner
// died is not taken for the owner.
package owner

import (
	"os"
	"strconv"
	"strings"
	"sync"
)

// Process identifies one running (or once running) process.
type Process struct {
	Host string `json:"host"`
	// Boot is the kernel's boot id (Linux); a reboot ends every process.
	Boot string `json:"boot_id,omitempty"`
	PID  int    `json:"pid"`
	// Start is when the process started, in clock ticks after boot (Linux);
	// 0 where the system does not say.
	Start uint64 `json:"start_ticks,omitempty"`
}

// State is what can be told about an owner from here.
type State int

const (
	// Unknown: the owner ran on another host, or recorded no process
	// (an older storebench): nothing here can tell whether it still runs.
	Unknown State = iota
	// Alive: the owner still runs; its data is in use.
	Alive
	// Dead: the owner is gone; what it made is left over.
	Dead
)

func (s State) String() string {
	switch s {
	case Alive:
		return "running"
	case Dead:
		return "gone"
	}
	return "unknown"
}

// Self is this process. It is read once: none of it changes while the
// process runs.
var Self = sync.OnceValue(func() Process {
	host, _ := os.Hostname()
	p := Process{Host: host, Boot: bootID(), PID: os.Getpid()}
	p.Start, _, _ = procStart(p.PID)
	return p
})

// State tells whether p still runs, and why it is taken to be so.
func (p Process) State() (State, string) {
	self := Self()
	switch {
	case p.PID <= 0:
		return Unknown, "no owner recorded"
	case p.Host != self.Host:
		return Unknown, "made on host " + p.Host
	case p.Boot != "" && self.Boot != "" && p.Boot != self.Boot:
		return Dead, "the machine restarted since"
	}
	return pidState(p.PID, p.Start)
}

// pidState tells whether pid is the process that started at start (0: any).
func pidState(pid int, start uint64) (State, string) {
	got, running, known := procStart(pid)
	switch {
	case !known:
		return Unknown, "cannot check pid " + strconv.Itoa(pid) + " here"
	case !running:
		return Dead, "pid " + strconv.Itoa(pid) + " gone"
	case start != 0 && got != 0 && got != start:
		return Dead, "pid " + strconv.Itoa(pid) + " gone (now another process)"
	}
	return Alive, "pid " + strconv.Itoa(pid) + " running"
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

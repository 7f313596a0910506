package server

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Pause stops every process of the server with SIGSTOP, as a long GC pause,
// a swapped-out VM or a debugger would: connections stay open and nothing
// answers until Resume. It signals the process tree, as Kill does, not the
// process group: PostgreSQL's backends each lead a group of their own. The
// root stops first, at once, so it cannot fork a child that would escape.
// It returns what was signalled, for the record.
func (s *Server) Pause() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.proc.exited() {
		return "", fmt.Errorf("pause %s: the server is not running", s.Kind)
	}
	root := s.proc.cmd.Process.Pid
	if err := syscall.Kill(root, syscall.SIGSTOP); err != nil {
		return "", fmt.Errorf("pause %s: SIGSTOP to pid %d: %w", s.Kind, root, err)
	}
	tree := processTree(root)
	children := 0
	for _, r := range tree[1:] {
		if r.alive() && syscall.Kill(r.pid, syscall.SIGSTOP) == nil {
			children++
		}
	}
	var what string
	switch children {
	case 0:
		what = fmt.Sprintf("SIGSTOP to %s pid %d (no child processes)", s.Kind, root)
	case 1:
		what = fmt.Sprintf("SIGSTOP to %s pid %d and its child process", s.Kind, root)
	default:
		what = fmt.Sprintf("SIGSTOP to %s pid %d and its %d child processes", s.Kind, root, children)
	}
	if !waitStopped(tree, stopWait) {
		what += fmt.Sprintf(" (not every thread had stopped %v later)", stopWait)
	}
	return what, nil
}

// stopWait bounds how long Pause waits for the stop to take: a thread
// stops when it next returns to user space, which a thread in an
// uninterruptible wait (disk I/O) may not do at once.
const stopWait = time.Second

// waitStopped waits until every thread of every process in tree is
// stopped (or gone), at most d. SIGSTOP is delivered asynchronously: kill
// returns before a thread running on another CPU has stopped, so without
// the wait a request sent right after Pause could still be answered
// (memcached's TestDeadlineOnAStuckServer failed about once in 12 runs).
func waitStopped(tree []procRef, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if allStopped(tree) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

func allStopped(tree []procRef) bool {
	for _, r := range tree {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", r.pid))
		if err != nil {
			continue // gone, or no /proc: nothing to wait for
		}
		for _, t := range tasks {
			f, err := readStatFile(fmt.Sprintf("/proc/%d/task/%s/stat", r.pid, t.Name()))
			if err != nil {
				continue // the thread exited
			}
			// State letters: T stopped, t traced, Z/X exiting; anything
			// else (R, S, D, ...) has not stopped yet.
			switch f[0] {
			case "T", "t", "Z", "X":
			default:
				return false
			}
		}
	}
	return true
}

// Resume continues every process of the server (SIGCONT), the root first,
// at once. SIGCONT does nothing to a process that runs, so every way out of
// a stall may call it, and Shutdown does before asking the server to stop.
func (s *Server) Resume() error {
	p := s.live()
	if p == nil {
		return nil
	}
	root := p.cmd.Process.Pid
	if err := syscall.Kill(root, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("resume %s: SIGCONT to pid %d: %w", s.Kind, root, err)
	}
	for _, r := range processTree(root)[1:] {
		_ = syscall.Kill(r.pid, syscall.SIGCONT) // a child that just exited
	}
	return nil
}

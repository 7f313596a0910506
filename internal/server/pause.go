package server

import (
	"errors"
	"fmt"
	"syscall"
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
	children := 0
	for _, r := range processTree(root)[1:] {
		if r.alive() && syscall.Kill(r.pid, syscall.SIGSTOP) == nil {
			children++
		}
	}
	switch children {
	case 0:
		return fmt.Sprintf("SIGSTOP to %s pid %d (no child processes)", s.Kind, root), nil
	case 1:
		return fmt.Sprintf("SIGSTOP to %s pid %d and its child process", s.Kind, root), nil
	}
	return fmt.Sprintf("SIGSTOP to %s pid %d and its %d child processes", s.Kind, root, children), nil
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

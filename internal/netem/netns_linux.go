package netem

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// listenInNetns opens a TCP listener on addr inside the named network
// namespace: on a locked thread it enters the namespace, creates the socket
// (which keeps its namespace wherever it is used from) and goes back. The
// thread must go back: it may be the main thread, which Go never ends, and
// /proc/self/net shows the main thread's namespace. Only if going back
// fails does the thread stay locked, so the runtime ends it (or parks the
// main thread) instead of running goroutines in the wrong namespace.
func listenInNetns(name, addr string) (net.Listener, error) {
	type result struct {
		ln  net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer orig.Close()
		f, err := os.Open(filepath.Join(netnsDir, name))
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: os.NewSyscallError("setns", err)}
			return
		}
		ln, err := net.Listen("tcp", addr)
		if berr := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); berr != nil {
			if ln != nil {
				ln.Close()
			}
			ch <- result{err: fmt.Errorf("back to the host's network namespace: %w", os.NewSyscallError("setns", berr))}
			return // still locked: see above
		}
		runtime.UnlockOSThread()
		ch <- result{ln, err}
	}()
	r := <-ch
	return r.ln, r.err
}

// pidAlive reports whether a process with this pid exists.
func pidAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// ownProcessGroup puts cmd in a process group of its own: a Ctrl-C at the
// terminal signals the whole foreground group, and must not kill the ip
// or tc commands of the clean-up that Ctrl-C starts.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

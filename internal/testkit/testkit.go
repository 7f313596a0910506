// Package testkit is the support of tests that run processes: the
// storebench binary built once per test binary, a started process with its
// output captured, its state in /proc, and the one polling loop (WaitFor,
// Eventually). Only tests import it (internal/arch); it imports none of
// storebench's packages, so a test of any floor can use it.
package testkit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// mainPkg is the package Binary builds: the module's one command.
const mainPkg = "github.com/storebench/storebench/cmd/storebench"

var build struct {
	sync.Mutex
	inMain bool   // Main runs the tests: it removes dir at exit
	done   bool   // built (or failed): at most one go build per test binary
	dir    string // the temp dir holding the binary
	bin    string
	err    error
}

// Main runs a package's tests and then removes the binary Binary built; a
// package whose tests call Binary calls it from TestMain. The binary is
// shared by every test of the test binary, so no single test's Cleanup may
// remove it: the first user's would run while later tests still need it.
func Main(m *testing.M) {
	build.Lock()
	build.inMain = true
	build.Unlock()
	code := m.Run()
	build.Lock()
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
	build.Unlock()
	os.Exit(code)
}

// Binary returns the path of the storebench binary, built on first use
// (once per test binary: a test binary that does not need it pays nothing).
// A failed build fails every test that asks.
func Binary(t testing.TB) string {
	t.Helper()
	build.Lock()
	defer build.Unlock()
	if !build.inMain {
		t.Fatal("testkit.Binary: call testkit.Main(m) from TestMain, which removes the binary at exit")
	}
	if !build.done {
		build.done = true
		build.bin, build.err = buildBinary()
		if build.bin != "" {
			build.dir = strings.TrimSuffix(build.bin, string(os.PathSeparator)+"storebench")
		}
	}
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.bin
}

func buildBinary() (string, error) {
	dir, err := os.MkdirTemp("", "storebench-bin-*")
	if err != nil {
		return "", err
	}
	bin := dir + string(os.PathSeparator) + "storebench"
	if out, err := exec.Command("go", "build", "-o", bin, mainPkg).CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("go build %s: %v\n%s", mainPkg, err, out)
	}
	return bin, nil
}

// Buffer is a bytes.Buffer safe to read while a process writes to it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Proc is a started process whose stdout and stderr are captured (unless
// the command set its own).
type Proc struct {
	Cmd            *exec.Cmd
	Stdout, Stderr *Buffer
	done           chan struct{}
	err            error // cmd.Wait's, once done is closed
}

// Start starts cmd and kills it (and reaps it) when t ends, if it is still
// running then.
func Start(t testing.TB, cmd *exec.Cmd) *Proc {
	t.Helper()
	p := &Proc{Cmd: cmd, Stdout: &Buffer{}, Stderr: &Buffer{}, done: make(chan struct{})}
	if cmd.Stdout == nil {
		cmd.Stdout = p.Stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = p.Stderr
	}
	if cmd.WaitDelay == 0 {
		// A grandchild left holding the output pipes must not keep Wait,
		// and so the test's cleanup, waiting once the process has exited.
		cmd.WaitDelay = 10 * time.Second
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-p.done })
	return p
}

// Signal sends sig to the process.
func (p *Proc) Signal(t testing.TB, sig os.Signal) {
	t.Helper()
	if err := p.Cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited, and its exit code (-1 when
// a signal ended it) and Wait's error other than an exit status.
func (p *Proc) Exited() (exited bool, code int, err error) {
	select {
	case <-p.done:
	default:
		return false, 0, nil
	}
	var ee *exec.ExitError
	switch {
	case p.err == nil:
		return true, 0, nil
	case errors.As(p.err, &ee):
		return true, ee.ExitCode(), nil
	default:
		return true, -1, p.err
	}
}

// WaitExit waits up to timeout for the process to exit and returns its exit
// code; it fails t, with the process's stderr, if it does not exit in time.
func (p *Proc) WaitExit(t testing.TB, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		t.Fatalf("%s did not exit within %v\nstderr: %s", p.Cmd.Path, timeout, p.Stderr)
	}
	_, code, err := p.Exited()
	if err != nil {
		t.Fatalf("wait for %s: %v", p.Cmd.Path, err)
	}
	return code
}

// ProcState is the state letter of /proc/PID/stat ("R", "S", "T" when
// stopped, "Z" ...), "" when the process is gone.
func ProcState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name in parentheses may hold spaces and ')': the state
	// follows the last ')'.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// Alive reports whether pid exists and is not a zombie: a zombie is dead
// for a test's purposes, though it shows until its parent reaps it.
func Alive(pid int) bool {
	st := ProcState(pid)
	return st != "" && st != "Z" && st != "X"
}

// WaitFor calls cond every step until it returns true, and at most until
// timeout has passed; it reports whether cond held. It is the one polling
// loop of the tests: a test that needs what it waited for in its failure
// message calls it, one that needs only the wait calls Eventually.
func WaitFor(timeout, step time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(step)
	}
}

// Eventually waits as WaitFor does and fails t, naming what it waited for,
// when cond did not hold within timeout.
func Eventually(t testing.TB, timeout, step time.Duration, what string, cond func() bool) {
	t.Helper()
	if !WaitFor(timeout, step, cond) {
		t.Fatalf("not within %v: %s", timeout, what)
	}
}

// Refused fails t unless a TCP connection to addr is refused: nothing
// listens there (a server said to have stopped has closed its port).
func Refused(t testing.TB, addr string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err == nil {
		c.Close()
		t.Errorf("%s still accepts connections", addr)
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial %s: %v, want connection refused", addr, err)
	}
}

// Get is the body of url, read whole; t fails unless the answer is 200 OK.
func Get(t testing.TB, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	return string(b)
}

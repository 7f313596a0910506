package testkit

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) { Main(m) }

// fakeT records a failure instead of ending the test, so a test can check
// that Eventually fails and what it says.
type fakeT struct {
	testing.TB
	failed string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = strings.TrimSpace(strings.ReplaceAll(format, "%v", "")) + " " + args[len(args)-1].(string)
}

func TestWaitFor(t *testing.T) {
	n := 0
	if !WaitFor(time.Second, time.Millisecond, func() bool { n++; return n == 3 }) || n != 3 {
		t.Errorf("WaitFor stopped after %d calls, want true at the 3rd", n)
	}
	start := time.Now()
	if WaitFor(30*time.Millisecond, 5*time.Millisecond, func() bool { return false }) {
		t.Error("WaitFor of a condition that never holds reported true")
	}
	if d := time.Since(start); d < 30*time.Millisecond || d > time.Second {
		t.Errorf("WaitFor gave up after %v, want its 30ms timeout", d)
	}
	f := &fakeT{TB: t}
	Eventually(f, 10*time.Millisecond, time.Millisecond, "the moon to turn blue", func() bool { return false })
	if !strings.Contains(f.failed, "the moon to turn blue") {
		t.Errorf("Eventually's failure %q does not name what it waited for", f.failed)
	}
	f.failed = ""
	Eventually(f, time.Second, time.Millisecond, "true", func() bool { return true })
	if f.failed != "" {
		t.Errorf("Eventually of a condition that holds failed: %s", f.failed)
	}
}

// A started process is seen stopped and running in /proc, its output is
// captured, a signal ends it, and WaitExit returns its exit code.
func TestProcess(t *testing.T) {
	p := Start(t, exec.Command("sh", "-c", `echo out; echo err >&2; trap 'exit 3' INT; while :; do sleep 0.01; done`))
	pid := p.Cmd.Process.Pid
	Eventually(t, 5*time.Second, time.Millisecond, "the shell's output", func() bool { return p.Stdout.String() == "out\n" && p.Stderr.String() == "err\n" })
	p.Signal(t, syscall.SIGSTOP)
	Eventually(t, 5*time.Second, time.Millisecond, "state T after SIGSTOP", func() bool { return ProcState(pid) == "T" })
	p.Signal(t, syscall.SIGCONT)
	Eventually(t, 5*time.Second, time.Millisecond, "running after SIGCONT", func() bool { return ProcState(pid) != "T" })
	if !Alive(pid) {
		t.Fatalf("pid %d not alive (state %q)", pid, ProcState(pid))
	}
	if exited, _, _ := p.Exited(); exited {
		t.Fatal("Exited before the process exited")
	}
	p.Signal(t, syscall.SIGINT)
	if code := p.WaitExit(t, 5*time.Second); code != 3 {
		t.Errorf("exit code %d, want the trap's 3", code)
	}
	if Alive(pid) || ProcState(pid) != "" {
		t.Errorf("pid %d alive after it was reaped (state %q)", pid, ProcState(pid))
	}
}

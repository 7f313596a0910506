package powercut

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/owner"
)

// fuseFDs are the descriptors of process pid (0: this one) open on
// /dev/fuse.
func fuseFDs(t *testing.T, pid int) []string {
	t.Helper()
	dir := "/proc/self/fd"
	if pid != 0 {
		dir = "/proc/" + strconv.Itoa(pid) + "/fd"
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var fds []string
	for _, de := range des {
		if target, err := os.Readlink(filepath.Join(dir, de.Name())); err == nil && target == "/dev/fuse" {
			fds = append(fds, de.Name())
		}
	}
	return fds
}

// The mount is served by another process: a process that serves its own
// mount deadlocks now and then (golang/go#21014), so this one must hold no
// /dev/fuse descriptor, and the mount's source must name the server.
func TestServedByAnotherProcess(t *testing.T) {
	_, mp := mountT(t)
	writeFile(t, filepath.Join(mp, "f"), "served", false) // the mount answers
	if fds := fuseFDs(t, 0); len(fds) != 0 {
		t.Errorf("this process holds /dev/fuse as fd %v: it serves the mount itself", fds)
	}
	srv := serverOf(t, mp)
	if srv.PID == os.Getpid() {
		t.Fatalf("the mount's source names this process (%d) as its server", srv.PID)
	}
	if state, _ := srv.State(); state != owner.Alive {
		t.Errorf("the server %d named by the mount's source is %v", srv.PID, state)
	}
	if fds := fuseFDs(t, srv.PID); len(fds) == 0 {
		t.Errorf("the server %d holds no /dev/fuse descriptor", srv.PID)
	}
}

// A server that dies mid-request is an error saying so with its stderr's
// last words, not a hang; the mount goes with it, and the next Unmount
// lets go.
func TestServerDeathIsAnError(t *testing.T) {
	f, mp := mountT(t)
	srv := serverOf(t, mp)
	_, err := f.call(context.Background(), request{Op: opExit})
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "exiting mid-request, as asked") {
		t.Fatalf("a server that exits mid-request: %v, want its exit status and stderr", err)
	}
	if mounted(t, mp) {
		t.Errorf("%s still mounted after its server died", mp)
	}
	if state, _ := srv.State(); state != owner.Dead {
		t.Errorf("the server is %v", state)
	}
	if err := f.SyncAll(); err != nil {
		t.Errorf("SyncAll without a server: %v, want nil (nothing is tracked)", err)
	}
	if _, err := f.Cut(context.Background()); err == nil || !strings.Contains(err.Error(), "serving process is gone") {
		t.Errorf("Cut without a server: %v, want it refused", err)
	}
	if err := f.Remount(context.Background()); err != nil {
		t.Errorf("Remount with a new server: %v", err)
	}
	writeFile(t, filepath.Join(mp, "f"), "served again", false)
}

// A server that does not answer within the caller's context is killed,
// and the call returns then.
func TestServerNotAnswering(t *testing.T) {
	f, mp := mountT(t)
	srv := serverOf(t, mp)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err := f.call(ctx, request{Op: opSleep, Wait: time.Hour})
	if !errors.Is(err, errServerGone) || !strings.Contains(err.Error(), "did not answer") {
		t.Errorf("a server that does not answer: %v, want it said", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("the call returned after %v, its context ended after 300ms", d)
	}
	if state, _ := srv.State(); state != owner.Dead {
		t.Errorf("the server that did not answer is %v, want it killed", state)
	}
	if mounted(t, mp) {
		t.Errorf("%s still mounted after its server was killed", mp)
	}
}

// SIGTERM (Pdeathsig's signal) makes the server unmount and exit; the
// next request says it is gone.
func TestServerSIGTERMUnmounts(t *testing.T) {
	f, mp := mountT(t)
	srv := serverOf(t, mp)
	if err := syscall.Kill(srv.PID, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the server to unmount", func() bool { return !mounted(t, mp) })
	waitFor(t, "the server to exit", func() bool { state, _ := srv.State(); return state == owner.Dead })
	if err := f.SyncAll(); !errors.Is(err, errServerGone) || !strings.Contains(err.Error(), "exit status 1") {
		t.Errorf("SyncAll after the server's SIGTERM: %v, want its exit said", err)
	}
}

// A server outlives no parent with the mount up: SIGKILL the process that
// mounted, and the server unmounts and exits by itself.
func TestParentDeathUnmounts(t *testing.T) {
	if err := requireFUSE(); err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	mp := filepath.Join(base, "mnt")
	for _, d := range []string{mp, filepath.Join(base, "backing")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	child := exec.Command(os.Args[0])
	child.Env = append(os.Environ(), mountingChildEnv+"="+mp)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unmountForce(mp) }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if line != "mounted\n" {
		child.Process.Kill()
		child.Wait()
		t.Fatalf("the child did not mount: %q %v", line, err)
	}
	srv := serverOf(t, mp)
	if srv.PID == child.Process.Pid {
		t.Fatalf("the child %d serves its mount itself", srv.PID)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	waitFor(t, "the server to unmount", func() bool { return !mounted(t, mp) })
	waitFor(t, "the server to exit", func() bool { state, _ := srv.State(); return state == owner.Dead })
}

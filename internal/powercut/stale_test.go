package powercut

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/owner"
)

func TestParseMountinfo(t *testing.T) {
	text := "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n" +
		"90 29 0:52 / /tmp/a\\040b rw,nosuid,nodev - fuse.storebench-powercut storebench:123:456 rw,user_id=0\n" +
		"91 29 0:53 / /x rw shared:7 master:2 - fuse.other src rw\n" +
		"garbage\n" +
		"92 29 0:54 / /y rw -\n"
	got := parseMountinfo(text)
	want := []mountEntry{
		{"/mnt2", "ext3", "/dev/root"},
		{"/tmp/a b", "fuse.storebench-powercut", "storebench:123:456"},
		{"/x", "fuse.other", "src"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("parseMountinfo:\n got %q\nwant %q", got, want)
	}
	for _, bad := range []string{"storebench:", "storebench:x:1", "storebench:0:1", "storebench:12", "other:1:2", "storebench:1:-2"} {
		if _, ok := mountOwner(bad); ok {
			t.Errorf("mountOwner(%q) accepted", bad)
		}
	}
	if p, ok := mountOwner("storebench:123:456"); !ok || p.PID != 123 || p.Start != 456 {
		t.Errorf("mountOwner: %+v %v", p, ok)
	}
}

// mountingChildEnv makes the test binary a child that mounts and waits to
// be killed (TestParentDeathUnmounts).
const mountingChildEnv = "POWERCUT_MOUNTING_CHILD"

func TestMain(m *testing.M) {
	if mp := os.Getenv(mountingChildEnv); mp != "" {
		if _, err := Mount(context.Background(), filepath.Join(filepath.Dir(mp), "backing"), mp); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("mounted")
		time.Sleep(time.Minute)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// A mount whose server was SIGKILLed is unmounted by CleanStale; a live
// server's mount is not.
func TestCleanStale(t *testing.T) {
	live, liveMP := mountT(t)
	base := filepath.Dir(liveMP)
	staleMP := filepath.Join(base, "stale")
	if err := os.Mkdir(staleMP, 0o700); err != nil {
		t.Fatal(err)
	}
	stale, err := Mount(context.Background(), filepath.Join(base, "backing"), staleMP)
	if err != nil {
		t.Fatal(err)
	}
	killServer(t, staleMP)
	if !mounted(t, staleMP) {
		t.Fatal("the killed server's mount is gone by itself: nothing stale to clean")
	}

	cleaned, err := CleanStale(base)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cleaned, []string{staleMP}) {
		t.Errorf("CleanStale cleaned %q, want only %q", cleaned, staleMP)
	}
	if mounted(t, staleMP) {
		t.Errorf("%s still mounted after CleanStale", staleMP)
	}
	if !mounted(t, live.Mountpoint()) {
		t.Errorf("CleanStale unmounted the live server's %s", live.Mountpoint())
	}
	if err := os.RemoveAll(staleMP); err != nil {
		t.Errorf("the stale mountpoint cannot be removed: %v", err)
	}
	// The FS whose server was killed says so once, then lets go.
	ctx := context.Background()
	if err := stale.Unmount(ctx); err == nil || !strings.Contains(err.Error(), "signal: killed") {
		t.Errorf("Unmount after the server was killed: %v, want the server's death", err)
	}
	if err := stale.Unmount(ctx); err != nil {
		t.Errorf("the second Unmount: %v", err)
	}
}

// killServer SIGKILLs the server of the mount at mp and waits for it to be
// gone.
func killServer(t *testing.T, mp string) {
	t.Helper()
	p := serverOf(t, mp)
	if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the killed server to be gone", func() bool { state, _ := p.State(); return state == owner.Dead })
}

// serverOf is the process that serves the mount at mp, from its source.
func serverOf(t *testing.T, mp string) owner.Process {
	t.Helper()
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range parseMountinfo(string(info)) {
		if m.point == mp {
			p, ok := mountOwner(m.source)
			if !ok {
				t.Fatalf("the mount at %s has source %q: no server named", mp, m.source)
			}
			return p
		}
	}
	t.Fatalf("%s is not mounted", mp)
	return owner.Process{}
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("waited 10s for %s", what)
		}
	}
}

func mounted(t *testing.T, p string) bool {
	t.Helper()
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(parseMountinfo(string(info)), func(m mountEntry) bool { return m.point == p })
}

package powercut

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
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

// staleChildEnv makes the test binary a child that mounts and waits to be
// killed (TestCleanStale).
const staleChildEnv = "POWERCUT_STALE_CHILD"

func TestMain(m *testing.M) {
	if mp := os.Getenv(staleChildEnv); mp != "" {
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

// A mount whose storebench was SIGKILLed is unmounted by CleanStale; a live
// process's mount is not.
func TestCleanStale(t *testing.T) {
	live, liveMP := mountT(t)
	base := filepath.Dir(liveMP)
	staleMP := filepath.Join(base, "stale")
	if err := os.Mkdir(staleMP, 0o700); err != nil {
		t.Fatal(err)
	}
	child := exec.Command(os.Args[0])
	child.Env = append(os.Environ(), staleChildEnv+"="+staleMP)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if line != "mounted\n" {
		child.Process.Kill()
		child.Wait()
		t.Fatalf("the child did not mount: %q %v", line, err)
	}
	child.Process.Kill()
	child.Wait()
	if !mounted(t, staleMP) {
		t.Fatal("the killed child's mount is gone by itself: nothing stale to clean")
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
		t.Errorf("CleanStale unmounted this live process's %s", live.Mountpoint())
	}
	if err := os.RemoveAll(staleMP); err != nil {
		t.Errorf("the stale mountpoint cannot be removed: %v", err)
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

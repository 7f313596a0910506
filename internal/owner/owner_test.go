package owner

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/store"
)

// deadPID is the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestProcessState(t *testing.T) {
	self := Self()
	if self.PID != os.Getpid() || self.Host == "" {
		t.Fatalf("Self() = %+v", self)
	}
	other := func(edit func(p *Process)) Process { p := self; edit(&p); return p }
	for _, tc := range []struct {
		name string
		p    Process
		want State
	}{
		{"this process", self, Alive},
		{"exited process", other(func(p *Process) { p.PID = deadPID(t) }), Dead},
		// The pid runs, but it is not the process that made the data: its
		// owner died and the pid was given to another one.
		{"pid reused", other(func(p *Process) { p.Start++ }), Dead},
		{"before a reboot", other(func(p *Process) { p.Boot = "another-boot" }), Dead},
		{"another host", other(func(p *Process) { p.Host += ".elsewhere"; p.PID = deadPID(t) }), Unknown},
		{"no owner", Process{}, Unknown},
	} {
		if self.Start == 0 && tc.name == "pid reused" {
			continue // no start time on this system: checked where /proc has one
		}
		if got, why := tc.p.State(); got != tc.want {
			t.Errorf("%s: State() = %v (%s), want %v", tc.name, got, why, tc.want)
		}
	}
}

func TestNamespace(t *testing.T) {
	made := time.Date(2026, 11, 24, 6, 13, 44, 0, time.UTC)
	ns := Namespace(made)
	if err := store.ValidNamespace(ns); err != nil {
		t.Fatal(err)
	}
	if ns == Namespace(made) {
		t.Errorf("two runs of one process in one second share namespace %s", ns)
	}
	o, ok := ParseNamespace(ns)
	if !ok || !o.Made.Equal(made) {
		t.Fatalf("ParseNamespace(%s) = %+v, %v", ns, o, ok)
	}
	if st, why := o.State(); st != Alive {
		t.Errorf("this process's namespace: %v (%s), want running", st, why)
	}
	// Every pid and start time this machine could have fits in 48 characters.
	long := "sb_" + made.Format(timeLayout) + "_" + hostTag("h") + "_4194304_" + strings.Repeat("z", 7) + "_ffff"
	if err := store.ValidNamespace(long); err != nil {
		t.Error(err)
	}

	self := Self()
	dead := "sb_20261124t061344_" + hostTag(self.Host) + "_" + strconv.Itoa(deadPID(t)) + "_1_abcd"
	elsewhere := "sb_20261124t061344_" + hostTag(self.Host+".elsewhere") + "_" + strconv.Itoa(self.PID) + "_1_abcd"
	for _, tc := range []struct {
		ns   string
		want State
	}{
		{dead, Dead},
		{elsewhere, Unknown},
		{"sb_20261124t061344_a1b2c3", Unknown}, // an older storebench's: the time only
	} {
		o, ok := ParseNamespace(tc.ns)
		if !ok {
			t.Errorf("ParseNamespace(%s) failed", tc.ns)
			continue
		}
		if got, why := o.State(); got != tc.want {
			t.Errorf("%s: %v (%s), want %v", tc.ns, got, why, tc.want)
		}
	}
	for _, bad := range []string{"", "sbt_5f2a9c01d3", "sb_mine", "public", "sb_20261124t061344_a1b2c3_kv", "sb_20261124t061344_a1b2c3d4_0_1_abcd", "sb_20261399t061344_a1b2c3"} {
		if o, ok := ParseNamespace(bad); ok {
			t.Errorf("ParseNamespace(%q) = %+v, want no storebench namespace", bad, o)
		}
	}
}

func TestMarker(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadMarker(dir); !errors.Is(err, ErrNoMarker) {
		t.Fatalf("unmarked dir: %v, want ErrNoMarker", err)
	}
	if err := Mark(dir, "run scratch dir"); err != nil {
		t.Fatal(err)
	}
	m, err := ReadMarker(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Process != Self() || m.What != "run scratch dir" || time.Since(m.Made) > time.Minute {
		t.Errorf("marker = %+v", m)
	}
	if err := Mark(dir, "again"); err == nil {
		t.Error("a second Mark overwrote the first")
	}
	junk := t.TempDir()
	if err := os.WriteFile(junk+"/"+MarkerFile, []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadMarker(junk); !errors.Is(err, ErrNoMarker) {
		t.Errorf("junk marker: %v, want ErrNoMarker", err)
	}
}

func TestMakeDir(t *testing.T) {
	base := t.TempDir()
	dir, err := MakeDir(base, "storebench-run-*", "run scratch dir")
	if err != nil {
		t.Fatal(err)
	}
	if m, err := ReadMarker(dir); err != nil || m.PID != os.Getpid() {
		t.Errorf("MakeDir's dir: marker %+v, %v", m, err)
	}
}

// FuzzParseNamespace: names read from a store (schemas, databases, keys)
// are anyone's; reading them never panics, and a name taken for a
// namespace carries the time it says.
func FuzzParseNamespace(f *testing.F) {
	for _, s := range []string{"", "sb_", "sb_20261124t061344_a1b2c3", "sb_20261124t061344_a1b2c3_kv",
		"sb_20261124t061344_a1b2c3d4_4242_1x2y_ab12", "sb_20261124t061344_a1b2c3d4_99999999999_1x2y_ab12",
		"sb_99999999t999999_a1b2c3", "sbt_5f2a9c01d3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		o, ok := ParseNamespace(name)
		if ok && (len(name) < 18 || o.Made.Format(timeLayout) != name[3:18]) {
			t.Fatalf("ParseNamespace(%q) = %+v", name, o)
		}
	})
}

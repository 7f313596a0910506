package server

import (
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/testkit"
)

// TestProcessCPUClock checks that the CPU clock read for another process is
// that process's, to the nanosecond: it agrees with the sum of its threads'
// schedstat once it has stopped running, and is not our own clock.
func TestProcessCPUClock(t *testing.T) {
	// Burn a little CPU, then sleep so the counters stop moving.
	pid := testkit.Start(t, exec.Command("sh", "-c", `i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; exec sleep 30`)).Cmd.Process.Pid
	testkit.Eventually(t, 20*time.Second, 20*time.Millisecond, "the child asleep in sleep(1)", func() bool {
		f, err := readStat(pid)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		return string(b) == "sleep\n" && f[0] == "S"
	})
	clock, ok := processCPUNanos(pid)
	if !ok || clock <= 0 {
		t.Fatalf("processCPUNanos(%d) = %d, %v", pid, clock, ok)
	}
	if own, _ := processCPUNanos(os.Getpid()); own == clock {
		t.Fatalf("read our own clock %d instead of the child's", own)
	}
	sched, ok := schedstatNanos(pid)
	if !ok {
		t.Fatalf("no /proc/%d/task/*/schedstat: this kernel lacks CONFIG_SCHED_INFO, which the CPU fallback needs", pid)
	}
	if d := clock - int64(sched); d < -int64(time.Millisecond) || d > int64(time.Millisecond) {
		t.Errorf("clock %d ns, schedstat %d ns: differ by %v", clock, sched, time.Duration(d))
	}
	t.Logf("child used %v of CPU (clock), %v (schedstat)", time.Duration(clock), time.Duration(sched))
}

func TestFormatCPUList(t *testing.T) {
	for in, want := range map[string]string{"0": "0", "0-3": "0-3", "0,2-3,5,7-9": "0,2-3,5,7-9", "": ""} {
		cpus, err := ParseCPUList(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := formatCPUList(cpus); got != want {
			t.Errorf("formatCPUList(ParseCPUList(%q)) = %q", in, got)
		}
	}
}

// TestChildrenTree checks the cheap walk of the kernel's children lists
// finds the same processes as the scan of /proc, two levels deep.
func TestChildrenTree(t *testing.T) {
	cmd := exec.Command("sh", "-c", `sh -c "sleep 30 & wait" & sleep 30 & wait`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	root := cmd.Process.Pid
	t.Cleanup(func() {
		killTree(processTree(root))
		_ = cmd.Wait()
	})
	var want []int
	if !testkit.WaitFor(5*time.Second, 10*time.Millisecond, func() bool {
		want = want[:0]
		for _, r := range processTree(root) {
			want = append(want, r.pid)
		}
		return len(want) >= 4
	}) {
		t.Fatalf("the test's process tree did not start: %v", want)
	}
	got, ok := childrenTree(root)
	if !ok {
		t.Fatal("no /proc/PID/task/TID/children here (CONFIG_PROC_CHILDREN)")
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("childrenTree = %v, processTree = %v", got, want)
	}
	if _, ok := childrenTree(1 << 30); ok {
		t.Error("childrenTree of a missing process reported ok")
	}
}

// TestProcStatsAddSumsEveryCounter: a node's or a process's stats added
// into a sum count every per-process field (a field add forgets would read
// as zero for clusters and multi-process servers), and leave the device's,
// which belong to the whole data dir, to the caller.
func TestProcStatsAddSumsEveryCounter(t *testing.T) {
	var one ProcStats
	v := reflect.ValueOf(&one).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.Int:
			f.SetInt(1)
		case reflect.Uint64:
			f.SetUint(1)
		case reflect.Float64:
			f.SetFloat(1)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.String:
			f.SetString("vda")
		default:
			t.Fatalf("field %s: kind %s not covered by this test", v.Type().Field(i).Name, f.Kind())
		}
	}
	var sum ProcStats
	sum.add(one)
	sum.add(one)
	s := reflect.ValueOf(sum)
	for i := range s.NumField() {
		name, f := s.Type().Field(i).Name, s.Field(i)
		if name == "Device" || name == "DeviceWriteBytes" {
			if !f.IsZero() {
				t.Errorf("%s = %v after add, want it left to the caller", name, f)
			}
			continue
		}
		want := map[reflect.Kind]any{reflect.Int: int64(2), reflect.Uint64: uint64(2), reflect.Float64: 2.0, reflect.Bool: true}[f.Kind()]
		var got any
		switch f.Kind() {
		case reflect.Int:
			got = f.Int()
		case reflect.Uint64:
			got = f.Uint()
		case reflect.Float64:
			got = f.Float()
		case reflect.Bool:
			got = f.Bool()
		}
		if got != want {
			t.Errorf("%s = %v after adding 1 twice, want %v", name, got, want)
		}
	}
}

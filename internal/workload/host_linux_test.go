package workload

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Where the open-file limit allows fewer connections than MaxClients, it
// bounds the clients, and the message says so.
func TestClientLimitFollowsTheOpenFileLimit(t *testing.T) {
	var was unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	lowered := was
	lowered.Cur = 1124
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lowered); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Setrlimit(unix.RLIMIT_NOFILE, &was) })
	n, why := ClientLimit()
	if n != 1024 || !strings.Contains(why, "may open 1124 files (ulimit -n)") {
		t.Errorf("limit %d (%s), want 1024 for ulimit -n 1124", n, why)
	}
	if err := CheckClients("clients", 2000); err == nil || !strings.Contains(err.Error(), "clients 2000: at most 1024: one connection each, and this process may open 1124 files") {
		t.Errorf("2000 clients under ulimit -n 1124: %v", err)
	}
}

func TestPhysicalMemoryIsKnown(t *testing.T) {
	budget, why := MemoryBudget()
	var info unix.Sysinfo_t
	if err := unix.Sysinfo(&info); err != nil {
		t.Fatal(err)
	}
	if ram := int64(info.Totalram) * int64(info.Unit); budget <= 0 || budget > ram/2 || !strings.Contains(why, "half of this machine's") {
		t.Errorf("budget %d (%s) for %d bytes of RAM", budget, why, ram)
	}
}

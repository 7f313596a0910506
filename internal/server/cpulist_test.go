package server_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/server"
)

// ParseCPUList is the one CPU-list parser (the CLI's pinning and the
// server's): it reads what taskset writes, and refuses a list past the CPU
// set's 1024 CPUs saying the limit and why, before expanding it; however
// long the list, each CPU comes once, in order.
func TestParseCPUList(t *testing.T) {
	every := make([]int, server.MaxCPUs)
	for c := range every {
		every[c] = c
	}
	for in, want := range map[string][]int{
		"":                                    nil,
		" ":                                   nil,
		"0":                                   {0},
		"0-1":                                 {0, 1},
		" 0 , 2-3 ":                           {0, 2, 3},
		"1023":                                {1023},
		"1020-1023,5":                         {5, 1020, 1021, 1022, 1023},
		"3,1-2,2":                             {1, 2, 3},
		strings.Repeat("0-1023,", 1000) + "0": every,
	} {
		got, err := server.ParseCPUList(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, wants := range map[string][]string{
		"1-0":                    {"bad CPU list", "write e.g."},
		"-1":                     {"bad CPU list", "write e.g."},
		"0,,1":                   {"bad CPU list", "write e.g."},
		"x":                      {"bad CPU list", "write e.g."},
		"1024":                   {"CPU 1024 is past 1023", "sched_setaffinity"},
		"0-4000000000":           {"CPU 4000000000 is past 1023", "sched_setaffinity"},
		"0-99999999999999999999": {"bad CPU list"},
	} {
		got, err := server.ParseCPUList(in)
		if err == nil {
			t.Errorf("ParseCPUList(%q) = %v, want an error", in, got)
			continue
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("ParseCPUList(%q) error %q does not say %q", in, err, w)
			}
		}
	}
}

// FuzzParseCPUList: whatever the list, ParseCPUList does not panic, and a
// list it accepts gives distinct CPUs in order within the set only, so no
// list, however long, expands past MaxCPUs entries.
func FuzzParseCPUList(f *testing.F) {
	for _, seed := range []string{"", " ", "0", "0-1", " 0 , 2-3 ", "1023", "1020-1023,5", "1-0", "-1", "0,,1", "x",
		"1024", "0-4000000000", "0-99999999999999999999", "0-1023,0-1023", "+1", "0x1", "1-", "-"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, list string) {
		cpus, err := server.ParseCPUList(list)
		if err != nil {
			if cpus != nil || !strings.HasPrefix(err.Error(), "bad CPU list ") {
				t.Fatalf("ParseCPUList(%q) = %v, %v", list, cpus, err)
			}
			return
		}
		for i, c := range cpus {
			if c < 0 || c >= server.MaxCPUs || i > 0 && c <= cpus[i-1] {
				t.Fatalf("ParseCPUList(%q) = %v: not distinct CPUs in order within 0-%d", list, cpus, server.MaxCPUs-1)
			}
		}
	})
}

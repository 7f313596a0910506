package server_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/server"
)

// ParseCPUList is the one CPU-list parser (the CLI's pinning and the
// server's): it reads what taskset writes, and refuses a list past the CPU
// set's 1024 CPUs saying the limit and why, before expanding it.
func TestParseCPUList(t *testing.T) {
	for in, want := range map[string][]int{
		"":            nil,
		" ":           nil,
		"0":           {0},
		"0-1":         {0, 1},
		" 0 , 2-3 ":   {0, 2, 3},
		"1023":        {1023},
		"1020-1023,5": {1020, 1021, 1022, 1023, 5},
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

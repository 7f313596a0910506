package scenario

import (
	"github.com/storebench/storebench/internal/workload/all"
	"strings"
	"testing"
	"time"
)

// TestNetworkLoad: rtt, jitter and bandwidth are read per workload, unset
// rtt means direct, and a network for an in-process store or jitter without
// rtt is an error naming the file and line, before any work.
func TestNetworkLoad(t *testing.T) {
	src := `name: net
targets: [redis]
workloads:
  - {type: hotkey, name: direct}
  - {type: hotkey, name: zero, load: {rtt: 0s}}
  - {type: hotkey, name: slow, load: {rtt: 2ms, jitter: 200us, bandwidth: 100mbit}}
load: {clients: 1}
`
	s, err := Parse("net.yaml", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	s.Defaults()
	if err := validate(s, registry()); err != nil {
		t.Fatal(err)
	}
	nets := map[string]string{}
	for _, w := range s.Workloads {
		n, err := s.EffectiveLoad(all.Types(), w).Network()
		if err != nil {
			t.Fatal(err)
		}
		nets[w.Label()] = "direct"
		if n != nil {
			nets[w.Label()] = n.String()
		}
	}
	want := map[string]string{"direct": "direct", "zero": "rtt 0s", "slow": "rtt 2ms ±200µs, 100mbit"}
	for k, v := range want {
		if nets[k] != v {
			t.Errorf("%s: network %q, want %q", k, nets[k], v)
		}
	}
	// The scenario's rtt applies to every workload; a workload's own beats it.
	over := Load{}.Overlay(&Load{RTT: ptrD(time.Millisecond)}).Overlay(&Load{Clients: 2})
	if over.RTT == nil || *over.RTT != Duration(time.Millisecond) {
		t.Errorf("overlay lost rtt: %+v", over)
	}

	for _, tc := range []struct{ src, want string }{
		{"name: x\ntargets: [memory]\nworkloads:\n  - {type: hotkey, load: {rtt: 1ms}}\n", "x.yaml:4: hotkey: store memory runs inside storebench's process"},
		{"name: x\ntargets: [redis]\nworkloads:\n  - {type: hotkey, load: {jitter: 1ms}}\n", "x.yaml:4: hotkey: jitter and bandwidth need an rtt"},
		{"name: x\ntargets: [redis]\nworkloads:\n  - {type: hotkey, load: {rtt: 1ms, bandwidth: fast}}\n", `bandwidth "fast"`},
		{"name: x\ntargets: [redis]\nworkloads:\n  - {type: hotkey, load: {rtt: 1ms, jitter: 2ms}}\n", "exceeds the rtt"},
		{"name: x\ntargets: [redis]\nworkloads:\n  - {type: hotkey, load: {rtt: soon}}\n", "x.yaml:4"},
	} {
		s, err := Parse("x.yaml", strings.NewReader(tc.src))
		if err == nil {
			s.Defaults()
			err = validate(s, registry())
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want %q", tc.src, err, tc.want)
		}
	}
}

func ptrD(d time.Duration) *Duration { v := Duration(d); return &v }

package capacity

import (
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/storebench/storebench/internal/hiccup"
	"github.com/storebench/storebench/internal/metrics"
	schema "github.com/storebench/storebench/internal/result/capacity"
)

// missedPhase is a 2-s open-loop phase at 1000 ops/s whose p99 is 20 ms
// (over a 10 ms objective), with the given client and server CPU and the
// hiccup meter's window.
func missedPhase(t *testing.T, clientCPUS, serverCPUS float64, late int64, h *hiccup.Window) metrics.Phase {
	t.Helper()
	hist := metrics.NewHistogram()
	for i := range 2000 {
		v := 200 * time.Microsecond
		if i%50 == 0 {
			v = 20 * time.Millisecond
		}
		if err := hist.RecordValue(int64(v)); err != nil {
			t.Fatal(err)
		}
	}
	p := metrics.Phase{Name: "step", Ops: 2000, DurationS: 2, ClientCPUS: clientCPUS, Server: &metrics.ServerCost{CPUS: serverCPUS},
		OpenLoop: &metrics.OpenLoop{TargetOpsS: 1000, ClientLateOps: late}, Hiccup: h}
	enc, err := hist.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	p.Histogram = string(enc)
	return p
}

// Each limiter is named from its evidence, in order: the platform's
// stalls when the hiccup meter woke as late as half the bound, other load
// when the machine was busier than the client and server together by half
// a CPU, the machine's CPUs when they were 80% busy or more with the
// client a third of it (late starts then are the machine's too; a server
// that held most of a full machine is the store), the client's scheduling
// when it started ops late with CPU to spare, else the store.
func TestLimiterFromEvidence(t *testing.T) {
	slo, err := ParseSLO("p99<=10ms")
	if err != nil {
		t.Fatal(err)
	}
	quiet := &hiccup.Window{Seconds: 2, All: hiccup.Figures{Wakes: 4000, P50: 60, P99: 300, P999: 900, Max: 1500}, MachineBusyCPUs: 0.5}
	stalled := &hiccup.Window{Seconds: 2, All: hiccup.Figures{Wakes: 4000, P50: 60, P99: 9800, P999: 12000, Max: 15000}, MachineBusyCPUs: 0.5}
	loaded := &hiccup.Window{Seconds: 2, All: quiet.All, MachineBusyCPUs: 1.9}
	// One 40 ms stall in 2 s: rare for the meter's p99, 1.5% of the ops held past 10 ms.
	once := &hiccup.Window{Seconds: 2, All: hiccup.Figures{Wakes: 4000, P50: 60, P99: 300, P999: 900, Max: 40000}, MachineBusyCPUs: 0.5}
	// One 25 ms stall: 0.75% of the ops, not enough for a p99 of 20 ms.
	brief := &hiccup.Window{Seconds: 2, All: hiccup.Figures{Wakes: 4000, P50: 60, P99: 300, P999: 900, Max: 25000}, MachineBusyCPUs: 0.5}
	// Short stalls in a cluster: none over 4 ms, 40 ms of them within 50 ms.
	cluster := &hiccup.Window{Seconds: 2, All: hiccup.Figures{Wakes: 4000, P50: 60, P99: 300, P999: 900, Max: 4000, BurstMs: 40}, MachineBusyCPUs: 0.5}
	two := []hiccup.Figures{{CPU: 0}, {CPU: 1}}
	full := &hiccup.Window{Seconds: 2, All: quiet.All, PerCPU: two, MachineBusyCPUs: 1.8}
	spare := &hiccup.Window{Seconds: 2, All: quiet.All, PerCPU: two, MachineBusyCPUs: 1.3}
	for _, c := range []struct {
		name      string
		phase     metrics.Phase
		want      string
		wantInWhy string
	}{
		{"stalls", missedPhase(t, 0.4, 0.4, 0, stalled), schema.LimiterPlatform, "this SLO measures the machine"},
		{"one long stall", missedPhase(t, 0.4, 0.4, 0, once), schema.LimiterPlatform, "the platform stalled once for 40ms (hiccup meter's max): the ops due in its first 30ms waited past 10ms, 1.5%"},
		{"a cluster of stalls", missedPhase(t, 0.4, 0.4, 0, cluster), schema.LimiterPlatform, "the platform held a CPU off for 40ms within 50ms (hiccup meter; its longest single stall 4ms): the ops due in its first 30ms waited past 10ms, 1.5%"},
		{"a shorter stall", missedPhase(t, 0.2, 0.3, 0, brief), schema.LimiterStore, "its server kept 0.15 CPUs busy"},
		{"other load", missedPhase(t, 0.4, 0.4, 0, loaded), schema.LimiterMachineLoad, "other processes kept 1.50 of the run's CPUs busy"},
		{"full machine", missedPhase(t, 1.6, 1.6, 100, full), schema.LimiterMachineCPUs, "the run's 2 CPUs were 90% busy (client 0.80, server 0.80 CPUs)"},
		{"full machine, the server's", missedPhase(t, 0.4, 3.0, 0, full), schema.LimiterStore, "its server kept 1.50 CPUs busy"},
		{"CPUs to spare", missedPhase(t, 1.2, 1.2, 0, spare), schema.LimiterStore, "its server kept 0.60 CPUs busy"},
		{"late starts", missedPhase(t, 0.4, 0.4, 100, quiet), schema.LimiterClientScheduling, "5.0% of ops started late"},
		{"store", missedPhase(t, 0.2, 0.3, 0, quiet), schema.LimiterStore, "its server kept 0.15 CPUs busy"},
	} {
		m := newMeasured(1000)
		if err := m.add(c.phase); err != nil {
			t.Fatal(err)
		}
		st, _ := m.judge(rules{connections: 4, slo: SLO{slo[0]}, ciShare: 0.1, errorBudget: 0.01})
		if st.Passed || st.Limiter != c.want || !contains(st.LimiterEvidence, c.wantInWhy) || !contains(st.Verdict, c.want) {
			t.Errorf("%s: limiter %q (%s), verdict %q; want %q saying %q", c.name, st.Limiter, st.LimiterEvidence, st.Verdict, c.want, c.wantInWhy)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// A cell behind a network path whose round trip is half the bound or more
// names the path: every request carries it.
func TestLimiterNamesTheNetworkPath(t *testing.T) {
	slo, err := ParseSLO("p99<=10ms")
	if err != nil {
		t.Fatal(err)
	}
	quiet := &hiccup.Window{Seconds: 2, All: hiccup.Figures{Wakes: 4000, P50: 60, P99: 300, P999: 900, Max: 1500}, MachineBusyCPUs: 0.5}
	for _, c := range []struct {
		rtt  time.Duration
		want string
	}{{6 * time.Millisecond, schema.LimiterNetwork}, {time.Millisecond, schema.LimiterStore}} {
		m := newMeasured(1000)
		if err := m.add(missedPhase(t, 0.2, 0.3, 0, quiet)); err != nil {
			t.Fatal(err)
		}
		st, _ := m.judge(rules{connections: 4, slo: SLO{slo[0]}, ciShare: 0.1, errorBudget: 0.01, rtt: c.rtt})
		if st.Limiter != c.want {
			t.Errorf("rtt %v: limiter %q (%s), want %q", c.rtt, st.Limiter, st.LimiterEvidence, c.want)
		}
	}
}

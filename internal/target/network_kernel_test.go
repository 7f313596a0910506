package target

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/netem"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
)

// namespaceExists reports whether the named network namespace and the
// host's link of that name exist, both or neither.
func namespaceExists(t *testing.T, name string) bool {
	t.Helper()
	_, err := os.Stat("/run/netns/" + name)
	ns := err == nil
	link := exec.Command("ip", "link", "show", "dev", name).Run() == nil
	if ns != link {
		t.Errorf("namespace %s exists: %v, its link: %v", name, ns, link)
	}
	return ns || link
}

// TestSetNetworkKernel runs a managed Redis and an external PostgreSQL
// through the kernel path (forced, as --net-mechanism netem would): at RTT
// 0 the store works through the namespace and the probe measures the
// relay; a delay is applied where the kernel has netem and fails clearly
// where it has not; going direct and Stop remove namespace and links.
func TestSetNetworkKernel(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the kernel path needs root (ip netns add, ip link add): run make test as root or with sudo")
	}
	reg := netRegistry()
	hasNetem := netem.Detect(context.Background()).KernelNetem
	mech := netem.Mechanism{Name: netem.KernelName, KernelNetem: true, Detail: "forced by the test"}
	for _, tc := range []struct {
		kind    string
		managed bool
	}{{"redis", true}, {"postgres", false}} {
		t.Run(tc.kind, func(t *testing.T) {
			ctx := context.Background()
			spec := Spec{Store: tc.kind}
			if !tc.managed {
				k, _ := reg.Lookup(tc.kind)
				spec.URL = servertest.Start(t, k.Server, server.Options{}).URL
			}
			inst, err := reg.Start(ctx, spec, StartArgs{Namespace: "sb_nettest", BaseDir: servertest.BaseDir(t), Network: mech})
			if err != nil {
				t.Fatal(err)
			}
			defer inst.Stop(ctx)

			n, err := inst.SetNetwork(ctx, &netem.Config{})
			if err != nil {
				t.Fatal(err)
			}
			k, ok := inst.path.(*netem.Kernel)
			if !ok {
				t.Fatalf("a %s mechanism gave a %T", mech.Name, inst.path)
			}
			ns := k.Namespace()
			t.Logf("rtt 0 through %s at %s: measured %v, direct %v (the relay's cost %v), probe %q %s",
				ns, n.Proxy, n.Measured, n.Direct, n.Measured-n.Direct, n.Probe, n.ProbeError)
			if ap, err := netip.ParseAddrPort(n.Proxy); err != nil || !ap.Addr().IsPrivate() || ap.Addr().IsLoopback() {
				t.Errorf("clients connect to %q, want the namespace's private address", n.Proxy)
			}
			if n.Mechanism != netem.KernelName || n.ProbeError != "" || n.Measured <= 0 || n.Direct <= 0 || n.Offset != 0 {
				t.Errorf("network %+v", n)
			}
			if !namespaceExists(t, ns) {
				t.Fatalf("namespace %s not there while in use", ns)
			}
			if p50 := getP50(t, inst, 50); p50 > 5*time.Millisecond {
				t.Errorf("gets through the namespace at rtt 0: p50 %v", p50)
			}

			if hasNetem {
				setNetworkWithin(t, inst, time.Millisecond)
				n5 := setNetworkWithin(t, inst, 5*time.Millisecond)
				if n5.Proxy != n.Proxy {
					t.Errorf("the path was replaced (%s -> %s), not reconfigured", n.Proxy, n5.Proxy)
				}
			} else {
				_, err := inst.SetNetwork(ctx, &netem.Config{RTT: time.Millisecond})
				t.Logf("rtt 1ms without netem: %v", err)
				if !errors.Is(err, netem.ErrNoKernelNetem) {
					t.Errorf("rtt 1ms on a kernel without netem: err %v, want %v", err, netem.ErrNoKernelNetem)
				}
				getP50(t, inst, 10) // the path still carries the store
			}

			if n, err := inst.SetNetwork(ctx, nil); err != nil || n != nil {
				t.Fatalf("back to direct: %v %v", n, err)
			}
			if namespaceExists(t, ns) {
				t.Errorf("namespace %s left after going direct", ns)
			}
			getP50(t, inst, 10)

			if _, err := inst.SetNetwork(ctx, &netem.Config{}); err != nil {
				t.Fatal(err)
			}
			ns = inst.path.(*netem.Kernel).Namespace()
			if err := inst.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			if namespaceExists(t, ns) {
				t.Errorf("namespace %s left after Stop", ns)
			}
		})
	}
}

package durability

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store/redis"
	"github.com/storebench/storebench/internal/store/storetest"
	"github.com/storebench/storebench/internal/workload"
)

// A power cut under Redis: appendfsync always loses no acknowledged write;
// everysec's cuts discard what the once-a-second fsync had not reached.
// Either way the server runs again afterwards on its own data dir, with
// nothing left mounted.
func TestPowerCut(t *testing.T) {
	for _, tc := range []struct {
		profile  string
		lossless bool
	}{{"aof-always", true}, {"aof-everysec", false}} {
		t.Run(tc.profile, func(t *testing.T) {
			srv := servertest.Start(t, server.Redis, server.Options{Profile: tc.profile})
			st, err := redis.New(context.Background(), redis.Config{URL: srv.URL, Namespace: storetest.Namespace(t)})
			if err != nil {
				t.Fatal(err)
			}
			defer closeStore(t, st)
			inst := serverInstance(t, srv, "redis", st)
			p := small()
			p.Fault = FaultPower
			s, phases, err := Run(context.Background(), workload.Env{Store: st, Kind: "redis", Info: inst.Info, Server: srv}, p, Hooks{})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if s.Fault != FaultPower || s.PowerCuts == nil || s.PowerCuts.Cuts != p.Trials || !strings.Contains(s.Crash, "power cut") {
				t.Fatalf("fault %q, cuts %+v, crash %q: want %d power cuts", s.Fault, s.PowerCuts, s.Crash, p.Trials)
			}
			wantFSCost(t, s, phases, p.Trials)
			if tc.lossless {
				wantNoLoss(t, s)
			} else if s.PowerCuts.BytesDiscarded == 0 {
				t.Errorf("everysec: the cuts discarded nothing (%+v): the AOF written since the last fsync should go", s.PowerCuts)
			}
			t.Logf("%s: %s; cuts %+v", tc.profile, s.Verdict, *s.PowerCuts)
			if !srv.Running() {
				t.Error("the server is not running after Run")
			}
			mounts, err := os.ReadFile("/proc/self/mountinfo")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(mounts), srv.DataDir) {
				t.Errorf("%s is still mounted after Run", srv.DataDir)
			}
			if _, err := os.Stat(srv.DataDir + ".durable"); !os.IsNotExist(err) {
				t.Errorf("the backing dir %s.durable is left: %v", srv.DataDir, err)
			}
		})
	}
}

package durability

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store/postgres"
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
			s, phases, err := Run(context.Background(), workload.Env{Store: st, Kind: "redis", Info: inst.Info, Server: srv}, inst.Kind, p, Hooks{})
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
			wantDataDirBack(t, srv.DataDir)
		})
	}
}

// damagedAfterCrash damages the killed server's files, durably, before the
// power cut and the restart: a store whose data the cut left unusable.
type damagedAfterCrash struct {
	*powerCrasher
	damage func() error
}

func (d *damagedAfterCrash) restart(ctx context.Context) (time.Duration, error) {
	if err := d.damage(); err != nil {
		return 0, err
	}
	return d.powerCrasher.restart(ctx)
}

// A server that refuses to start after the cut is a finding, not a failed
// run: the summary says which trial, the server's error and its log's
// last lines, Run returns no error (the runner then records the cell and
// goes on to the next), and nothing stays mounted.
func TestUnrecoveredServerIsAFinding(t *testing.T) {
	ctx := context.Background()
	srv := servertest.Start(t, server.Postgres, server.Options{})
	st, err := postgres.New(ctx, postgres.Config{URL: srv.URL, Namespace: storetest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx) // its server is gone: Close may fail, and has nothing left to drop
	inst := serverInstance(t, srv, "postgres", st)
	p := small()
	p.Fault, p.RecoveryTimeout = FaultPower, 30*time.Second
	p = p.WithDefaults()
	r := &runner{env: workload.Env{Store: st, Kind: "postgres", Info: inst.Info, Server: srv}, p: p}
	plain, err := r.measureWrites(ctx, st, phaseFSPlain)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := newPowerCrasher(ctx, st, srv)
	if err != nil {
		t.Fatal(err)
	}
	control := filepath.Join(srv.DataDir, "pgdata", "global", "pg_control")
	r.crash = &damagedAfterCrash{pc, func() error {
		f, err := os.OpenFile(control, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := f.WriteAt(bytes.Repeat([]byte{0xff}, 512), 0); err != nil {
			return err
		}
		return f.Sync() // durable: the cut keeps it
	}}
	s, _, err := r.run(ctx, &plain)
	if err != nil {
		t.Fatalf("run: %v; want the failed recovery in the summary, not an error", err)
	}
	u := s.Unrecovered
	if u == nil || u.Trial != 1 || s.Trials != 0 || !strings.Contains(s.Verdict, "did not recover") {
		t.Fatalf("unrecovered %+v, %d trials, verdict %q; want trial 1 unrecovered", u, s.Trials, s.Verdict)
	}
	if !strings.Contains(u.LogTail, "database files are incompatible") {
		t.Errorf("the log tail does not show PostgreSQL's refusal of its damaged control file:\n%s", u.LogTail)
	}
	t.Logf("verdict: %s\nlog tail:\n%s", s.Verdict, u.LogTail)
	wantDataDirBack(t, srv.DataDir)
}

// wantDataDirBack checks that a server's data dir is no longer mounted and
// its backing dir was put back.
func wantDataDirBack(t *testing.T, dir string) {
	t.Helper()
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mounts), dir) {
		t.Errorf("%s is still mounted after Run", dir)
	}
	if _, err := os.Stat(dir + ".durable"); !os.IsNotExist(err) {
		t.Errorf("the backing dir %s.durable is left: %v", dir, err)
	}
}

package durability

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/metrics"
	schema "github.com/storebench/storebench/internal/result/durability"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/files"
	"github.com/storebench/storebench/internal/store/sqlite"
	"github.com/storebench/storebench/internal/store/storetest"
	"github.com/storebench/storebench/internal/target"
	"github.com/storebench/storebench/internal/workload"
)

// powerTrials is "several trials" for the profiles whose loss is a matter
// of timing.
const powerTrials = 3

// TestPowerCutInProcess puts files and SQLite through power cuts, profile
// by profile, with the known answers: what fsyncs its data and its names
// before acknowledging loses nothing; what leaves either to the OS loses
// writes (every one here: the power-cut filesystem never writes back on its
// own). Either way nothing is left mounted, running or on disk.
func TestPowerCutInProcess(t *testing.T) {
	ctx := context.Background()
	type profile struct {
		name string
		open func(t *testing.T, dir string) (store.Store, error)
		want func(*testing.T, schema.Summary)
	}
	filesProfile := func(fsync string, want func(*testing.T, schema.Summary)) profile {
		return profile{"files fsync=" + fsync, func(t *testing.T, dir string) (store.Store, error) {
			f, noDir, err := files.ParseFsync(fsync)
			if err != nil {
				t.Fatal(err)
			}
			return files.New(ctx, files.Config{Dir: dir, Namespace: storetest.Namespace(t), Fsync: f, NoDirFsync: noDir})
		}, want}
	}
	sqliteProfile := func(journal, sync string, want func(*testing.T, schema.Summary)) profile {
		return profile{"sqlite " + journal + " " + sync, func(t *testing.T, dir string) (store.Store, error) {
			return sqlite.New(ctx, sqlite.Config{Path: filepath.Join(dir, "d.db"), Namespace: storetest.Namespace(t), JournalMode: journal, Synchronous: sync})
		}, want}
	}
	for _, tc := range []profile{
		filesProfile("true", wantNoLoss),
		filesProfile("file", wantSomeLoss), // each new name vanishes
		filesProfile("false", wantSomeLoss),
		sqliteProfile("WAL", "FULL", wantNoLoss),
		sqliteProfile("DELETE", "EXTRA", wantNoLoss),
		// FULL commits by unlinking the journal, without the directory
		// fsync EXTRA adds: the cut can bring the journal back, and
		// recovery rolls the last commit back.
		sqliteProfile("DELETE", "FULL", wantAtMostLastCommit),
		sqliteProfile("WAL", "OFF", wantSomeLoss),
		sqliteProfile("DELETE", "OFF", wantSomeLoss),
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			st, err := tc.open(t, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer closeStore(t, st)
			info, err := st.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			p := small()
			p.Trials, p.Fault = powerTrials, FaultPower
			kind := strings.Fields(tc.name)[0]
			s, phases, err := Run(ctx, workload.Env{Store: st, Kind: kind, Info: info}, kindOf(t, kind), p, Hooks{})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if s.PowerCuts == nil || s.PowerCuts.Cuts != p.Trials || s.Trials != p.Trials || !strings.Contains(s.Crash, "power cut") {
				t.Fatalf("cuts %+v, %d trials, crash %q: want %d power cuts", s.PowerCuts, s.Trials, s.Crash, p.Trials)
			}
			wantFSCost(t, s, phases, p.Trials)
			t.Logf("%s: %s; cuts %+v; write p50 %.1f µs plain, %.1f µs on the mount", tc.name, s.Verdict, *s.PowerCuts, s.FSCost.Plain.P50, s.FSCost.Mount.P50)
			tc.want(t, s)
			wantNothingLeft(t, dir)
		})
	}
}

// wantFSCost checks that a power-cut cell measured its filesystem's cost
// first: the same writes on the plain directory and on the mount, as the
// two phases before the trials' and in the summary.
func wantFSCost(t *testing.T, s schema.Summary, phases []metrics.Phase, trials int) {
	t.Helper()
	if len(phases) != trials+2 || phases[0].Name != phaseFSPlain || phases[1].Name != phaseFSMount {
		var names []string
		for _, ph := range phases {
			names = append(names, ph.Name)
		}
		t.Fatalf("phases %v; want %s, %s, then the %d trials'", names, phaseFSPlain, phaseFSMount, trials)
	}
	c := s.FSCost
	if c == nil || c.Writes != fsCostWrites || phases[0].Ops != fsCostWrites || phases[1].Ops != fsCostWrites ||
		c.Plain.P50 <= 0 || c.Mount.P50 <= 0 || c.Plain.P50 != phases[0].LatencyUs.P50 || c.Mount.P99 != phases[1].LatencyUs.P99 {
		t.Errorf("filesystem cost %+v; want %d writes on each side, as the phases measured them (%+v, %+v)", c, fsCostWrites, phases[0].LatencyUs, phases[1].LatencyUs)
	}
}

func wantSomeLoss(t *testing.T, s schema.Summary) {
	t.Helper()
	if s.Lost+s.Wrong == 0 || s.LossTrials == 0 {
		t.Errorf("lost no acknowledged write in %d power cuts: %s", s.Trials, s.Verdict)
	}
}

// wantAtMostLastCommit: a store whose writes commit one after another
// lost at most the last one in each trial.
func wantAtMostLastCommit(t *testing.T, s schema.Summary) {
	t.Helper()
	if s.LostMax > 1 || s.Wrong != 0 {
		t.Errorf("lost up to %d acknowledged writes in a trial (%d wrong); want at most the last commit: %s", s.LostMax, s.Wrong, s.Verdict)
	}
}

// wantNothingLeft checks that no writer runs, nothing is mounted under dir
// and no power-cut directory is left in it.
func wantNothingLeft(t *testing.T, dir string) {
	t.Helper()
	if left := children(t); len(left) > 0 {
		t.Errorf("writer processes left behind: %v", left)
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mounts), dir) {
		t.Errorf("a mount under %s is left", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".powercut") {
			t.Errorf("%s is left in %s", e.Name(), dir)
		}
	}
}

// A power cut plans for files and SQLite in storebench's own run dir, which
// it mounts, and is refused for a directory given by URL.
func TestPowerCutPlansInProcessStores(t *testing.T) {
	spec := &Spec{Durability: &Section{Fault: FaultPower}}
	for _, tc := range []struct {
		target target.Spec
		ok     bool
	}{
		{target.Spec{Store: "files", Options: map[string]string{"fsync": "file"}}, true},
		{target.Spec{Store: "sqlite"}, true},
		{target.Spec{Store: "files", URL: "file:///var/tmp/x"}, false},
		{target.Spec{Store: "sqlite", URL: "sqlite:///var/tmp/x.db"}, false},
	} {
		cells, err := spec.Cells(workload.Plan{Load: workload.Load{Clients: 2}, Kind: kindOf(t, tc.target.Store), Spec: tc.target})
		if tc.ok != (err == nil) || (err == nil && len(cells) != 1) {
			t.Errorf("%s: %d cells, %v; want ok %v", tc.target.Label(), len(cells), err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "given by URL") {
			t.Errorf("%s: %v; want it to say the URL is why", tc.target.Label(), err)
		}
	}
}

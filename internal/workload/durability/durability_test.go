package durability

import (
	"context"
	"github.com/storebench/storebench/internal/workload"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/kinds"
	schema "github.com/storebench/storebench/internal/result/durability"
	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/files"
	"github.com/storebench/storebench/internal/store/mysql"
	"github.com/storebench/storebench/internal/store/postgres"
	"github.com/storebench/storebench/internal/store/redis"
	"github.com/storebench/storebench/internal/store/sqlite"
	"github.com/storebench/storebench/internal/store/storetest"
	"github.com/storebench/storebench/internal/target"
)

// TestMain lets this test binary be the writer process of files and SQLite.
func TestMain(m *testing.M) {
	if IsChild() {
		os.Exit(ChildMain(kinds.All()))
	}
	os.Exit(m.Run())
}

// kindOf is the binary's store kind name.
func kindOf(t *testing.T, name string) target.Kind {
	t.Helper()
	k, ok := kinds.All().Lookup(name)
	if !ok {
		t.Fatalf("no store kind %s", name)
	}
	return k
}

// small is a few seconds per store: enough writes that "everything" and
// "nothing" cannot be confused, two trials so the second recovers a data
// dir that has been through a crash.
func small() Params {
	return Params{Trials: 2, Writers: 2, ValueSize: 64, MinAcked: 300, KillWindow: 150 * time.Millisecond, Seed: 7, TrialTimeout: 30 * time.Second}
}

// serverInstance is what target.Start builds for a managed target.
func serverInstance(t *testing.T, srv *server.Server, name string, st store.Store) *target.Instance {
	t.Helper()
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	merged := map[string]string{}
	for k, v := range srv.Settings {
		merged[k] = v
	}
	for k, v := range info.Settings {
		merged[k] = v
	}
	info.Settings = merged
	return &target.Instance{
		Spec: target.Spec{Store: name, Profile: srv.Profile}, Kind: kindOf(t, name),
		Store: st, Server: srv, Info: info,
	}
}

func run(t *testing.T, inst *target.Instance, p Params) schema.Summary {
	t.Helper()
	env := workload.Env{Store: inst.Store, Kind: inst.Kind.Name, Info: inst.Info}
	if inst.Server != nil {
		env.Server = inst.Server
	}
	s, phases, err := Run(context.Background(), env, inst.Kind, p, Hooks{Probe: inst.Probe})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if s.Trials != p.Trials || len(s.PerTrial) != p.Trials || len(phases) != p.Trials {
		t.Fatalf("%d trials, %d per-trial results, %d phases; want %d of each", s.Trials, len(s.PerTrial), len(phases), p.Trials)
	}
	for i, tr := range s.PerTrial {
		if tr.Acked < p.MinAcked {
			t.Errorf("trial %d: killed after %d acknowledged writes, before the minimum %d", i+1, tr.Acked, p.MinAcked)
		}
		if tr.RecoveryS <= 0 || tr.RecoveryS < tr.RestartS {
			t.Errorf("trial %d: recovery %.3f s, restart %.3f s", i+1, tr.RecoveryS, tr.RestartS)
		}
		if ph := phases[i]; ph.Name != "write-"+strconv.Itoa(i+1) || ph.Ops < tr.Acked || ph.Errors[string(errclass.ClassMismatch)] != 0 {
			t.Errorf("phase %d: %s, %d ops, errors %v; want write-%d with at least the %d acknowledged writes and no mismatch", i, ph.Name, ph.Ops, ph.Errors, i+1, tr.Acked)
		}
	}
	if s.NotPowerLoss == "" || s.ProcessCrash == "" || s.PowerLoss == "" || s.Crash == "" {
		t.Errorf("summary misses its crash notes: %+v", s)
	}
	if s.ProcessCrash == "unknown" || s.PowerLoss == "unknown" {
		t.Errorf("%s: no expectations for store kind %q: process crash %q, power loss %q", inst.Spec.Label(), inst.Info.Kind, s.ProcessCrash, s.PowerLoss)
	}
	t.Logf("%s: %s; per trial %+v", inst.Spec.Label(), s.Verdict, s.PerTrial)
	return s
}

func wantNoLoss(t *testing.T, s schema.Summary) {
	t.Helper()
	if s.Lost != 0 || s.Wrong != 0 || s.LossTrials != 0 || s.LostMax != 0 || s.WindowMaxS != 0 {
		t.Errorf("lost %d, wrong %d acknowledged writes (max %d, window %.3f s); want none: %s", s.Lost, s.Wrong, s.LostMax, s.WindowMaxS, s.Verdict)
	}
}

func wantAllLost(t *testing.T, s schema.Summary) {
	t.Helper()
	if s.LostAllTrials != s.Trials || s.Lost != s.Acked || s.Acked == 0 {
		t.Errorf("lost %d of %d acknowledged writes, every one in %d of %d trials; want every write of every trial: %s", s.Lost, s.Acked, s.LostAllTrials, s.Trials, s.Verdict)
	}
	for _, tr := range s.PerTrial {
		// The oldest lost write is the trial's first: the window spans all
		// of the trial's writes and reaches back to its start.
		if tr.WindowWrites < tr.Acked-int64(s.Writers) || tr.WindowS <= 0 || tr.WindowS > tr.KillAfterS+0.01 || tr.OldestLost == "" {
			t.Errorf("trial %d: window %.3f s / %d writes, oldest lost %q, killed %.3f s in after %d acked; want the whole trial",
				tr.Trial, tr.WindowS, tr.WindowWrites, tr.OldestLost, tr.KillAfterS, tr.Acked)
		}
	}
}

// closeStore closes the store after the crashes: its own connection must
// have come back with the server, or Close could not drop what it created.
func closeStore(t *testing.T, st store.Store) {
	t.Helper()
	if err := st.Close(context.Background()); err != nil {
		t.Errorf("close the store after the crashes: %v", err)
	}
}

func TestRedis(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		profile string
		want    func(*testing.T, schema.Summary)
	}{
		{"aof-always", wantNoLoss},
		{"none", wantAllLost},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			srv := servertest.Start(t, server.Redis, server.Options{Profile: tc.profile})
			st, err := redis.New(context.Background(), redis.Config{URL: srv.URL, Namespace: storetest.Namespace(t)})
			if err != nil {
				t.Fatal(err)
			}
			inst := serverInstance(t, srv, "redis", st)
			s := run(t, inst, small())
			tc.want(t, s)
			if !srv.Running() {
				t.Error("the server is not running after Run")
			}
			closeStore(t, st)
		})
	}
}

// TestValkey: Valkey is a Redis-protocol server with Redis's profiles;
// its expectations read its settings as Redis's (they said "unknown").
func TestValkey(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, server.Valkey, server.Options{Profile: "aof-always"})
	st, err := redis.New(context.Background(), redis.Config{URL: srv.URL, Namespace: storetest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	inst := serverInstance(t, srv, "valkey", st)
	p := small()
	p.Trials, p.MinAcked, p.KillWindow = 1, 50, 50*time.Millisecond
	s := run(t, inst, p)
	wantNoLoss(t, s)
	if want, _ := expectations(kindOf(t, "redis"), inst.Info.Settings); s.ProcessCrash != want || !strings.Contains(s.PowerLoss, "fsync before every reply") {
		t.Errorf("process crash %q, power loss %q: want Redis's with appendfsync always (%q)", s.ProcessCrash, s.PowerLoss, want)
	}
	closeStore(t, st)
}

func TestPostgres(t *testing.T) {
	t.Parallel()
	// One server, the logged design then the unlogged one, each in its own
	// schema: the kills hit both the same way.
	srv := servertest.Start(t, server.Postgres, server.Options{})
	for _, tc := range []struct {
		design string
		want   func(*testing.T, schema.Summary)
	}{
		{postgres.DesignLogged, wantNoLoss},
		{postgres.DesignUnlogged, wantAllLost},
	} {
		t.Run(tc.design, func(t *testing.T) {
			st, err := postgres.New(context.Background(), postgres.Config{URL: srv.URL, Namespace: storetest.Namespace(t), Design: tc.design})
			if err != nil {
				t.Fatal(err)
			}
			inst := serverInstance(t, srv, "postgres", st)
			s := run(t, inst, small())
			tc.want(t, s)
			if tc.design == postgres.DesignUnlogged && !strings.Contains(s.ProcessCrash, "UNLOGGED") {
				t.Errorf("process-crash note for the unlogged design: %q", s.ProcessCrash)
			}
			closeStore(t, st)
		})
	}
}

func TestMariaDB(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, server.MariaDB, server.Options{})
	st, err := mysql.New(context.Background(), mysql.Config{URL: srv.URL, Namespace: storetest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	inst := serverInstance(t, srv, "mariadb", st)
	p := small()
	p.Trials = 1
	wantNoLoss(t, run(t, inst, p))
	closeStore(t, st)
}

// TestInProcess kills the child writer process of files and SQLite: a
// process crash loses nothing they acknowledged, fsync or not.
func TestInProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		open func(t *testing.T, dir string) (store.Store, error)
	}{
		{"files", func(t *testing.T, dir string) (store.Store, error) {
			return files.New(ctx, files.Config{Dir: dir, Namespace: storetest.Namespace(t)})
		}},
		{"sqlite", func(t *testing.T, dir string) (store.Store, error) {
			return sqlite.New(ctx, sqlite.Config{Path: filepath.Join(dir, "d.db"), Namespace: storetest.Namespace(t), Synchronous: "OFF"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := tc.open(t, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			info, err := st.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			inst := &target.Instance{Spec: target.Spec{Store: tc.name}, Kind: kindOf(t, tc.name), Store: st, Info: info}
			s := run(t, inst, small())
			wantNoLoss(t, s)
			if !strings.Contains(s.Crash, "writer process") || !strings.Contains(s.PowerLoss, "recent") {
				t.Errorf("crash %q, power loss %q: want the writer process and what a power loss would lose", s.Crash, s.PowerLoss)
			}
			if left := children(t); len(left) > 0 {
				t.Errorf("writer processes left behind: %v", left)
			}
			closeStore(t, st)
		})
	}
}

// children lists this process's child processes started as writers.
func children(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	self := strconv.Itoa(os.Getpid())
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut after ')'.
		_, rest, _ := strings.Cut(string(stat), ") ")
		if f := strings.Fields(rest); len(f) > 1 && f[1] == self {
			if cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); strings.Contains(string(cmd), ChildArg) {
				out = append(out, e.Name())
			}
		}
	}
	return out
}

// TestChildRefusesForeignNamespace is not parallel: it looks for writer
// processes, which TestInProcess starts.
func TestChildRefusesForeignNamespace(t *testing.T) {
	dir := t.TempDir()
	spec, err := childSpecFor(kindOf(t, "files"), store.Info{Location: filepath.Join(dir, "sbt_nothere"), Namespace: "sbt_nothere", Settings: map[string]string{"fsync": "false"}})
	if err != nil {
		t.Fatal(err)
	}
	spec.Writers = 1
	_, err = startChild(context.Background(), nil, spec)
	if err == nil || !strings.Contains(err.Error(), "attach") {
		t.Fatalf("start a child on a missing namespace: %v, want the attach error", err)
	}
	// A kind the child cannot reopen (its data dies with the process) is
	// refused by the child too, not only by childSpecFor.
	spec.Store = "memory"
	_, err = startChild(context.Background(), nil, spec)
	if err == nil || !strings.Contains(err.Error(), `cannot open store "memory"`) {
		t.Fatalf("start a child on the memory store: %v, want it refused", err)
	}
	if _, err := childSpecFor(kindOf(t, "memory"), spec.Info); err == nil {
		t.Error("childSpecFor(memory): no error")
	}
	if left := children(t); len(left) > 0 {
		t.Errorf("writer processes left behind: %v", left)
	}
}

// Check's answer for each kind the binary has (internal/kinds), managed
// and by URL.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		spec target.Spec
		ok   bool
	}{
		{target.Spec{Store: "redis"}, true},
		{target.Spec{Store: "redis", URL: "redis://h:1"}, false},
		{target.Spec{Store: "files"}, true},
		{target.Spec{Store: "sqlite", URL: "sqlite:///tmp/x.db"}, true},
		{target.Spec{Store: "memory"}, false},
		// One node of a managed cluster or pool is killed; one given by URL
		// cannot be, and a PostgreSQL primary has no automatic failover.
		{target.Spec{Store: "redis-cluster", Options: map[string]string{"replicas": "1"}}, true},
		{target.Spec{Store: "memcached-pool"}, true},
		{target.Spec{Store: "redis-cluster", URL: "redis-cluster://h:1/"}, false},
		{target.Spec{Store: "postgres-replicas"}, false},
	} {
		kind, ok := kinds.All().Lookup(tc.spec.Store)
		if !ok {
			t.Fatalf("no store kind %s", tc.spec.Store)
		}
		if err := Check(kind, tc.spec); (err == nil) != tc.ok {
			t.Errorf("Check(%s %s) = %v, want ok %v", kind.Name, tc.spec.Label(), err, tc.ok)
		}
	}
}

func TestParamsValidate(t *testing.T) {
	if err := (Params{}).Validate(); err != nil {
		t.Errorf("zero params (all defaults): %v", err)
	}
	for _, p := range []Params{
		{Trials: -1}, {Writers: maxWriters + 1}, {ValueSize: -3}, {MinAcked: -1}, {KillWindow: -time.Second},
		{KillWindow: time.Minute, TrialTimeout: time.Second}, {RecoveryTimeout: -1}, {ChildCommand: []string{""}},
	} {
		if err := p.Validate(); err == nil {
			t.Errorf("%+v: no error", p)
		}
	}
	d := (Params{}).WithDefaults()
	if d.Trials != DefaultTrials || d.Writers != DefaultWriters || d.KillWindow != DefaultKillWindow || d.MinAcked != DefaultMinAcked {
		t.Errorf("defaults: %+v", d)
	}
}

func TestJournal(t *testing.T) {
	var j journal
	ms := time.Millisecond
	// Three acks within one millisecond, then one at 5 ms, then two at 9 ms.
	for _, at := range []time.Duration{0, ms / 4, ms / 2, 5 * ms, 9 * ms, 9*ms + ms/2} {
		j.ack(at)
	}
	if j.acked != 6 || len(j.marks) != 3 {
		t.Fatalf("acked %d, %d marks; want 6 and 3 (one per ms)", j.acked, len(j.marks))
	}
	for seq, want := range []time.Duration{0, 0, 0, 5 * ms, 9 * ms, 9 * ms} {
		if at, ok := j.ackedAt(int64(seq)); !ok || at != want {
			t.Errorf("ackedAt(%d) = %v %v, want %v", seq, at, ok, want)
		}
	}
	if _, ok := j.ackedAt(6); ok {
		t.Error("ackedAt(6): an unacknowledged seq has a time")
	}
	for _, tc := range []struct {
		at   time.Duration
		want int64
	}{{0, 6}, {5 * ms, 3}, {6 * ms, 2}, {9 * ms, 2}, {time.Second, 0}} {
		if got := j.ackedSince(tc.at); got != tc.want {
			t.Errorf("ackedSince(%v) = %d, want %d", tc.at, got, tc.want)
		}
	}
}

func TestExpectations(t *testing.T) {
	for _, tc := range []struct {
		kind  string
		set   map[string]string
		crash string // a word the process-crash note must hold
		power string
	}{
		{"redis", map[string]string{"appendonly": "no", "save": ""}, "everything", "everything"},
		{"redis", map[string]string{"appendonly": "yes", "appendfsync": "always"}, "nothing", "nothing"},
		{"redis", map[string]string{"appendonly": "yes", "appendfsync": "everysec"}, "almost nothing", "1-2 s"},
		{"redis", map[string]string{"appendonly": "no", "save": "3600 1"}, "snapshot", "snapshot"},
		{"postgres", map[string]string{"design": "unlogged"}, "UNLOGGED", "truncated"},
		{"postgres", map[string]string{"synchronous_commit": "off", "wal_writer_delay": "200ms"}, "WAL buffers", "200ms"},
		{"postgres", map[string]string{"synchronous_commit": "on"}, "nothing", "nothing"},
		{"mariadb", map[string]string{"innodb_flush_log_at_trx_commit": "2"}, "nothing", "1 s"},
		{"valkey", map[string]string{"appendonly": "yes", "appendfsync": "always"}, "nothing", "nothing"},
		{"memcached", map[string]string{}, "everything", "everything"},
		{"memcached-pool", map[string]string{}, "killed server's keys", "everything"},
		{"redis-cluster", map[string]string{"appendonly": "no", "save": ""}, "a single redis loses with these settings (everything", "own persistence"},
		{"redis-cluster", map[string]string{"cluster_replicas_per_primary": "1"}, "not yet sent to its replica", "not yet replicated"},
		{"sqlite", map[string]string{"journal_mode": "WAL", "synchronous": "OFF"}, "nothing", "corrupt"},
		{"sqlite", map[string]string{"journal_mode": "DELETE", "synchronous": "FULL"}, "nothing", "last commit"},
		{"sqlite", map[string]string{"journal_mode": "DELETE", "synchronous": "EXTRA"}, "nothing", "nothing committed"},
		{"sqlite", map[string]string{"journal_mode": "WAL", "synchronous": "FULL"}, "nothing", "nothing committed"},
		{"files", map[string]string{"fsync": "false"}, "nothing", "recent"},
		{"files", map[string]string{"fsync": "file"}, "nothing", "new name"},
		{"files", map[string]string{"fsync": "true"}, "nothing", "nothing"},
	} {
		c, p := expectations(kindOf(t, tc.kind), tc.set)
		if !strings.Contains(c, tc.crash) || !strings.Contains(p, tc.power) {
			t.Errorf("%s %v: process crash %q, power loss %q; want %q and %q", tc.kind, tc.set, c, p, tc.crash, tc.power)
		}
	}
}

// A loss on a node that was not killed makes the verdict a finding,
// whatever else the trials lost.
func TestNodeKillVerdict(t *testing.T) {
	var s schema.Summary
	addTrial(&s, schema.Trial{Trial: 1, Acked: 100, Lost: 30, NodeKill: &schema.NodeKill{AckedKilled: 40, LostKilled: 30, AckedOther: 60}})
	if strings.Contains(s.Verdict, "FINDING") || s.LostOtherNodes != 0 {
		t.Errorf("losses on the killed node only: verdict %q, lost elsewhere %d", s.Verdict, s.LostOtherNodes)
	}
	addTrial(&s, schema.Trial{Trial: 2, Acked: 100, Lost: 2, NodeKill: &schema.NodeKill{AckedKilled: 40, AckedOther: 60, LostOther: 2}})
	if !strings.HasPrefix(s.Verdict, "FINDING: lost 2 acknowledged writes on nodes that were NOT killed") || s.LostOtherNodes != 2 {
		t.Errorf("a loss elsewhere: verdict %q, lost elsewhere %d", s.Verdict, s.LostOtherNodes)
	}
}

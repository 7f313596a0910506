package servertest_test

import (
	"errors"
	"os"
	"testing"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
)

func TestStartStopsInCleanup(t *testing.T) {
	var s *server.Server
	t.Run("inner", func(t *testing.T) {
		s = servertest.Start(t, server.Redis, server.Options{Profile: "none"})
		if !s.Running() {
			t.Fatal("not running")
		}
	})
	if s == nil {
		t.Fatal("no server")
	}
	if s.Running() {
		t.Error("still running after the test's cleanup")
	}
	if _, err := os.Stat(s.DataDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("data dir left behind: %v", err)
	}
}

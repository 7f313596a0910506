package redis

import (
	"context"
	"strings"
	"testing"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
)

// TestValkeyInfo: against a Valkey server the store reports Valkey's own
// version, not the redis_version 7.2.4 Valkey shows old clients, and says
// which server it is.
func TestValkeyInfo(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, server.Valkey, server.Options{Profile: "none"})
	info, err := open(t, srv.URL).Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Version != srv.Version || strings.HasPrefix(info.Version, "7.") {
		t.Errorf("Info().Version = %q, want valkey_version %q", info.Version, srv.Version)
	}
	if info.Settings["server_name"] != "valkey" {
		t.Errorf("server_name = %q, want valkey", info.Settings["server_name"])
	}
}

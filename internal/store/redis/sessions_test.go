package redis

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func TestSessions(t *testing.T) {
	url := servertest.Start(t, server.Redis, server.Options{}).URL
	t.Run("Conformance", func(t *testing.T) {
		storetest.RunSessions(t, func(t *testing.T) store.Store { return open(t, url) }, storetest.SessionOptions{})
	})
	t.Run("Describe", func(t *testing.T) {
		s := open(t, url)
		h, err := s.OpenSessions(context.Background(), store.SessionDesign{TTL: time.Minute, RefreshBelow: 40 * time.Second, KeepaliveOnRead: true})
		if err != nil {
			t.Fatal(err)
		}
		d, err := h.Describe(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(d["read"], "GETEX") || !strings.Contains(d["keepalive"], "PTTL") || d["appendonly"] != "no" {
			t.Errorf("describe: %v", d)
		}
		o, err := h.Observe(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := o.Metrics["expired_keys"]; !ok || o.Bytes <= 0 {
			t.Errorf("observe: %+v", o)
		}
	})
}

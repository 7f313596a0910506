package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func TestSessions(t *testing.T) {
	dir := t.TempDir()
	storetest.RunSessions(t, func(t *testing.T) store.Store {
		return open(t, Config{Path: filepath.Join(dir, storetest.Namespace(t)+".db")})
	}, storetest.SessionOptions{Design: store.SessionDesign{ExpiresIndex: true}})
}

// TestSessionsDescribe reads the design back from sqlite_schema.
func TestSessionsDescribe(t *testing.T) {
	s := open(t, Config{Path: filepath.Join(t.TempDir(), "d.db")})
	ctx := context.Background()
	h, err := s.OpenSessions(ctx, store.SessionDesign{TTL: time.Minute, ExpiresIndex: true, PayloadType: "bytea", Constraints: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := h.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d["ddl"], "payload BLOB NOT NULL") || !strings.Contains(d["indexes"], "(expires_at)") || d["journal_mode"] != "wal" {
		t.Errorf("describe: %v", d)
	}
}

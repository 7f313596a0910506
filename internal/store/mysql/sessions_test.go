package mysql

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func TestSessions(t *testing.T) {
	url := serverURL(t)
	for _, name := range []string{"plain", "indexed"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := store.SessionDesign{ExpiresIndex: name == "indexed", Constraints: name == "indexed"}
			storetest.RunSessions(t, func(t *testing.T) store.Store { return open(t, url) }, storetest.SessionOptions{Design: d})
		})
	}
	t.Run("Describe", func(t *testing.T) {
		s := open(t, url)
		ctx := context.Background()
		h, err := s.OpenSessions(ctx, store.SessionDesign{TTL: time.Minute, IDType: "int", PayloadType: "json", ExpiresIndex: true})
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
		if ddl := d["ddl"]; !strings.Contains(ddl, "`id` int(11) NOT NULL AUTO_INCREMENT") || !strings.Contains(ddl, "KEY `sessions_expires_at` (`expires_at`)") {
			t.Errorf("SHOW CREATE TABLE: %s", ddl)
		}
		if _, err := h.Create(ctx, 0, []byte(`{"a":1}`)); err != nil {
			t.Fatal(err)
		}
		o, err := h.Observe(ctx)
		if err != nil || o.Rows != 1 {
			t.Errorf("observe: %+v, %v", o, err)
		}
	})
}

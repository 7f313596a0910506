package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func TestBatch(t *testing.T) {
	t.Parallel()
	url := servertest.Start(t, server.Postgres, server.Options{}).URL

	t.Run("LoadDoesNotUpsert", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		kv, _ := storetest.BatchClient(t, open(t, url, DesignLogged))
		l := kv.(store.BulkLoader)
		if err := l.Load(ctx, [][]byte{[]byte("k")}, [][]byte{[]byte("v")}); err != nil {
			t.Fatal(err)
		}
		err := l.Load(ctx, [][]byte{[]byte("k2"), []byte("k")}, [][]byte{[]byte("v2"), []byte("again")})
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "23505" {
			t.Fatalf("Load of an existing key = %v, want a unique violation", err)
		}
		// COPY is one statement: nothing of the failed Load is kept.
		if _, ok, err := kv.Get(ctx, []byte("k2"), nil); ok || err != nil {
			t.Errorf("k2 after the failed Load: ok %v, %v", ok, err)
		}
	})

	for _, design := range []string{DesignLogged, DesignUnlogged} {
		t.Run("Conformance/"+design, func(t *testing.T) {
			t.Parallel()
			storetest.RunBatch(t, func(t *testing.T) store.Store { return open(t, url, design) })
		})
	}
}

package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
)

// paymentsData is a tiny data set: 2 organizations, 2 users, 6 accounts.
func paymentsData() *store.PaymentsData {
	now := time.Now().UTC()
	return &store.PaymentsData{
		Orgs:     2,
		Users:    []store.PaymentsUser{{ID: 1, OrgID: 1}, {ID: 2, OrgID: 2}},
		Tokens:   []store.PaymentsToken{{Hash: [16]byte{1}, Permission: 1, UserID: 1, ExpiresAt: now.Add(time.Hour)}},
		Accounts: 6,
		Account: func(id int64) store.PaymentsAccount {
			return store.PaymentsAccount{ID: id, OrgID: 1 + id%2, Balance: 100}
		},
		Card: func(id int64) store.PaymentsCard {
			return store.PaymentsCard{ID: id, AccountID: id, Expires: now.AddDate(1, 0, 0).Truncate(24 * time.Hour), CVV: 123}
		},
	}
}

// The schema has its foreign keys, their indexes, the CHECK and the
// function; sessions get the durability and isolation asked for; drop
// leaves only the kv table; a schema without the marker is refused.
func TestPaymentsSchemaAndSessions(t *testing.T) {
	url := servertest.Start(t, server.Postgres, server.Options{}).URL
	s := open(t, url, "")
	ctx := context.Background()
	if _, err := s.PaymentsSetup(ctx, paymentsData()); err != nil {
		t.Fatal(err)
	}
	conn := sql(t, url)
	ns := s.cfg.Namespace
	var fks, idx, checks, fns, tables int
	count := func() {
		t.Helper()
		if err := conn.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND connamespace = n.oid),
			(SELECT count(*) FROM pg_indexes WHERE schemaname = n.nspname AND indexname LIKE '%\_idx'),
			(SELECT count(*) FROM pg_constraint WHERE contype = 'c' AND connamespace = n.oid),
			(SELECT count(*) FROM pg_proc WHERE pronamespace = n.oid),
			(SELECT count(*) FROM pg_tables WHERE schemaname = n.nspname)
			FROM pg_namespace n WHERE n.nspname = $1`, ns).Scan(&fks, &idx, &checks, &fns, &tables); err != nil {
			t.Fatal(err)
		}
	}
	count()
	if fks != 9 || idx != 9 || checks != 1 || fns != 1 || tables != 8 {
		t.Errorf("after setup: %d foreign keys, %d indexes, %d checks, %d functions, %d tables; want 9, 9, 1, 1, 8 (with kv)", fks, idx, checks, fns, tables)
	}

	for _, c := range []struct {
		cfg       store.PaymentsConfig
		sync, iso string
	}{
		{store.PaymentsConfig{Mode: store.PaymentsClient, Durability: store.PaymentsRelaxed, Isolation: "serializable"}, "off", "serializable"},
		{store.PaymentsConfig{Mode: store.PaymentsRoutine, Durability: store.PaymentsStrict}, "on", "read committed"},
	} {
		pc, err := s.PaymentsOpen(ctx, c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		var sync, iso string
		if err := pc.(*paymentsConn).conn.QueryRow(ctx, `SELECT current_setting('synchronous_commit'), current_setting('transaction_isolation')`).Scan(&sync, &iso); err != nil {
			t.Fatal(err)
		}
		if sync != c.sync || iso != c.iso {
			t.Errorf("%+v: synchronous_commit %s, isolation %s; want %s, %s", c.cfg, sync, iso, c.sync, c.iso)
		}
		pc.Close()
		st, err := s.PaymentsPrepare(ctx, c.cfg)
		if err != nil || st.Knobs["synchronous_commit"] != c.sync+" (set per session)" || st.Knobs["fsync"] != "on" {
			t.Errorf("prepare %+v: %+v, %v", c.cfg, st, err)
		}
	}

	if err := s.PaymentsDrop(ctx); err != nil {
		t.Fatal(err)
	}
	count()
	if fks+idx+checks+fns != 0 || tables != 1 {
		t.Errorf("after drop: %d foreign keys, %d indexes, %d checks, %d functions, %d tables; want only kv", fks, idx, checks, fns, tables)
	}

	exec(t, conn, `COMMENT ON SCHEMA `+ns+` IS 'someone else''s'`)
	if _, err := s.PaymentsSetup(ctx, paymentsData()); !errors.Is(err, store.ErrNotOwned) {
		t.Errorf("setup in a schema without the marker: %v", err)
	}
	if err := s.PaymentsDrop(ctx); !errors.Is(err, store.ErrNotOwned) {
		t.Errorf("drop in a schema without the marker: %v", err)
	}
	exec(t, conn, `COMMENT ON SCHEMA `+ns+` IS '`+Marker+`'`)

	if _, err := s.PaymentsPrepare(ctx, store.PaymentsConfig{Mode: "stored", Durability: store.PaymentsStrict}); err == nil {
		t.Error("mode stored accepted")
	}
}

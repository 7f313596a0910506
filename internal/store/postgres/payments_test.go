package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

// The schema has its foreign keys, their indexes, the CHECK and the
// function; sessions get the durability and isolation asked for; drop
// leaves only the kv table; a schema without the marker is refused.
func TestPaymentsSchemaAndSessions(t *testing.T) {
	url := servertest.Start(t, server.Postgres, server.Options{}).URL
	s := open(t, url, "")
	ctx := context.Background()
	if _, err := s.PaymentsSetup(ctx, storetest.PaymentsData(time.Now().UTC())); err != nil {
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
	if _, err := s.PaymentsSetup(ctx, storetest.PaymentsData(time.Now().UTC())); !errors.Is(err, store.ErrNotOwned) {
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

// The payments conformance suite, in every mode the store offers.
func TestPayments(t *testing.T) {
	url := servertest.Start(t, server.Postgres, server.Options{}).URL
	storetest.RunPayments(t, func(t *testing.T) store.Store { return open(t, url, "") })
}

package mysql

import (
	"context"
	"database/sql/driver"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

// The schema has its foreign keys, their indexes, the CHECK and the
// procedure; sessions get the isolation asked for; drop leaves only the
// store's own tables.
func TestPaymentsSchemaAndSessions(t *testing.T) {
	url := serverURL(t)
	s := open(t, url)
	ctx := context.Background()
	if _, err := s.PaymentsSetup(ctx, storetest.PaymentsData(time.Now().UTC())); err != nil {
		t.Fatal(err)
	}
	db := foreign(t, url)
	ns := "'" + s.cfg.Namespace + "'"
	counts := func() [5]int {
		return [5]int{
			count(t, db, `SELECT COUNT(*) FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = `+ns),
			count(t, db, `SELECT COUNT(DISTINCT TABLE_NAME, INDEX_NAME) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = `+ns+` AND INDEX_NAME LIKE '%\_idx'`),
			count(t, db, `SELECT COUNT(*) FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = `+ns),
			count(t, db, `SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = `+ns),
			count(t, db, `SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = `+ns),
		}
	}
	if got := counts(); got != [5]int{9, 9, 1, 1, 9} {
		t.Errorf("after setup: foreign keys, indexes, checks, procedures, tables = %v; want [9 9 1 1 9] (with kv and the owner table)", got)
	}

	pc, err := s.PaymentsOpen(ctx, store.PaymentsConfig{Mode: store.PaymentsClient, Durability: store.PaymentsStrict, Isolation: "read-committed"})
	if err != nil {
		t.Fatal(err)
	}
	q := pc.(*paymentsConn).c.conn.(driver.QueryerContext)
	rows, err := q.QueryContext(ctx, `SELECT @@tx_isolation`, nil)
	if err != nil {
		t.Fatal(err)
	}
	dest := make([]driver.Value, 1)
	if err := rows.Next(dest); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if iso, _ := dest[0].([]byte); string(iso) != "READ-COMMITTED" {
		t.Errorf("session isolation %q", iso)
	}
	pc.Close()

	if err := s.PaymentsDrop(ctx); err != nil {
		t.Fatal(err)
	}
	if got := counts(); got != [5]int{0, 0, 0, 0, 2} {
		t.Errorf("after drop: %v; want [0 0 0 0 2] (kv and the owner table)", got)
	}
}

// The payments conformance suite, in every mode the store offers.
func TestPayments(t *testing.T) {
	storetest.RunPayments(t, func(t *testing.T) store.Store { return open(t, serverURL(t)) })
}

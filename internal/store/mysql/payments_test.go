package mysql

import (
	"context"
	"database/sql/driver"
	"testing"
	"time"

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
// procedure; sessions get the isolation asked for; drop leaves only the
// store's own tables.
func TestPaymentsSchemaAndSessions(t *testing.T) {
	url := serverURL(t)
	s := open(t, url)
	ctx := context.Background()
	if _, err := s.PaymentsSetup(ctx, paymentsData()); err != nil {
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

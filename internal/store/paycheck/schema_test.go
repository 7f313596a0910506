package paycheck

import (
	"slices"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/store"
)

// TestLiteralInserts pins the statements the stores loaded before they
// shared LiteralTables, in both dialects, batches split where they were.
func TestLiteralInserts(t *testing.T) {
	d := &store.PaymentsData{
		Orgs:  3,
		Users: []store.PaymentsUser{{ID: 1, OrgID: 1}, {ID: 2, OrgID: 3, Frozen: true}},
		Tokens: []store.PaymentsToken{{Hash: [16]byte{0xab, 15: 0x01}, Permission: 2, UserID: 1,
			ExpiresAt: time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600))}},
		Accounts: 2,
		Account: func(id int64) store.PaymentsAccount {
			return store.PaymentsAccount{ID: id, OrgID: 1, Balance: 100 * id, Frozen: id == 2}
		},
		Card: func(id int64) store.PaymentsCard {
			return store.PaymentsCard{ID: id, AccountID: id, Expires: time.Date(2031, 12, 1, 0, 0, 0, 0, time.UTC), CVV: 123, Frozen: id == 1}
		},
	}
	for _, tc := range []struct {
		name string
		lit  Literals
		want []string
	}{
		{"mysql", Literals{True: "TRUE", False: "FALSE", Timestamp: "2006-01-02 15:04:05.000000"}, []string{
			`INSERT INTO t.organizations (id) VALUES (1),(2)`,
			`INSERT INTO t.organizations (id) VALUES (3)`,
			`INSERT INTO t.users (id, organization_id, frozen) VALUES (1,1,FALSE),(2,3,TRUE)`,
			`INSERT INTO t.permissions (id, name) VALUES (1,'transfer_requests:create'),(2,'transfers:create')`,
			`INSERT INTO t.tokens (hash, permission_id, user_id, expires_at) VALUES (X'ab000000000000000000000000000001',2,1,'2030-01-02 02:04:05.123456')`,
			`INSERT INTO t.accounts (id, organization_id, balance, frozen) VALUES (1,1,100,FALSE),(2,1,200,TRUE)`,
			`INSERT INTO t.cards (id, account_id, expiration_date, security_code, frozen) VALUES (1,1,'2031-12-01',123,TRUE),(2,2,'2031-12-01',123,FALSE)`,
		}},
		{"sqlite", Literals{True: "1", False: "0", Timestamp: "2006-01-02 15:04:05.000"}, []string{
			`INSERT INTO t.organizations (id) VALUES (1),(2)`,
			`INSERT INTO t.organizations (id) VALUES (3)`,
			`INSERT INTO t.users (id, organization_id, frozen) VALUES (1,1,0),(2,3,1)`,
			`INSERT INTO t.permissions (id, name) VALUES (1,'transfer_requests:create'),(2,'transfers:create')`,
			`INSERT INTO t.tokens (hash, permission_id, user_id, expires_at) VALUES (X'ab000000000000000000000000000001',2,1,'2030-01-02 02:04:05.123')`,
			`INSERT INTO t.accounts (id, organization_id, balance, frozen) VALUES (1,1,100,0),(2,1,200,1)`,
			`INSERT INTO t.cards (id, account_id, expiration_date, security_code, frozen) VALUES (1,1,'2031-12-01',123,1),(2,2,'2031-12-01',123,0)`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, table := range LiteralTables(d, tc.lit) {
				got = slices.AppendSeq(got, table.Inserts("t."+table.Name, 2))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("statements:\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestDataTables: setup creates every table but the check's own journal.
func TestDataTables(t *testing.T) {
	if slices.Contains(DataTables, "delete_journal") || len(DataTables) != len(Tables)-1 {
		t.Errorf("DataTables %v of Tables %v", DataTables, Tables)
	}
}

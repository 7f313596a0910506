package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

// A table named like a payments table but not recorded as storebench's is
// never dropped; after a drop, closing the store removes the file it made.
func TestPaymentsOwnership(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "p.db")
	s, err := New(ctx, Config{Path: path, Namespace: "pay"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if _, err := rawDB(t, path).Exec(`CREATE TABLE "pay_accounts" (x)`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PaymentsSetup(ctx, storetest.PaymentsData(time.Now().UTC())); !errors.Is(err, store.ErrNotOwned) {
		t.Errorf("setup over a foreign table: %v", err)
	}
	if err := s.PaymentsDrop(ctx); !errors.Is(err, store.ErrNotOwned) {
		t.Errorf("drop over a foreign table: %v", err)
	}
	var n int
	if err := rawDB(t, path).QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'pay_accounts'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the foreign table: %d, %v", n, err)
	}
	if _, err := rawDB(t, path).Exec(`DROP TABLE "pay_accounts"`); err != nil {
		t.Fatal(err)
	}

	if _, err := s.PaymentsSetup(ctx, storetest.PaymentsData(time.Now().UTC())); err != nil {
		t.Fatal(err)
	}
	pc, err := s.PaymentsOpen(ctx, store.PaymentsConfig{Mode: store.PaymentsClient, Durability: store.PaymentsStrict})
	if err != nil {
		t.Fatal(err)
	}
	var sync, fk int
	c := pc.(*paymentsConn).conn
	if err := c.QueryRowContext(ctx, `SELECT synchronous, foreign_keys FROM pragma_synchronous, pragma_foreign_keys`).Scan(&sync, &fk); err != nil || sync != 2 || fk != 1 {
		t.Errorf("worker connection: synchronous %d, foreign_keys %d (%v); want 2 (FULL), 1", sync, fk, err)
	}
	pc.Close()
	if _, err := s.PaymentsOpen(ctx, store.PaymentsConfig{Mode: store.PaymentsRoutine, Durability: store.PaymentsStrict}); !errors.Is(err, store.ErrUnsupported) {
		t.Errorf("routine mode: %v", err)
	}
	if err := s.PaymentsDrop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the store's file is left: %v", err)
	}
}

// The payments conformance suite, in every mode the store offers.
func TestPayments(t *testing.T) {
	storetest.RunPayments(t, func(t *testing.T) store.Store {
		return open(t, Config{Path: filepath.Join(t.TempDir(), "payments.db")})
	})
}

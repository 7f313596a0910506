package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/store"
)

// PaymentsData is a hand-made data set whose every row has a known
// property: user 2 is frozen and its token expired, account 5 is frozen,
// card 4 frozen, card 6 expired, card i's CVV is 100+i. RunPayments
// checks each; a store's own payments tests (schema, ownership) load it too.
func PaymentsData(now time.Time) *store.PaymentsData {
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	return &store.PaymentsData{
		Orgs:  2,
		Users: []store.PaymentsUser{{ID: 1, OrgID: 1}, {ID: 2, OrgID: 2, Frozen: true}},
		Tokens: []store.PaymentsToken{
			{Hash: [16]byte{1}, Permission: 1, UserID: 1, ExpiresAt: now.Add(time.Hour)},
			{Hash: [16]byte{1}, Permission: 2, UserID: 1, ExpiresAt: now.Add(time.Hour)},
			{Hash: [16]byte{2}, Permission: 1, UserID: 2, ExpiresAt: now.Add(-time.Hour)},
		},
		Accounts: 10,
		Account: func(id int64) store.PaymentsAccount {
			return store.PaymentsAccount{ID: id, OrgID: 1 + id%2, Balance: 1000, Frozen: id == 5}
		},
		Card: func(id int64) store.PaymentsCard {
			exp := today.AddDate(1, 0, 0)
			if id == 6 {
				exp = today.AddDate(0, 0, -3)
			}
			return store.PaymentsCard{ID: id, AccountID: id, Expires: exp, CVV: int16(100 + id), Frozen: id == 4}
		},
	}
}

// RunPayments is the payments conformance suite of the SQL stores: in every
// mode the store offers (store.PaymentsModer; both when it is not one), on
// a fresh store each, setup (twice: the second drops the first's tables)
// loads PaymentsData; the token and card lookups read every row property as
// it is; transfers get growing ids and the server's clock, an overdraft is
// declined and a missing account is an error that is not a conflict;
// deletes take the first transfer at or after an id; the check reads back
// facts that add up with the journal and show the mismatches and the
// malformed row without it; drop removes what check reads and may run
// twice; a cancelled context ends a round trip.
func RunPayments(t *testing.T, open Opener) {
	s := open(t) // the first mode's
	for i, mode := range paymentsModes(s) {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			if i > 0 {
				s = open(t)
			}
			t.Cleanup(func() {
				if err := s.Close(context.Background()); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			pay := mustImplement[store.Payments](t, s)
			cfg := store.PaymentsConfig{Mode: mode, Durability: store.PaymentsStrict}
			if _, err := pay.PaymentsPrepare(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			now := time.Now().UTC()
			for range 2 { // the second setup drops the first one's tables
				if _, err := pay.PaymentsSetup(ctx, PaymentsData(now)); err != nil {
					t.Fatal(err)
				}
			}
			info, err := pay.PaymentsSetup(ctx, PaymentsData(now))
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Duration(info.ServerNowUs-now.UnixMicro()) * time.Microsecond; d < -time.Minute || d > time.Minute || info.DDL == "" {
				t.Errorf("setup: server clock %v away from ours, DDL %q", d, info.DDL)
			}
			c, err := pay.PaymentsOpen(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()

			var tok store.PaymentsTokenRow
			for _, tc := range []struct {
				hash byte
				perm string
				ok   bool
				want store.PaymentsTokenRow
			}{
				{1, store.PermTransferRequestsCreate, true, store.PaymentsTokenRow{UserID: 1, OrgID: 1}},
				{1, store.PermTransfersCreate, true, store.PaymentsTokenRow{UserID: 1, OrgID: 1}},
				{2, store.PermTransferRequestsCreate, true, store.PaymentsTokenRow{UserID: 2, OrgID: 2, UserFrozen: true, Expired: true}},
				{2, store.PermTransfersCreate, false, store.PaymentsTokenRow{}},
				{3, store.PermTransferRequestsCreate, false, store.PaymentsTokenRow{}},
			} {
				tok = store.PaymentsTokenRow{}
				ok, err := c.Token(ctx, &[16]byte{tc.hash}, tc.perm, &tok)
				if err != nil || ok != tc.ok || tok != tc.want {
					t.Errorf("token %d %s: %v %+v %v, want %v %+v", tc.hash, tc.perm, ok, tok, err, tc.ok, tc.want)
				}
			}
			var card store.PaymentsCardRow
			for _, tc := range []struct {
				id   int64
				ok   bool
				want store.PaymentsCardRow
			}{
				{3, true, store.PaymentsCardRow{AccountID: 3, AccountOrgID: 2, Balance: 1000, CVV: 103}},
				{4, true, store.PaymentsCardRow{AccountID: 4, AccountOrgID: 1, Balance: 1000, CVV: 104, CardFrozen: true}},
				{5, true, store.PaymentsCardRow{AccountID: 5, AccountOrgID: 2, Balance: 1000, CVV: 105, AccountFrozen: true}},
				{6, true, store.PaymentsCardRow{AccountID: 6, AccountOrgID: 1, Balance: 1000, CVV: 106, CardExpired: true}},
				{99, false, store.PaymentsCardRow{}},
			} {
				card = store.PaymentsCardRow{}
				ok, err := c.Card(ctx, tc.id, &card)
				if err != nil || ok != tc.ok || card != tc.want {
					t.Errorf("card %d: %v %+v %v, want %v %+v", tc.id, ok, card, err, tc.ok, tc.want)
				}
			}

			// Transfers: 8 → 3 (higher id pays), 3 → 8 payer first, an
			// amount of 0, an overdraft, a missing account.
			var ids []int64
			for _, tr := range []store.PaymentsTransfer{
				{Card: 8, From: 8, To: 3, User: 2, Amount: 10},
				{Card: 3, From: 3, To: 8, User: 1, Amount: 25, PayerFirst: true},
				{Card: 2, From: 2, To: 7, User: 2, Amount: 0},
			} {
				if err := c.Transfer(ctx, &tr); err != nil || tr.Insufficient || tr.ID <= 0 {
					t.Fatalf("transfer %+v: %v", tr, err)
				}
				if d := time.Duration(tr.CreatedUs-now.UnixMicro()) * time.Microsecond; d < -time.Minute || d > time.Minute || tr.CreatedUs < info.ServerNowUs {
					t.Errorf("created_at %v from now, before setup's end: %v", d, tr.CreatedUs < info.ServerNowUs)
				}
				ids = append(ids, tr.ID)
			}
			if !(ids[0] < ids[1] && ids[1] < ids[2]) {
				t.Errorf("ids %v do not grow", ids)
			}
			over := store.PaymentsTransfer{Card: 9, From: 9, To: 2, User: 1, Amount: 1001}
			if err := c.Transfer(ctx, &over); err != nil || !over.Insufficient || over.ID != 0 {
				t.Errorf("overdraft: %+v, %v", over, err)
			}
			missing := store.PaymentsTransfer{Card: 1, From: 1, To: 77, User: 1, Amount: 1}
			if err := c.Transfer(ctx, &missing); err == nil || missing.ID != 0 {
				t.Errorf("to a missing account: %+v, %v", missing, err)
			} else if errclass.Classify(err) == errclass.ClassConflict {
				t.Errorf("to a missing account: %v is classed as a conflict (it would be retried)", err)
			}

			// Deletes: the first at or after an id, then none past the last.
			var del store.PaymentsDeleted
			ok, err := c.DeleteTransfer(ctx, ids[1], &del)
			if err != nil || !ok || del.ID != ids[1] || del.From != 3 || del.To != 8 || del.Amount != 25 || del.CreatedUs <= 0 {
				t.Fatalf("delete from %d: %v %+v %v", ids[1], ok, del, err)
			}
			if ok, err := c.DeleteTransfer(ctx, ids[2]+1, &del); err != nil || ok {
				t.Errorf("delete past the last: %v %v", ok, err)
			}

			f, err := pay.PaymentsCheck(ctx, &store.PaymentsCheckInput{InitialBalance: 1000, AmountMin: 0, AmountMax: 999,
				WindowStartUs: info.ServerNowUs, Journal: []store.PaymentsDeleted{del}, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			if f.Accounts != 10 || f.SumBalance != 10000 || f.Rows != 2 || f.MismatchedCount != 0 || f.NegativeCount != 0 || f.MalformedCount != 0 ||
				len(f.PerMinute) == 0 || f.WindowEndUs < info.ServerNowUs {
				t.Errorf("facts %+v", f)
			}
			// Without the journal, accounts 3 and 8 do not add up; a
			// transfer of the wrong organization's user breaks a row rule.
			bad := store.PaymentsTransfer{Card: 1, From: 1, To: 2, User: 2, Amount: 1}
			if err := c.Transfer(ctx, &bad); err != nil {
				t.Fatal(err)
			}
			f, err = pay.PaymentsCheck(ctx, &store.PaymentsCheckInput{InitialBalance: 1000, AmountMin: 0, AmountMax: 999, WindowStartUs: info.ServerNowUs, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			if f.MismatchedCount != 2 || len(f.Mismatched) != 2 || f.Mismatched[0] != (store.PaymentsMismatch{Account: 3, Balance: 1000 + 10 - 25, Expected: 1000 + 10}) ||
				f.MalformedCount != 1 || f.Malformed[0].ID != bad.ID {
				t.Errorf("facts without the journal: %+v", f)
			}
			if _, err := pay.PaymentsStats(ctx); err != nil {
				t.Errorf("stats: %v", err)
			}
			if err := pay.PaymentsDrop(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := pay.PaymentsCheck(ctx, &store.PaymentsCheckInput{}); err == nil {
				t.Error("check after drop succeeded")
			}
			if err := pay.PaymentsDrop(ctx); err != nil {
				t.Errorf("second drop: %v", err)
			}
			var ctxErr error
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			if _, ctxErr = c.Card(cctx, 3, &card); !errors.Is(ctxErr, context.Canceled) {
				t.Errorf("cancelled context: %v", ctxErr)
			}
		})
	}
}

// paymentsModes are the modes s offers: every one runs, so a mode offered
// by mistake fails.
func paymentsModes(s store.Store) []string {
	if m, ok := s.(store.PaymentsModer); ok {
		return m.PaymentsModes()
	}
	return []string{store.PaymentsRoutine, store.PaymentsClient}
}

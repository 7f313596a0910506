package store

import "testing"

func TestPaymentsTransferUpdates(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    PaymentsTransfer
		want [2]PaymentsUpdate
	}{
		{"lower id first, payer lower", PaymentsTransfer{From: 3, To: 7, Amount: 5}, [2]PaymentsUpdate{{3, -5}, {7, 5}}},
		{"lower id first, payee lower", PaymentsTransfer{From: 7, To: 3, Amount: 5}, [2]PaymentsUpdate{{3, 5}, {7, -5}}},
		{"payer first", PaymentsTransfer{From: 7, To: 3, Amount: 5, PayerFirst: true}, [2]PaymentsUpdate{{7, -5}, {3, 5}}},
	} {
		if got := tc.t.Updates(); got != tc.want {
			t.Errorf("%s: Updates() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestNonNil(t *testing.T) {
	if b := NonNil(nil); b == nil || len(b) != 0 {
		t.Errorf("NonNil(nil) = %#v, want an empty non-nil slice", b)
	}
	if b := []byte("k"); &NonNil(b)[0] != &b[0] {
		t.Error("NonNil(b) is not b")
	}
}

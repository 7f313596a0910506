package storetest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/store"
)

// SessionOptions adapt RunSessions to a store.
type SessionOptions struct {
	// Design is the base design; RunSessions sets TTL, RefreshBelow and
	// KeepaliveOnRead itself. Its zero value suits every store.
	Design store.SessionDesign
}

// RunSessions is the sessions conformance suite: expiry is honoured (no
// session is readable after it expires, and none is missing before), a
// keepalive extends exactly the sessions it names and brings no expired one
// back, skip-if-fresh leaves fresh sessions alone and extends the others, a
// read extends its session when the design says so, and the reaper of a
// store without native expiry removes expired sessions in capped batches.
//
// The checks share one timeline, in units of at least the store's expiry
// resolution (250 ms; 1 s for Memcached), on four fresh stores, one per
// design: 8.5 units in all. (Parallel subtests would wait for each other:
// go test runs GOMAXPROCS of them at a time.)
func RunSessions(t *testing.T, open Opener, o SessionOptions) {
	ctx := context.Background()
	// A sessions store says which design knobs it honours, so the
	// workload's summary can tell without knowing the store; every store
	// honours keepalive and skip_fresh (the workload's own behaviour).
	if k, ok := open(t).(store.SessionKnobber); !ok {
		t.Error("a sessions store names the design knobs it honours (store.SessionKnobber)")
	} else if knobs := k.SessionKnobs(); !slices.Contains(knobs, "keepalive") || !slices.Contains(knobs, "skip_fresh") {
		t.Errorf("SessionKnobs %v: keepalive and skip_fresh apply everywhere", knobs)
	}
	u := sessionUnit(t, open(t), o)
	design := func(ttl, refresh time.Duration, onRead bool) store.SessionDesign {
		d := o.Design
		d.TTL, d.RefreshBelow, d.KeepaliveOnRead = ttl, refresh, onRead
		return d
	}
	plainSt, freshSt, onReadSt, reapSt := open(t), open(t), open(t), open(t)
	plain := sessionHandle(t, plainSt, design(4*u, 0, false))
	fresh := sessionHandle(t, freshSt, design(4*u, 3*u, false))
	onRead := sessionHandle(t, onReadSt, design(4*u, 0, true))
	reap := sessionHandle(t, reapSt, design(2*u, 0, false))
	for _, h := range []store.SessionClient{plain, fresh, onRead, reap} {
		if err := h.Setup(ctx); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now()
	kept, dropped := createSessions(t, plain, 1, 10), createSessions(t, plain, 11, 10)
	fresh1 := createSessions(t, fresh, 1, 10)
	// Skip-if-fresh: a keepalive right after create extends nothing. Right
	// after: less than a unit may pass, and 40 more commits before it took
	// longer on a loaded machine (fsync per commit).
	if n, err := fresh.KeepAlive(ctx, fresh1); err != nil {
		t.Fatal(err)
	} else if n != 0 && n != -1 {
		t.Errorf("keepalive of fresh sessions extended %d, want 0", n)
	}
	fresh2 := createSessions(t, fresh, 11, 10)
	read, unread := createSessions(t, onRead, 1, 5), createSessions(t, onRead, 6, 5)
	old := createSessions(t, reap, 1, 20)
	expectRead(t, plain, kept, 1, true, "right after create")
	expectRead(t, plain, dropped, 11, true, "right after create")
	var tk time.Time
	for k := 1; k <= 8; k++ {
		sleepUntil(t0, time.Duration(k)*u)
		// Keepalive on read: reading every unit keeps a session alive for
		// twice its TTL.
		expectRead(t, onRead, read, 1, true, fmt.Sprintf("read every unit, at %d units", k))
		switch k {
		case 3:
			tk = time.Now()
			if n, err := plain.KeepAlive(ctx, kept); err != nil {
				t.Fatal(err)
			} else if n != 10 && n != -1 {
				t.Errorf("keepalive of 10 live sessions extended %d", n)
			}
			// Less than refresh-below left: extended.
			if n, err := fresh.KeepAlive(ctx, fresh2); err != nil {
				t.Fatal(err)
			} else if n != 10 && n != -1 {
				t.Errorf("keepalive of sessions with less than refresh-below left extended %d, want 10", n)
			}
			sleepUntil(t0, 3*u+u/2)
			sessionReap(t, reap, old, design(40*u, 0, false), reapSt)
		case 5:
			sleepUntil(t0, 5*u+u/2) // past the first TTL and its resolution, before the kept one's
			expectRead(t, plain, kept, 1, true, "kept alive, before the new expiry")
			expectRead(t, plain, dropped, 11, false, "not kept alive, after the TTL")
			expectRead(t, fresh, fresh1, 1, false, "fresh keepalive skipped, after the TTL")
			expectRead(t, fresh, fresh2, 11, true, "keepalive with less than refresh-below left")
		}
	}
	sleepUntil(tk, 5*u+u/2)
	expectRead(t, onRead, unread, 6, false, "never read, after twice the TTL")
	expectRead(t, plain, append(kept, dropped...), 1, false, "after every expiry")
	// A keepalive does not bring an expired session back.
	if _, err := plain.KeepAlive(ctx, kept); err != nil {
		t.Fatal(err)
	}
	expectRead(t, plain, kept, 1, false, "keepalive after expiry")
}

// sessionReap: the 20 sessions of h (TTL 2 units) have expired; they
// linger until reaped (stores without native expiry), a capped Reap removes
// at most its limit, an unbounded one the rest, and live sessions stay.
func sessionReap(t *testing.T, h store.SessionClient, old []int64, long store.SessionDesign, st store.Store) {
	ctx := context.Background()
	live := createSessions(t, sessionHandle(t, st, long), 21, 5) // same table, longer TTL
	if h.Caps().NativeExpiry {
		if n, err := h.Reap(ctx, 5); err != nil || n != 0 {
			t.Errorf("reap on a store with native expiry: %d, %v", n, err)
		}
		expectRead(t, h, old, 1, false, "expired")
		expectRead(t, h, live, 21, true, "live")
		return
	}
	s, err := h.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Rows != 25 || s.Expired != 20 || s.OldestExpired <= 0 {
		t.Errorf("before reaping: rows %d expired %d oldest %v, want 25, 20, > 0", s.Rows, s.Expired, s.OldestExpired)
	}
	if n, err := h.Reap(ctx, 5); err != nil || n != 5 {
		t.Errorf("capped reap: %d, %v; want 5", n, err)
	}
	if n, err := h.Reap(ctx, 0); err != nil || n != 15 {
		t.Errorf("unbounded reap: %d, %v; want the other 15", n, err)
	}
	if n, err := h.Reap(ctx, 5); err != nil || n != 0 {
		t.Errorf("reap with nothing expired: %d, %v", n, err)
	}
	if s, err = h.Observe(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Rows != 5 || s.Expired != 0 || s.OldestExpired != 0 {
		t.Errorf("after reaping: rows %d expired %d oldest %v, want 5, 0, 0", s.Rows, s.Expired, s.OldestExpired)
	}
	expectRead(t, h, old, 1, false, "reaped")
	expectRead(t, h, live, 21, true, "live, after reaping")
}

// sessionHandle opens a session handle, closed at the end of the test.
func sessionHandle(t *testing.T, st store.Store, d store.SessionDesign) store.SessionClient {
	t.Helper()
	h, err := mustImplement[store.Sessions](t, st).OpenSessions(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// sessionUnit is the time step of the suite: a quarter of the TTL, and at
// least the store's expiry resolution.
func sessionUnit(t *testing.T, st store.Store, o SessionOptions) time.Duration {
	d := o.Design
	d.TTL = time.Second
	return max(250*time.Millisecond, sessionHandle(t, st, d).Caps().Resolution)
}

func sessionPayload(i int) []byte {
	return fmt.Appendf(nil, `{"n":%d,"pad":"%s"}`, i, bytes.Repeat([]byte("x"), 200))
}

// createSessions creates n sessions and returns their ids.
func createSessions(t *testing.T, h store.SessionClient, first, n int) []int64 {
	t.Helper()
	ids := make([]int64, n)
	for i := range ids {
		id, err := h.Create(context.Background(), int64(first+i), sessionPayload(first+i))
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		ids[i] = id
	}
	return ids
}

// expectRead checks that each session is readable (with its payload) or not.
func expectRead(t *testing.T, h store.SessionClient, ids []int64, first int, want bool, when string) {
	t.Helper()
	var buf []byte
	bad := 0
	for i, id := range ids {
		got, ok, err := h.Read(context.Background(), id, buf)
		if err != nil {
			t.Fatalf("read %d: %v", id, err)
		}
		buf = got
		if ok != want {
			bad++
			if bad <= 3 {
				t.Errorf("%s: session %d readable = %v, want %v", when, id, ok, want)
			}
			continue
		}
		if ok && !bytes.Equal(got, sessionPayload(first+i)) {
			t.Errorf("%s: session %d payload %.40q…, want %.40q…", when, id, got, sessionPayload(first+i))
		}
	}
	if bad > 3 {
		t.Errorf("%s: %d of %d sessions wrong", when, bad, len(ids))
	}
}

func sleepUntil(t0 time.Time, d time.Duration) { time.Sleep(time.Until(t0.Add(d))) }

package storetest

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/storebench/storebench/internal/store"
)

// RunRecords runs the records conformance suite (store.Records, the ycsb
// workload's records) against a store that must offer it. scanOrder maps
// a key to what the store's scan orders by (records in the order of
// (scanOrder(key), key), a scan from start reading those whose scanOrder
// is at least start's); nil means the key itself, a SQL store's order.
func RunRecords(t *testing.T, open Opener, scanOrder func(key []byte) string) {
	if scanOrder == nil {
		scanOrder = func(key []byte) string { return string(key) }
	}
	runCases(t, open, Options{}, []testCase{
		{"RecordsRoundTrip", testRecordsRoundTrip},
		{"RecordsUpdate", testRecordsUpdate},
		{"RecordsSetupEmpties", testRecordsSetupEmpties},
		{"RecordsScan", func(t *testing.T, s store.Store, _ Options) { testRecordsScan(t, s, scanOrder) }},
		{"RecordsConcurrent", testRecordsConcurrent},
	})
}

// recordFields are YCSB's default field names, three of them.
var recordFields = []string{"field0", "field1", "field2"}

// RecordsConn sets up s's records of fields and opens a connection,
// closed when t ends.
func RecordsConn(t testing.TB, s store.Store, fields []string) store.RecordsConn {
	t.Helper()
	r := mustImplement[store.Records](t, s)
	layout, err := r.RecordsSetup(context.Background(), fields)
	if err != nil {
		t.Fatalf("RecordsSetup: %v", err)
	}
	if layout == "" {
		t.Error("RecordsSetup says no layout")
	}
	return openRecords(t, r)
}

func openRecords(t testing.TB, r store.Records) store.RecordsConn {
	t.Helper()
	c, err := r.RecordsOpen(context.Background())
	if err != nil {
		t.Fatalf("RecordsOpen: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("records Close: %v", err)
		}
	})
	return c
}

// record is key's record of n fields: printable bytes, as YCSB's, each
// field of its own length, v the version.
func record(key string, n, v int) [][]byte {
	vals := make([][]byte, n)
	for i := range vals {
		vals[i] = fmt.Appendf(nil, "%s/%d/v%d %s", key, i, v, bytes.Repeat([]byte{' ' + byte(i*7+v)%95}, i*3))
	}
	return vals
}

func newDst(n int) [][]byte { return make([][]byte, n) }

func mustInsert(t testing.TB, c store.RecordsConn, key string, vals [][]byte) {
	t.Helper()
	if err := c.Insert(context.Background(), []byte(key), vals); err != nil {
		t.Fatalf("Insert(%s): %v", key, err)
	}
}

// expectRecord reads key's every field and compares them with want.
func expectRecord(t testing.TB, c store.RecordsConn, key string, want [][]byte) {
	t.Helper()
	got := newDst(len(want))
	ok, err := c.Read(context.Background(), []byte(key), -1, got)
	if err != nil || !ok {
		t.Fatalf("Read(%s) = %v, %v; want the record", key, ok, err)
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("Read(%s) field %d = %q, want %q", key, i, got[i], want[i])
		}
	}
}

func testRecordsRoundTrip(t *testing.T, s store.Store, _ Options) {
	c := RecordsConn(t, s, recordFields)
	want := record("user1", len(recordFields), 0)
	mustInsert(t, c, "user1", want)
	expectRecord(t, c, "user1", want)
	// One field asked: at least it is read.
	got := newDst(len(recordFields))
	if ok, err := c.Read(context.Background(), []byte("user1"), 2, got); err != nil || !ok || !bytes.Equal(got[2], want[2]) {
		t.Errorf("Read(user1, field 2) = %q, %v, %v; want %q", got[2], ok, err, want[2])
	}
	if ok, err := c.Read(context.Background(), []byte("user2"), -1, got); err != nil || ok {
		t.Errorf("Read(missing) = %v, %v; want not found, no error", ok, err)
	}
	// Inserting a key twice is the store's error (a primary key, an
	// index), or a rewrite: either way the record must read whole.
	again := record("user1", len(recordFields), 1)
	if err := c.Insert(context.Background(), []byte("user1"), again); err == nil {
		expectRecord(t, c, "user1", again)
	} else {
		expectRecord(t, c, "user1", want)
	}
}

func testRecordsUpdate(t *testing.T, s store.Store, _ Options) {
	c := RecordsConn(t, s, recordFields)
	rec := record("user7", len(recordFields), 0)
	mustInsert(t, c, "user7", rec)
	// One field: the others stay.
	fresh := record("user7", len(recordFields), 1)
	if err := c.Update(context.Background(), []byte("user7"), 1, fresh); err != nil {
		t.Fatal(err)
	}
	rec[1] = fresh[1]
	expectRecord(t, c, "user7", rec)
	// Every field.
	fresh = record("user7", len(recordFields), 2)
	if err := c.Update(context.Background(), []byte("user7"), -1, fresh); err != nil {
		t.Fatal(err)
	}
	expectRecord(t, c, "user7", fresh)
}

// testRecordsSetupEmpties: a second setup (a run after an earlier one in
// the namespace) starts from no records, with its own fields.
func testRecordsSetupEmpties(t *testing.T, s store.Store, _ Options) {
	c := RecordsConn(t, s, recordFields)
	mustInsert(t, c, "user1", record("user1", len(recordFields), 0))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	fields := []string{"field0", "field1", "field2", "field3", "field4"}
	c = RecordsConn(t, s, fields)
	if ok, err := c.Read(context.Background(), []byte("user1"), -1, newDst(len(fields))); err != nil || ok {
		t.Fatalf("Read after a new setup = %v, %v; want no record", ok, err)
	}
	want := record("user1", len(fields), 3)
	mustInsert(t, c, "user1", want)
	expectRecord(t, c, "user1", want)
}

func testRecordsScan(t *testing.T, s store.Store, order func([]byte) string) {
	c := RecordsConn(t, s, recordFields)
	const n = 40
	keys := make([]string, 0, n)
	for i := range n {
		// Of several lengths, as YCSB's hashed keys: their order differs
		// from the order of a hash of them. Odd numbers are absent.
		keys = append(keys, fmt.Sprintf("user%d", i*2))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, i := range r.Perm(n) {
		mustInsert(t, c, keys[i], record(keys[i], len(recordFields), 0))
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(order([]byte(a)), order([]byte(b))), cmp.Compare(a, b))
	})
	type read struct{ key, f0 string }
	for _, tc := range []struct {
		start string
		n     int
	}{
		{keys[0], 5}, {keys[n/2], 10}, {keys[n-3], 10}, {"user13", 4}, {"user11", 1}, {"user9", 6}, {keys[n/3], 0}, {"zzz", 3},
	} {
		var want []read
		for _, k := range keys {
			if len(want) < tc.n && order([]byte(k)) >= order([]byte(tc.start)) {
				want = append(want, read{k, string(record(k, len(recordFields), 0)[0])})
			}
		}
		var got []read
		count, err := c.Scan(context.Background(), []byte(tc.start), tc.n, func(key []byte, vals [][]byte) error {
			if len(vals) != len(recordFields) {
				return fmt.Errorf("record %s has %d fields, want %d", key, len(vals), len(recordFields))
			}
			for i, v := range vals {
				if w := record(string(key), len(recordFields), 0)[i]; !bytes.Equal(v, w) {
					return fmt.Errorf("record %s field %d = %q, want %q", key, i, v, w)
				}
			}
			got = append(got, read{string(key), string(vals[0])})
			return nil
		})
		if err != nil {
			t.Fatalf("Scan(%s, %d): %v", tc.start, tc.n, err)
		}
		if count != len(got) || !slices.Equal(got, want) {
			t.Errorf("Scan(%s, %d) = %d: %v, want %v", tc.start, tc.n, count, got, want)
		}
	}
	// fn's error stops the scan and is returned.
	stop := fmt.Errorf("enough")
	if _, err := c.Scan(context.Background(), []byte(keys[0]), 5, func([]byte, [][]byte) error { return stop }); err != stop {
		t.Errorf("Scan with fn failing = %v, want fn's error", err)
	}
	// The connection still works after it.
	expectRecord(t, c, keys[0], record(keys[0], len(recordFields), 0))
}

// testRecordsConcurrent: connections of their own insert, update and read
// their own records at once.
func testRecordsConcurrent(t *testing.T, s store.Store, _ Options) {
	r := mustImplement[store.Records](t, s)
	if _, err := r.RecordsSetup(context.Background(), recordFields); err != nil {
		t.Fatal(err)
	}
	const clients, per = 4, 50
	conns := make([]store.RecordsConn, clients)
	for i := range conns {
		conns[i] = openRecords(t, r)
	}
	concurrently(t, clients, func(w int) error {
		c := conns[w]
		dst := newDst(len(recordFields))
		for i := range per {
			key := fmt.Sprintf("user%d_%03d", w, i)
			if err := c.Insert(context.Background(), []byte(key), record(key, len(recordFields), 0)); err != nil {
				return err
			}
			fresh := record(key, len(recordFields), 1)
			if err := c.Update(context.Background(), []byte(key), 0, fresh); err != nil {
				return err
			}
			ok, err := c.Read(context.Background(), []byte(key), -1, dst)
			if err != nil || !ok || !bytes.Equal(dst[0], fresh[0]) {
				return fmt.Errorf("read back %s: %v, %v, field0 %q", key, ok, err, dst[0])
			}
		}
		return nil
	})
}

package store

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

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

func TestSessionDesignCheckTimes(t *testing.T) {
	for _, tc := range []struct {
		d    SessionDesign
		min  time.Duration
		want string // "" = no error
	}{
		{SessionDesign{TTL: time.Millisecond}, time.Millisecond, ""},
		{SessionDesign{TTL: time.Millisecond - 1}, time.Millisecond, "sqlite: sessions: TTL must be at least 1 ms"},
		{SessionDesign{TTL: time.Second, RefreshBelow: time.Second}, time.Millisecond, ""},
		{SessionDesign{TTL: time.Second, RefreshBelow: time.Second + 1}, time.Millisecond, "sqlite: sessions: refresh-below 1.000000001s must lie between 0 and the TTL 1s"},
		{SessionDesign{TTL: time.Second, RefreshBelow: -1}, time.Millisecond, "sqlite: sessions: refresh-below -1ns must lie between 0 and the TTL 1s"},
	} {
		err := tc.d.CheckTimes("sqlite", tc.min, "at least 1 ms")
		if got := fmt.Sprint(err); (tc.want == "" && err != nil) || (tc.want != "" && got != tc.want) {
			t.Errorf("%+v.CheckTimes = %v, want %q", tc.d, err, tc.want)
		}
	}
}

type fakeResult struct {
	n   int64
	err error
}

func (r fakeResult) RowsAffected() (int64, error) { return r.n, r.err }
func (r fakeResult) LastInsertId() (int64, error) { return r.n, r.err }

func TestRowsAffectedAndLastInsertID(t *testing.T) {
	execErr, countErr := errors.New("exec"), errors.New("count")
	for _, tc := range []struct {
		res     fakeResult
		err     error
		n       int64
		wantErr error
	}{
		{fakeResult{n: 3}, nil, 3, nil},
		{fakeResult{}, execErr, 0, execErr},
		{fakeResult{n: 3, err: countErr}, nil, 3, countErr},
	} {
		for name, f := range map[string]func(fakeResult, error) (int64, error){
			"RowsAffected": func(r fakeResult, err error) (int64, error) { return RowsAffected(r, err) },
			"LastInsertID": func(r fakeResult, err error) (int64, error) { return LastInsertID(r, err) },
		} {
			if n, err := f(tc.res, tc.err); n != tc.n || err != tc.wantErr {
				t.Errorf("%s(%+v, %v) = %d, %v; want %d, %v", name, tc.res, tc.err, n, err, tc.n, tc.wantErr)
			}
		}
	}
	// A failed Exec returns a nil Result: it must not be called.
	if _, err := RowsAffected(nil, execErr); err != execErr {
		t.Errorf("RowsAffected(nil, err) = %v", err)
	}
}

func TestEndOnce(t *testing.T) {
	var mu sync.Mutex
	var closed bool
	fail := errors.New("drop failed")
	runs := 0
	end := func() error { runs++; return fail }
	if Ended(&mu, &closed) {
		t.Fatal("Ended before EndOnce")
	}
	if err := EndOnce(&mu, &closed, end); err != fail {
		t.Errorf("first EndOnce = %v, want end's error", err)
	}
	if !Ended(&mu, &closed) {
		t.Error("not Ended after a failed end: the store must count as closed")
	}
	if err := EndOnce(&mu, &closed, end); err != nil || runs != 1 {
		t.Errorf("second EndOnce = %v after %d runs of end, want nil after 1", err, runs)
	}
}

func TestSortedNames(t *testing.T) {
	if got := SortedNames(map[string]bool{"sb_b": true, "sb_a": true}); strings.Join(got, ",") != "sb_a,sb_b" {
		t.Errorf("SortedNames = %v", got)
	}
	if got := SortedNames(nil); got == nil || len(got) != 0 {
		t.Errorf("SortedNames(nil) = %#v, want an empty slice", got)
	}
}

func TestRequireOwned(t *testing.T) {
	found := errors.New("query failed")
	for _, tc := range []struct {
		exists, owned bool
		err           error
		want          string
		notOwned      bool
	}{
		{true, true, nil, "<nil>", false},
		{true, true, found, "query failed", false},
		{false, false, nil, "postgres: close: schema sb_x does not exist", false},
		{true, false, nil, `postgres: close: schema sb_x has no "storebench" comment: not created by storebench; refusing to touch it`, true},
	} {
		err := RequireOwned("postgres", "close", "schema sb_x", `"storebench" comment`, tc.exists, tc.owned, tc.err)
		if got := fmt.Sprint(err); got != tc.want || errors.Is(err, ErrNotOwned) != tc.notOwned {
			t.Errorf("RequireOwned(%v, %v, %v) = %v, want %q (ErrNotOwned %v)", tc.exists, tc.owned, tc.err, err, tc.want, tc.notOwned)
		}
	}
}

func TestCheckServerURL(t *testing.T) {
	parse := func(raw string) error {
		if strings.Contains(raw, "bad") {
			return errors.New("invalid option")
		}
		return nil
	}
	for raw, want := range map[string]string{
		"":                                 "redis: no URL",
		"redis://:s3cret@db:6379/0":        "<nil>",
		"redis://:s3cret@db:6379/0?x=bad":  "redis: bad URL redis://db:6379/…: invalid option",
		"redis://:s3cret@db:6379/0?x=bad#": "redis: bad URL redis://db:6379/…: invalid option",
	} {
		if got := fmt.Sprint(CheckServerURL("redis", raw, parse)); got != want || strings.Contains(got, "s3cret") {
			t.Errorf("CheckServerURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestCheckServerConfig(t *testing.T) {
	parse := func(raw string) error {
		if strings.Contains(raw, "bad") {
			return errors.New("invalid option")
		}
		return nil
	}
	optionsErr := errors.New("redis: negative timeout")
	for _, tc := range []struct {
		url, ns string
		options error
		want    string
	}{
		{"redis://:s3cret@db:6379/0", "sb_x", nil, "<nil>"},
		{"", "sb_x", nil, "redis: no URL"},
		// The URL is checked first, the options next, the namespace last.
		{"redis://:s3cret@db:6379/0?x=bad", "BAD", optionsErr, "redis: bad URL redis://db:6379/…: invalid option"},
		{"redis://:s3cret@db:6379/0", "BAD", optionsErr, "redis: negative timeout"},
		{"redis://:s3cret@db:6379/0", "BAD", nil, `namespace "BAD": want 1-48 characters of [a-z0-9_] starting with a letter`},
	} {
		if got := fmt.Sprint(CheckServerConfig("redis", tc.url, parse, tc.options, tc.ns)); got != tc.want {
			t.Errorf("CheckServerConfig(%q, %v, %q) = %q, want %q", tc.url, tc.options, tc.ns, got, tc.want)
		}
	}
}

func TestCheckTimeout(t *testing.T) {
	for d, want := range map[time.Duration]string{-time.Nanosecond: "memcached: negative timeout", 0: "<nil>", time.Second: "<nil>"} {
		if got := fmt.Sprint(CheckTimeout("memcached", d)); got != want {
			t.Errorf("CheckTimeout(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestParseSchemeURL(t *testing.T) {
	for raw, want := range map[string]string{
		"redis-cluster://:s3cret@a:1,b:2/": "<nil>",
		"REDIS-CLUSTER://a:1/":             "<nil>",
		"redis://:s3cret@a:1/":             "want a redis-cluster:// URL",
		"redis-cluster://:s3/cret@a:1/":    "the password holds a character a URL reserves",
	} {
		_, err := ParseSchemeURL(raw, "redis-cluster")
		if got := fmt.Sprint(err); !strings.HasPrefix(got, want) || strings.Contains(got, "s3") {
			t.Errorf("ParseSchemeURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestCheckHostPorts(t *testing.T) {
	for _, tc := range []struct {
		hosts []string
		want  string
	}{
		{[]string{"a:1", "[::1]:65535", "10.0.0.1:11211"}, "<nil>"},
		{[]string{"a:1", "b"}, "node 2 of 2: want host:port, the port a number from 1 to 65535"},
		{[]string{":6379"}, "node 1 of 1: want host:port, the port a number from 1 to 65535"},
		{[]string{"a:0"}, "node 1 of 1: want host:port, the port a number from 1 to 65535"},
		{[]string{"a:65536"}, "node 1 of 1: want host:port, the port a number from 1 to 65535"},
		{[]string{"a:1", "s3cret:x"}, "node 2 of 2: want host:port, the port a number from 1 to 65535"},
	} {
		if got := fmt.Sprint(CheckHostPorts(tc.hosts, "node")); got != tc.want {
			t.Errorf("CheckHostPorts(%q) = %q, want %q", tc.hosts, got, tc.want)
		}
	}
}

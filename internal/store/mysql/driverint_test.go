package mysql

import (
	"database/sql/driver"
	"testing"
)

// driverInt serves the payments ops (binary protocol) and the sessions'
// samples (text protocol): text integers stay exact past 2^53, DECIMAL text
// keeps its integer part, and reading text costs no allocation (Token and
// Card read several values per op).
func TestDriverInt(t *testing.T) {
	for _, tc := range []struct {
		v    driver.Value
		want int64
	}{
		{int64(-7), -7},
		{uint64(42), 42},
		{float64(12.9), 12},
		{[]byte("9007199254740993"), 9007199254740993},
		{"9007199254740993", 9007199254740993},
		{[]byte("-3"), -3},
		{[]byte("12.5000"), 12},
		{"1e3", 1000},
		{[]byte("junk"), 0},
		{nil, 0},
	} {
		if got := driverInt(tc.v); got != tc.want {
			t.Errorf("driverInt(%#v) = %d, want %d", tc.v, got, tc.want)
		}
	}
	text := []byte("123456789")
	if n := testing.AllocsPerRun(100, func() { driverInt(text) }); n != 0 {
		t.Errorf("driverInt on text: %v allocations, want 0", n)
	}
}

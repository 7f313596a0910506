package store

import (
	"errors"
	"testing"
)

// DropOwned drops only a namespace that is there and carries the marker,
// and says which marker a refused one lacks.
func TestDropOwned(t *testing.T) {
	look := errors.New("look failed")
	for _, c := range []struct {
		name          string
		exists, owned bool
		err           error
		wantDrop      bool
		want          error
	}{
		{"look fails", true, true, look, false, look},
		{"gone", false, false, nil, false, nil},
		{"not ours", true, false, nil, false, ErrNotOwned},
		{"ours", true, true, nil, true, nil},
	} {
		dropped := false
		err := DropOwned("pg", "schema sb_x", `"storebench" comment`, c.exists, c.owned, c.err, func() error { dropped = true; return nil })
		if dropped != c.wantDrop || !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: dropped %v, err %v; want dropped %v, err %v", c.name, dropped, err, c.wantDrop, c.want)
		}
		if c.want == ErrNotOwned && err.Error() != `pg: schema sb_x has no "storebench" comment: `+ErrNotOwned.Error() {
			t.Errorf("%s: message %q", c.name, err)
		}
	}
}

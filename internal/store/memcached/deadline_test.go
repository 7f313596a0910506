package memcached

import (
	"net"
	"testing"
	"time"
)

// deadlineConn records the deadlines set on it.
type deadlineConn struct {
	net.Conn
	set []time.Time
}

func (d *deadlineConn) SetDeadline(t time.Time) error {
	d.set = append(d.set, t)
	return nil
}

func TestTrackedConnDeadline(t *testing.T) {
	const slack = time.Second
	t0 := time.Unix(1000, 0)
	fc := &deadlineConn{}
	c := &trackedConn{Conn: fc, slack: slack}
	steps := []struct {
		call  time.Time
		exact bool      // setDeadline rather than SetDeadline
		want  time.Time // deadline set on the connection; zero: none
	}{
		{call: t0, want: t0.Add(slack)},                                   // first: d+slack
		{call: t0.Add(slack / 2), want: time.Time{}},                      // within slack: kept
		{call: t0.Add(slack), want: time.Time{}},                          // exactly the deadline in force: kept
		{call: t0.Add(slack + 1), want: t0.Add(2*slack + 1)},              // later: moved
		{call: t0, want: t0},                                              // much earlier: set as is
		{call: t0.Add(-slack / 2), exact: true, want: t0.Add(-slack / 2)}, // a context's: exact
		{call: t0.Add(-slack), want: time.Time{}},                         // within slack of it: kept
	}
	for i, s := range steps {
		n := len(fc.set)
		var err error
		if s.exact {
			err = c.setDeadline(s.call)
		} else {
			err = c.SetDeadline(s.call)
		}
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case s.want.IsZero() && len(fc.set) != n:
			t.Errorf("step %d: SetDeadline(%v) set %v, want nothing", i, s.call, fc.set[n])
		case !s.want.IsZero() && (len(fc.set) != n+1 || !fc.set[n].Equal(s.want)):
			t.Errorf("step %d: SetDeadline(%v) set %v, want %v", i, s.call, fc.set[n:], s.want)
		}
	}
}

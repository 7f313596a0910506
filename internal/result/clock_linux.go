package result

import "golang.org/x/sys/unix"

// ReadClock asks the kernel how well the wall clock is disciplined; nil
// when it cannot say.
func ReadClock() *Clock {
	var t unix.Timex
	state, err := unix.Adjtimex(&t)
	if err != nil {
		return nil
	}
	// TIME_ERROR (5) is the kernel's "clock not synchronized".
	return &Clock{Synchronized: state != unix.TIME_ERROR, MaxErrorUs: t.Maxerror, EstErrorUs: t.Esterror}
}

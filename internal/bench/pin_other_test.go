//go:build !linux

package bench

import "errors"

func pinSelf(string) (func() error, int, error) {
	return nil, 0, errors.New("-versus.client-cpus needs Linux (sched_setaffinity); pass -versus.client-cpus= to run unpinned")
}

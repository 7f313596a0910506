//go:build !linux

package run

import "errors"

// canPin says whether CPU lists can be applied here: not without Linux's
// sched_setaffinity.
const canPin = false

func pinProcess(string) (func(), error) {
	return nil, errors.New("--client-cpus needs Linux (sched_setaffinity)")
}

func parseCPUList(string) ([]int, error) { return nil, nil }

func cannotPin(string) string { return "" }

//go:build !linux

package cli

import "errors"

func pinProcess(string) error {
	return errors.New("--client-cpus needs Linux (sched_setaffinity)")
}

func parseCPUList(string) ([]int, error) { return nil, nil }

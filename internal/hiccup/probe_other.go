//go:build !linux || !cgo

package hiccup

import "time"

type cProbe struct{}

func startProbe(int, time.Duration) (*cProbe, error) { return nil, ErrUnsupported }
func (*cProbe) drain(_, _ []int64) int               { return 0 }
func (*cProbe) cpu() time.Duration                   { return 0 }
func (*cProbe) failure() (uint64, error)             { return 0, nil }
func (*cProbe) stop() time.Duration                  { return 0 }

// AllowedCPUs: this platform cannot say.
func AllowedCPUs() ([]int, error) { return nil, ErrUnsupported }

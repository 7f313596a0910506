//go:build !linux

package hiccup

func pinThread(int) error          { return ErrUnsupported }
func AllowedCPUs() ([]int, error)  { return nil, ErrUnsupported }
func monotonicNow() (int64, error) { return 0, ErrUnsupported }
func sleepUntil(int64) error       { return ErrUnsupported }

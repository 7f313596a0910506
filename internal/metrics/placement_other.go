//go:build !linux

package metrics

// PlacementSampler needs Linux's /proc; elsewhere it records nothing.
type PlacementSampler struct{}

// StartPlacement returns nil outside Linux.
func StartPlacement(func() []int) *PlacementSampler { return nil }

// Stop returns nil outside Linux.
func (s *PlacementSampler) Stop() *Placement { return nil }

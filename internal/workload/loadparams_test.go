package workload

import "testing"

// A section's pointer field set to zero must win over the default: that
// zero is why the field is a pointer.
func TestValueOr(t *testing.T) {
	zero := 0
	if got := ValueOr(&zero, 5); got != 0 {
		t.Errorf("ValueOr(&0, 5) = %d, want 0", got)
	}
	if got := ValueOr(nil, 5); got != 5 {
		t.Errorf("ValueOr(nil, 5) = %d, want 5", got)
	}
}

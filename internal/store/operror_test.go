package store

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/storebench/storebench/internal/errclass"
)

// NewOpError names store and op in one line, keeps the cause reachable, and
// attaches the store's class only when it found one: "" lets errclass.Classify see a
// deadline inside.
func TestNewOpError(t *testing.T) {
	cause := fmt.Errorf("read: %w", context.DeadlineExceeded)
	for name, tc := range map[string]struct {
		class, want errclass.Class
	}{
		"store's class":    {errclass.ClassConflict, errclass.ClassConflict},
		"left to Classify": {"", errclass.ClassTimeout},
	} {
		t.Run(name, func(t *testing.T) {
			err := NewOpError("postgres", "get", cause, tc.class)
			if got := err.Error(); got != "postgres: get: read: context deadline exceeded" {
				t.Errorf("Error() = %q", got)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Error("the cause is not reachable through errors.Is")
			}
			if oe, ok := errors.AsType[*OpError](err); !ok || oe.Store != "postgres" || oe.Op != "get" {
				t.Errorf("no *OpError naming the store and op in %#v", err)
			}
			if got := errclass.Classify(err); got != tc.want {
				t.Errorf("Classify = %q, want %q", got, tc.want)
			}
		})
	}
}

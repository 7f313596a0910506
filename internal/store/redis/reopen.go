package redis

import (
	"context"

	"github.com/storebench/storebench/internal/store"
)

var _ store.Reconnector = (*Store)(nil)

// Reconnect replaces the store's administrative connection (Info, Reset,
// Close, ServerTime) after its server restarted: the old connection is
// broken, and its next command would fail before rueidis dials again. The
// keys are left as the restarted server has them.
func (s *Store) Reconnect(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	c, err := s.connect(ctx, "storebench-admin:"+s.cfg.Namespace, false, nil)
	if err != nil {
		return err
	}
	s.admin.Close()
	s.admin = c
	return nil
}

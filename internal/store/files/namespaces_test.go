package files

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func TestNamespaces(t *testing.T) {
	dir := t.TempDir()
	storetest.RunNamespaces(t, storetest.Namespaces{
		New: func(ctx context.Context, ns string) (store.Store, error) {
			return New(ctx, Config{Dir: dir, Namespace: ns})
		},
		List: func(ctx context.Context) ([]string, error) { return Namespaces(ctx, dir) },
		Drop: func(ctx context.Context, ns string) error { return DropNamespace(ctx, dir, ns) },
		Unmarked: func(t *testing.T, ns string) func(t *testing.T) {
			// A directory named like a namespace, without the marker.
			p := filepath.Join(dir, ns, "00", "kYQ")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("theirs"), 0o644); err != nil {
				t.Fatal(err)
			}
			return func(t *testing.T) {
				if b, err := os.ReadFile(p); err != nil || string(b) != "theirs" {
					t.Errorf("unmarked file %s: %q, %v", p, b, err)
				}
			}
		},
	})
}

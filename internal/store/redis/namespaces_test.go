package redis

import (
	"context"
	"testing"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/store/storetest"
)

func TestNamespaces(t *testing.T) {
	url := servertest.Start(t, server.Redis, server.Options{}).URL
	storetest.RunNamespaces(t, storetest.Namespaces{
		New: func(ctx context.Context, ns string) (store.Store, error) {
			return New(ctx, Config{URL: url, Namespace: ns})
		},
		List: func(ctx context.Context) ([]string, error) { return Namespaces(ctx, url) },
		Drop: func(ctx context.Context, ns string) error { return DropNamespace(ctx, url, ns) },
		Unmarked: func(t *testing.T, ns string) func(t *testing.T) {
			c := raw(t, url)
			// Keys that name ns without being under its prefix "storebench:<ns>:".
			keys := []string{"storebench:" + ns, "xstorebench:" + ns + ":k", "sb:" + ns + ":k", "storebench:" + ns + "_x:k"}
			for _, k := range keys {
				if err := c.Do(context.Background(), c.B().Set().Key(k).Value("theirs").Build()).Error(); err != nil {
					t.Fatal(err)
				}
			}
			return func(t *testing.T) {
				for _, k := range keys {
					if v, err := c.Do(context.Background(), c.B().Get().Key(k).Build()).ToString(); err != nil || v != "theirs" {
						t.Errorf("unmarked key %s: %q, %v", k, v, err)
					}
				}
			}
		},
	})
}

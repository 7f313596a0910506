package redis

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/storebench/storebench/internal/store"
)

// keyspace is what a Redis store and a Redis Cluster store share: the
// namespace's key prefix, the administrative client (Info, Reset, Close)
// under its lock, and the lifecycle over them.
type keyspace struct {
	ns     string
	prefix string // KeyPrefix + ns + ":"
	loc    string // redacted URL
	limit  valueLimit

	mu     sync.Mutex
	admin  rueidis.Client
	closed bool

	// unlinkAll unlinks every key under prefix: on one server, or on
	// every node of a cluster.
	unlinkAll func(ctx context.Context) error
}

func newKeyspace(ns, url string) keyspace {
	return keyspace{ns: ns, prefix: KeyPrefix + ns + ":", loc: store.RedactURL(url)}
}

// defaultTimeout is a config's timeout: DefaultTimeout when it says 0.
func defaultTimeout(t time.Duration) time.Duration {
	if t == 0 {
		return DefaultTimeout
	}
	return t
}

// readLimit reads the server's value limit once the admin client is
// connected; a failure disconnects it.
func (k *keyspace) readLimit(ctx context.Context) error {
	var err error
	if k.limit, err = readValueLimit(ctx, k.admin); err != nil {
		k.admin.Close()
	}
	return err
}

// info is the store's Info: kind, location, namespace and how its clients
// work (client), then what the server says of itself (readServer) and,
// unless nil, more, all under the lock.
func (k *keyspace) info(ctx context.Context, kind, client string, more func(*store.Info) error) (store.Info, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return store.Info{}, errClosed
	}
	info := store.Info{Kind: kind, Location: k.loc, Namespace: k.ns, Settings: map[string]string{"client": client}}
	if err := readServer(ctx, k.admin, &info); err != nil {
		return store.Info{}, err
	}
	if more != nil {
		if err := more(&info); err != nil {
			return store.Info{}, err
		}
	}
	return info, nil
}

// Reset deletes every key with the namespace's prefix.
func (k *keyspace) Reset(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return errClosed
	}
	return k.unlinkAll(ctx)
}

// Close deletes the namespace's keys and disconnects. Closing twice is not an error.
func (k *keyspace) Close(ctx context.Context) error {
	return store.EndOnce(&k.mu, &k.closed, func() error {
		err := k.unlinkAll(ctx)
		k.admin.Close()
		return err
	})
}

// detach disconnects and leaves the namespace's keys in place.
func (k *keyspace) detach() error {
	return store.EndOnce(&k.mu, &k.closed, func() error {
		k.admin.Close()
		return nil
	})
}

// unlinkPrefix SCANs rc for the keys under prefix and unlinks them in
// batches of up to 1000 keys. Every key is checked against the prefix
// before it is unlinked, whatever SCAN returned. Errors are op's.
func unlinkPrefix(ctx context.Context, rc rueidis.Client, prefix, op string) error {
	pattern := prefix + "*" // the namespace holds no glob characters
	var cursor uint64
	for {
		e, err := rc.Do(ctx, rc.B().Scan().Cursor(cursor).Match(pattern).Count(1000).Build()).AsScanEntry()
		if err != nil {
			return opErr(op+": scan", err)
		}
		for _, k := range e.Elements {
			if !strings.HasPrefix(k, prefix) {
				return fmt.Errorf("redis: %s: SCAN returned %q outside %q: %w", op, k, prefix, store.ErrNotOwned)
			}
		}
		if len(e.Elements) > 0 {
			if err := rc.Do(ctx, rc.B().Unlink().Key(e.Elements...).Build()).Error(); err != nil {
				return opErr(op+": unlink", err)
			}
		}
		if cursor = e.Cursor; cursor == 0 {
			return nil
		}
	}
}

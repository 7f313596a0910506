package store

import (
	"context"
	"time"
)

// PerOpClient returns a client of st that opens a connection for each
// operation and closes it after, as a PHP page that connects per request
// does; the connect is part of the measured latency on purpose. It uses the
// store's per-request path (PerRequestOpener) where it has one.
func PerOpClient(st Store) KVClient {
	return &perOpClient{st: st}
}

// KVClient is a client that is a KV.
type KVClient interface {
	Client
	KV
}

type perOpClient struct{ st Store }

func (p *perOpClient) Close() error { return nil }

func (p *perOpClient) with(ctx context.Context, f func(KV) error) error {
	open := p.st.Open
	if o, ok := p.st.(PerRequestOpener); ok {
		open = o.OpenPerRequest
	}
	c, err := open(ctx)
	if err != nil {
		return err
	}
	kv, ok := c.(KV)
	if !ok {
		c.Close()
		return ErrUnsupported
	}
	err = f(kv)
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	return err
}

func (p *perOpClient) Get(ctx context.Context, key, dst []byte) (val []byte, ok bool, err error) {
	err = p.with(ctx, func(kv KV) error {
		val, ok, err = kv.Get(ctx, key, dst)
		return err
	})
	return val, ok, err
}

func (p *perOpClient) Set(ctx context.Context, key, val []byte, ttl time.Duration) error {
	return p.with(ctx, func(kv KV) error { return kv.Set(ctx, key, val, ttl) })
}

func (p *perOpClient) Delete(ctx context.Context, key []byte) error {
	return p.with(ctx, func(kv KV) error { return kv.Delete(ctx, key) })
}

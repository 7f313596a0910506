// Package web is the application-level test of the file_get_contents
// article: storebench serves a small HTTP endpoint that does one get from a
// store per request (and an empty endpoint as the baseline), drives it with
// its own HTTP clients, and reports requests per second. The store
// connections behind the endpoint are pooled, or opened per request.
package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/storebench/storebench/internal/errclass"
	"github.com/storebench/storebench/internal/load"
	"github.com/storebench/storebench/internal/metrics"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
)

// Params are one web cell's parameters.
type Params struct {
	Value string `json:"value"` // the cached value, "hello world" in the article
	// Load: Clients is the HTTP concurrency; ConnectPerOp opens a store
	// connection per request instead of taking one from a pool of Clients.
	Load workload.Load `json:"load"`
}

// Validate rejects impossible parameters before any work.
func (p Params) Validate() error {
	if p.Value == "" {
		return errors.New("web: value must not be empty")
	}
	if err := workload.CheckValueSize("value", len(p.Value)); err != nil {
		return fmt.Errorf("web: %w", err)
	}
	if p.Load.Pipeline > 1 {
		return errors.New("web: pipeline does not apply: one get per request")
	}
	if err := p.Load.Validate(); err != nil {
		return fmt.Errorf("web: %w", err)
	}
	return nil
}

// httpBytes is what one HTTP client and its request's handler keep: the
// transport's and the server connection's buffers, two goroutines.
const httpBytes = 64 << 10

// Memory estimates a cell's memory (workload.Estimate): per client its HTTP
// client, the handler serving it, its pooled store connection and the
// value, read and written out.
func (p Params) Memory() workload.Estimate {
	return workload.Estimate{Clients: p.Load.Clients, PerClient: workload.ClientBytes(0, httpBytes+2*int64(len(p.Value))), Data: workload.EntryBytes(len(p.Value))}
}

var key = []byte("web:hot")

// Run measures two phases over HTTP on loopback: "empty" (the handler does
// nothing: the HTTP floor) and "get" (the handler gets the value from the
// store and writes it out).
func Run(ctx context.Context, st store.Store, p Params, h workload.Hooks) ([]metrics.Phase, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := st.Reset(ctx); err != nil {
		return nil, fmt.Errorf("web: reset store: %w", err)
	}
	pool, closePool, err := workload.KVClients(ctx, st, workload.Load{Clients: p.Load.Clients, ConnectPerOp: p.Load.ConnectPerOp})
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	defer closePool()
	if err := pool[0].Set(ctx, key, []byte(p.Value), 0); err != nil {
		return nil, fmt.Errorf("web: write the value: %w", err)
	}

	srv, addr, err := serve(pool, []byte(p.Value))
	if err != nil {
		return nil, err
	}
	defer srv.Close()

	var phases []metrics.Phase
	for _, path := range []string{"empty", "get"} {
		workers := make([]load.Worker, p.Load.Clients)
		clients := make([]*http.Client, p.Load.Clients)
		for i := range workers {
			// One HTTP client per worker, keeping its connection alive, as hey does.
			clients[i] = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}
			workers[i] = &requester{c: clients[i], url: "http://" + addr + "/" + path, buf: make([]byte, 0, 64)}
		}
		cfg := p.Load.Config(path)
		if path == "get" {
			cfg.ClientIO = workload.ClientIO(pool)
		} else {
			cfg.NoStore = true // the empty endpoint touches no store
		}
		ph, err := load.Run(ctx, h.Apply(cfg), workers)
		for _, c := range clients {
			c.CloseIdleConnections()
		}
		phases = append(phases, ph)
		if err != nil {
			return phases, fmt.Errorf("web %s phase: %w", path, err)
		}
	}
	return phases, nil
}

// serve starts the endpoint on a free loopback port.
func serve(pool []store.KV, want []byte) (*http.Server, string, error) {
	free := make(chan store.KV, len(pool))
	for _, c := range pool {
		free <- c
	}
	bufs := sync.Pool{New: func() any { b := make([]byte, 0, 64); return &b }}
	mux := http.NewServeMux()
	mux.HandleFunc("/empty", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("/get", func(w http.ResponseWriter, r *http.Request) {
		c := <-free
		bp := bufs.Get().(*[]byte)
		v, ok, err := c.Get(r.Context(), key, (*bp)[:0])
		free <- c
		defer func() { *bp = v[:0]; bufs.Put(bp) }()
		switch {
		case err != nil:
			http.Error(w, err.Error(), http.StatusBadGateway)
		case !ok || !bytes.Equal(v, want):
			http.Error(w, "value missing or wrong", http.StatusConflict)
		default:
			w.Header().Set("Content-Length", strconv.Itoa(len(v)))
			w.Write(v)
		}
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("web: listen: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	return srv, l.Addr().String(), nil
}

type requester struct {
	c   *http.Client
	url string
	buf []byte
}

// errStatus keeps the status code of a failed request for the error sample.
type errStatus struct {
	code int
	body string
}

func (e *errStatus) Error() string { return fmt.Sprintf("HTTP %d: %s", e.code, e.body) }

// Class makes a wrong value a mismatch and a store error unavailable.
func (e *errStatus) Class() errclass.Class {
	if e.code == http.StatusConflict {
		return errclass.ClassMismatch
	}
	return errclass.ClassUnavailable
}

func (r *requester) Do(ctx context.Context, _ int64) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return err
	}
	resp, err := r.c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	r.buf = r.buf[:0]
	for {
		if len(r.buf) == cap(r.buf) {
			r.buf = append(r.buf, 0)[:len(r.buf)]
		}
		n, err := resp.Body.Read(r.buf[len(r.buf):cap(r.buf)])
		r.buf = r.buf[:len(r.buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if resp.StatusCode >= 300 {
		return &errStatus{code: resp.StatusCode, body: string(r.buf)}
	}
	return nil
}

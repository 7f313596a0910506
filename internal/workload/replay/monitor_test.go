package replay

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storebench/storebench/internal/server"
	"github.com/storebench/storebench/internal/server/servertest"
	"github.com/storebench/storebench/internal/store"
	"github.com/storebench/storebench/internal/workload"
)

// binKey is a key of bytes MONITOR quotes: a quote, a backslash, a space,
// a newline, 0x00 and 0xff.
const binKey = "a:bin\"\\ \n\x00\xff"

// clientScripts are the commands each client sends, and the store calls
// their replay makes, in order ("get k", "set k", "delete k"); keys are
// each client's own (a:, b:, c:) so a connection's calls tell its clients
// apart.
var clientScripts = map[string]struct {
	cmds  [][]string
	calls []string
}{
	"a": {
		cmds: [][]string{{"SET", binKey, "v1", "EX", "100"}, {"GET", binKey}, {"INCR", "a:ctr"}, {"INCR", "a:ctr"},
			{"MGET", binKey, "a:none"}, {"HSET", "a:h", "f", "v"}, {"DEL", binKey}, {"GET", binKey}},
		calls: []string{"set " + binKey, "get " + binKey, "get a:ctr", "set a:ctr", "get a:ctr", "set a:ctr",
			"get " + binKey, "get a:none", "delete " + binKey, "get " + binKey},
	},
	"b": {
		cmds: [][]string{{"SETEX", "b:k", "100", "val"}, {"APPEND", "b:k", "xyz"}, {"GETSET", "b:k", "new"}, {"EXPIRE", "b:k", "50"},
			{"GETDEL", "b:k"}, {"GET", "b:k"}, {"PING"}},
		calls: []string{"set b:k", "get b:k", "set b:k", "get b:k", "set b:k", "get b:k", "set b:k", "get b:k", "delete b:k", "get b:k"},
	},
	"c": {
		cmds:  [][]string{{"MSET", "c:1", "x", "c:2", "y"}, {"DECRBY", "c:n", "5"}, {"PSETEX", "c:p", "100000", "z"}, {"DEL", "c:1", "c:2"}, {"GET", "c:p"}},
		calls: []string{"set c:1", "set c:2", "get c:n", "set c:n", "set c:p", "delete c:1", "delete c:2", "get c:p"},
	},
}

// TestReplayMonitorCapture captures MONITOR from a managed Redis with
// redis-cli while three clients run known commands, replays the capture
// on memory and PostgreSQL, and finds each client's commands as the same
// store calls in the same order, on one connection.
func TestReplayMonitorCapture(t *testing.T) {
	srv := servertest.Start(t, server.Redis, server.Options{Profile: "none"})
	capture := captureMonitor(t, srv.Addr, func() {
		var wg sync.WaitGroup
		for name, s := range clientScripts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sendAll(t, srv.Addr, name, s.cmds)
			}()
		}
		wg.Wait()
	})
	for _, kind := range []string{"memory", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			spy := &spyStore{Store: openers[kind](t)}
			_, sum := run(t, spy, Params{Trace: capture, Load: workload.Load{Clients: 3}})
			if sum.Format != "redis-monitor" || sum.Unsupported["hset"] != 1 || sum.Unsupported["ping"] != 1 {
				t.Errorf("format %s, unsupported %v: want redis-monitor, hset 1 and ping 1", sum.Format, sum.Unsupported)
			}
			for name, s := range clientScripts {
				conn, calls := spy.callsOf(name + ":")
				if !slices.Equal(calls, s.calls) {
					t.Errorf("client %s: the replay called\n%q\nwant\n%q", name, calls, s.calls)
				}
				if conn < 0 {
					t.Errorf("client %s's calls were spread over connections", name)
				}
			}
			kv := openKV(t, spy.Store)
			for key, want := range map[string]string{"a:ctr": "2", "c:n": "-5"} {
				if v, ok, err := kv.Get(context.Background(), []byte(key), nil); err != nil || !ok || string(v) != want {
					t.Errorf("%s = %q (%v, %v) after the replay, want %s", key, v, ok, err, want)
				}
			}
		})
	}
}

// captureMonitor runs redis-cli monitor against addr while work runs, and
// returns the capture's path.
func captureMonitor(t *testing.T, addr string, work func()) string {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	path := filepath.Join(t.TempDir(), "capture.txt")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command("redis-cli", "-h", host, "-p", port, "monitor")
	cmd.Stdout = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cmd.Process.Kill()
			cmd.Wait()
		}
	}
	defer stop()
	waitFor(t, path, "OK\n")
	work()
	// MONITOR's last lines may reach the capture after the replies: an
	// ECHO of our own, seen in it, marks the end.
	sendAll(t, addr, "end", [][]string{{"ECHO", "capture-end"}})
	waitFor(t, path, `"capture-end"`)
	stop()
	return path
}

// waitFor waits until the file at path holds s.
func waitFor(t *testing.T, path, s string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(path); strings.Contains(string(b), s) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	b, _ := os.ReadFile(path)
	t.Fatalf("%s never held %q: %q", path, s, b)
}

// sendAll sends cmds on a connection of its own, one at a time, each after
// the previous reply, as RESP arrays.
func sendAll(t *testing.T, addr, name string, cmds [][]string) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for _, args := range cmds {
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		if _, err := c.Write([]byte(b.String())); err != nil {
			t.Errorf("client %s: %v", name, err)
			return
		}
		if err := readReply(r); err != nil {
			t.Errorf("client %s, %q: %v", name, args, err)
			return
		}
		time.Sleep(2 * time.Millisecond) // the clients' commands interleave
	}
}

// readReply reads one RESP reply; an error reply is an error.
func readReply(r *bufio.Reader) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	line = strings.TrimSuffix(line, "\r\n")
	switch line[0] {
	case '-':
		return fmt.Errorf("redis: %s", line[1:])
	case '$':
		if n, _ := strconv.Atoi(line[1:]); n >= 0 {
			_, err = r.Discard(n + 2)
		}
		return err
	case '*':
		n, _ := strconv.Atoi(line[1:])
		for range n {
			if err := readReply(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// spyStore records the calls its clients make on the real store beneath,
// by connection.
type spyStore struct {
	store.Store
	mu    sync.Mutex
	calls [][]string // by connection
}

func (s *spyStore) Open(ctx context.Context) (store.Client, error) {
	c, err := s.Store.Open(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, nil)
	return &spyClient{Client: c, kv: c.(store.KV), s: s, conn: len(s.calls) - 1}, nil
}

// callsOf are the calls on keys with prefix, in order, and the one
// connection they were made on (-1 if several).
func (s *spyStore) callsOf(prefix string) (int, []string) {
	conn := -2
	var out []string
	for i, calls := range s.calls {
		for _, c := range calls {
			if _, key, _ := strings.Cut(c, " "); strings.HasPrefix(key, prefix) {
				out = append(out, c)
				if conn == -2 {
					conn = i
				} else if conn != i {
					conn = -1
				}
			}
		}
	}
	return conn, out
}

type spyClient struct {
	store.Client
	kv   store.KV
	s    *spyStore
	conn int
}

func (c *spyClient) log(op string, key []byte) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.s.calls[c.conn] = append(c.s.calls[c.conn], op+" "+string(key))
}

func (c *spyClient) Get(ctx context.Context, key, dst []byte) ([]byte, bool, error) {
	c.log("get", key)
	return c.kv.Get(ctx, key, dst)
}

func (c *spyClient) Set(ctx context.Context, key, val []byte, ttl time.Duration) error {
	c.log("set", key)
	return c.kv.Set(ctx, key, val, ttl)
}

func (c *spyClient) Delete(ctx context.Context, key []byte) error {
	c.log("delete", key)
	return c.kv.Delete(ctx, key)
}

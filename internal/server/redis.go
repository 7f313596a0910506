package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// redisDriver runs redis-server from a redis.conf written into DataDir.
type redisDriver struct{}

// redisSaveDefault is Redis 7's own snapshot schedule.
const redisSaveDefault = "3600 1 300 100 60 10000"

func (redisDriver) profiles() []profile {
	return []profile{
		{"none", map[string]string{"save": "", "appendonly": "no"}},
		{"rdb", map[string]string{"save": redisSaveDefault, "appendonly": "no"}},
		{"aof-everysec", map[string]string{"save": "", "appendonly": "yes", "appendfsync": "everysec", "aof-use-rdb-preamble": "no"}},
		{"aof-always", map[string]string{"save": "", "appendonly": "yes", "appendfsync": "always", "aof-use-rdb-preamble": "no"}},
		{"aof-rdb", map[string]string{"save": redisSaveDefault, "appendonly": "yes", "appendfsync": "everysec", "aof-use-rdb-preamble": "yes"}},
	}
}

// defaultProfile is what redis-server does with no config: RDB snapshots.
func (redisDriver) defaultProfile() string { return "rdb" }
func (redisDriver) users() []string        { return []string{"redis"} }
func (redisDriver) reserved() []string {
	return []string{"bind", "port", "protected_mode", "dir", "daemonize", "logfile", "unixsocket", "include"}
}
func (redisDriver) stopSignal() syscall.Signal { return syscall.SIGTERM }
func (redisDriver) url(s *Server) string       { return "redis://" + s.Addr }

func (redisDriver) init(context.Context, *Server) error { return nil }

// redisConfPath is redis.conf, or valkey.conf for a Valkey server.
func redisConfPath(s *Server) string { return filepath.Join(s.DataDir, string(s.Kind)+".conf") }

// command writes redis.conf (it holds the port, so per launch) and runs it.
// The conf file, not flags, so the data dir documents the run.
func (redisDriver) command(s *Server) (string, []string) {
	var b strings.Builder
	fmt.Fprintf(&b, "# written by storebench, profile %s\n", s.Profile)
	fmt.Fprintf(&b, "bind 127.0.0.1\nport %d\nprotected-mode yes\ndaemonize no\ndir %s\nlogfile \"\"\n", s.port, s.DataDir)
	for _, k := range sortedKeys(s.want) {
		v := s.want[k]
		if v == "" {
			v = `""`
		}
		fmt.Fprintf(&b, "%s %s\n", k, v)
	}
	// A write failure surfaces as redis-server's own "cannot open config".
	_ = os.WriteFile(redisConfPath(s), []byte(b.String()), 0o644)
	return s.bins.Server, []string{redisConfPath(s)}
}

func (redisDriver) probe(ctx context.Context, s *Server) error {
	c, err := respDial(ctx, s.Addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.do("PING"); err != nil {
		return err // e.g. LOADING while replaying the AOF
	}
	info, err := c.info("server")
	if err != nil {
		return err
	}
	if info["process_id"] != strconv.Itoa(s.PID) {
		return fmt.Errorf("%w: process_id %s", errNotOurs, info["process_id"])
	}
	return nil
}

func (redisDriver) setup(context.Context, *Server) error { return nil }

var redisAlways = []string{
	"save", "appendonly", "appendfsync", "aof-use-rdb-preamble", "no-appendfsync-on-rewrite",
	"auto-aof-rewrite-percentage", "maxmemory", "maxmemory-policy", "io-threads", "io-threads-do-reads",
	"hz", "lazyfree-lazy-eviction", "lazyfree-lazy-expire", "rdbcompression", "databases", "tcp-backlog",
}

func (redisDriver) inspect(ctx context.Context, s *Server) (string, map[string]string, error) {
	return inspectRESP(ctx, s, "redis_version")
}

// inspectRESP reads back a Redis or Valkey server: its version from the
// INFO server field versionField, its allocator (INFO memory's
// mem_allocator, recorded as a setting: jemalloc or libc malloc changes
// memory use and speed), and its settings one CONFIG GET at a time.
func inspectRESP(ctx context.Context, s *Server, versionField string) (string, map[string]string, error) {
	c, err := respDial(ctx, s.Addr)
	if err != nil {
		return "", nil, err
	}
	defer c.Close()
	info, err := c.info("server")
	if err != nil {
		return "", nil, err
	}
	mem, err := c.info("memory")
	if err != nil {
		return "", nil, err
	}
	settings := map[string]string{"mem_allocator": mem["mem_allocator"]}
	// One name per CONFIG GET: Redis before 7 takes a single pattern.
	for _, name := range append(append([]string{}, redisAlways...), sortedKeys(s.want)...) {
		reply, err := c.do("CONFIG", "GET", name)
		if err != nil {
			return "", nil, err
		}
		kv, _ := reply.([]any)
		for i := 0; i+1 < len(kv); i += 2 {
			k, _ := kv[i].(string)
			v, _ := kv[i+1].(string)
			settings[k] = v
		}
	}
	return info[versionField], settings, nil
}

// valkeyDriver runs valkey-server like redis-server: the same profiles and
// config file. Valkey reports redis_version 7.2.4 for clients' sake; its
// own version is valkey_version.
type valkeyDriver struct{ redisDriver }

func (valkeyDriver) users() []string { return []string{"valkey", "redis"} }

func (valkeyDriver) inspect(ctx context.Context, s *Server) (string, map[string]string, error) {
	return inspectRESP(ctx, s, "valkey_version")
}

func (redisDriver) durability(st map[string]string) string {
	if st["appendonly"] == "yes" {
		preamble := ""
		if st["aof-use-rdb-preamble"] == "yes" {
			preamble = " (RDB preamble)"
		}
		switch st["appendfsync"] {
		case "always":
			return "AOF" + preamble + " fsynced before every reply: a crash loses nothing acknowledged"
		case "everysec":
			return "AOF" + preamble + " fsynced every second: a crash loses up to ~1-2 s of writes"
		default:
			return "AOF" + preamble + " never fsynced by Redis: an OS crash loses what the OS had not flushed (~30 s)"
		}
	}
	if st["save"] != "" {
		return "RDB snapshots (save " + st["save"] + "): a crash loses every write since the last snapshot"
	}
	return "memory only: a crash or restart loses everything"
}

func (redisDriver) crashLoss(set map[string]string) (processCrash, powerLoss string) {
	switch {
	case setting(set, "appendonly") == "yes" && setting(set, "appendfsync") == "always":
		return "nothing acknowledged: the AOF is written and fsynced before the reply",
			"nothing acknowledged (fsync before every reply), if the disk honours fsync"
	case setting(set, "appendonly") == "yes" && setting(set, "appendfsync") == "everysec":
		return "almost nothing: Redis write()s the AOF before replying, so the page cache keeps it; only a write delayed behind a slow background fsync can be lost",
			"up to ~1-2 s of acknowledged writes (the AOF is fsynced once a second)"
	case setting(set, "appendonly") == "yes":
		return "almost nothing: the AOF is written before the reply and left to the OS",
			"whatever the OS had not flushed, typically up to ~30 s"
	case setting(set, "save") != "":
		return "every write since the last RDB snapshot (save " + set["save"] + ")",
			"every write since the last RDB snapshot that reached the disk"
	}
	return "everything: memory only, nothing is written", "everything"
}

// respConn is a minimal RESP2 client: enough to probe and inspect a server
// without the full client library's connection management.
type respConn struct {
	net.Conn
	r *bufio.Reader
}

func respDial(ctx context.Context, addr string) (*respConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	} else {
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	}
	return &respConn{Conn: c, r: bufio.NewReader(c)}, nil
}

func (c *respConn) do(args ...string) (any, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(c.Conn, b.String()); err != nil {
		return nil, err
	}
	return c.read()
}

func (c *respConn) read() (any, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return nil, errors.New("redis: empty reply")
	}
	body := line[1:]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return nil, errors.New("redis: " + body)
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = c.read(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("redis: unexpected reply %q", line)
}

// info returns one INFO section as key/value pairs.
func (c *respConn) info(section string) (map[string]string, error) {
	return c.fields("INFO", section)
}

// fields runs a command whose reply is "key:value" lines (INFO, CLUSTER
// INFO) and returns them as key/value pairs.
func (c *respConn) fields(args ...string) (map[string]string, error) {
	reply, err := c.do(args...)
	if err != nil {
		return nil, err
	}
	text, _ := reply.(string)
	m := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			m[k] = v
		}
	}
	return m, nil
}

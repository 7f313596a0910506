package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// memcachedDriver runs memcached. It keeps nothing on disk; its data dir
// holds only its log.
type memcachedDriver struct{}

// memcachedFlags maps storebench setting names to memcached's flags; any
// other setting becomes an extended option, -o name=value.
var memcachedFlags = map[string]string{"memory_mb": "-m", "threads": "-t", "max_connections": "-c"}

func (memcachedDriver) profiles() []profile {
	return []profile{{"default", map[string]string{"memory_mb": "1024", "threads": "4", "max_connections": "4096"}}}
}

func (memcachedDriver) defaultProfile() string { return "default" }
func (memcachedDriver) users() []string        { return []string{"memcache", "memcached"} }
func (memcachedDriver) reserved() []string {
	return []string{"listen", "port", "udp_port", "user", "unix_socket", "daemonize"}
}
func (memcachedDriver) stopSignal() syscall.Signal { return syscall.SIGTERM }
func (memcachedDriver) url(s *Server) string       { return "memcached://" + s.Addr }

func (memcachedDriver) init(context.Context, *Server) error  { return nil }
func (memcachedDriver) setup(context.Context, *Server) error { return nil }

func (memcachedDriver) command(s *Server) (string, []string) {
	// -U 0: no UDP, which is also an amplification risk.
	args := []string{"-l", "127.0.0.1", "-p", strconv.Itoa(s.port), "-U", "0"}
	for _, k := range sortedKeys(s.want) {
		v := s.want[k]
		switch flag, ok := memcachedFlags[k]; {
		case ok:
			args = append(args, flag, v)
		case v == "":
			args = append(args, "-o", k)
		default:
			args = append(args, "-o", k+"="+v)
		}
	}
	return s.bins.Server, args
}

func (memcachedDriver) probe(ctx context.Context, s *Server) error {
	stats, err := memcachedStats(ctx, s.Addr, "")
	if err != nil {
		return err
	}
	if stats["pid"] != strconv.Itoa(s.PID) {
		return fmt.Errorf("%w: pid %s", errNotOurs, stats["pid"])
	}
	return nil
}

func (memcachedDriver) inspect(ctx context.Context, s *Server) (string, map[string]string, error) {
	version, err := memcachedVersion(ctx, s.Addr)
	if err != nil {
		return "", nil, err
	}
	settings, err := memcachedStats(ctx, s.Addr, "settings")
	return version, settings, err
}

func (memcachedDriver) durability(map[string]string) string {
	return "memory only: a crash or restart loses everything"
}

func (memcachedDriver) crashLoss(map[string]string) (processCrash, powerLoss string) {
	return "everything: memory only", "everything"
}

func memcachedDial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(5 * time.Second)
	}
	_ = c.SetDeadline(dl)
	return c, nil
}

func memcachedVersion(ctx context.Context, addr string) (string, error) {
	c, err := memcachedDial(ctx, addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if _, err := io.WriteString(c, "version\r\n"); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", err
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(line), "VERSION ")
	if !ok {
		return "", fmt.Errorf("memcached: unexpected reply %q", line)
	}
	return v, nil
}

// memcachedStats runs "stats [group]" and returns its STAT lines.
func memcachedStats(ctx context.Context, addr, group string) (map[string]string, error) {
	c, err := memcachedDial(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if _, err := io.WriteString(c, strings.TrimSpace("stats "+group)+"\r\n"); err != nil {
		return nil, err
	}
	m := map[string]string{}
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimSpace(line)
		if line == "END" {
			return m, nil
		}
		f := strings.SplitN(line, " ", 3)
		if len(f) < 2 || f[0] != "STAT" {
			return nil, fmt.Errorf("memcached: unexpected reply %q", line)
		}
		if len(f) == 3 {
			m[f[1]] = f[2]
		} else {
			m[f[1]] = ""
		}
	}
}

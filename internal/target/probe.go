package target

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/storebench/storebench/internal/store"
)

var defaultPorts = map[string]string{
	"postgres": "5432", "postgresql": "5432", "redis": "6379", "rediss": "6379",
	"memcached": "11211", "mysql": "3306", "mariadb": "3306",
}

// Probe checks that an external target can be reached, within ExternalTimeout,
// so an unreachable server is reported before any work starts.
func Probe(ctx context.Context, k Kind, raw string) error {
	u, err := store.ParseURL(raw)
	if err != nil {
		return fmt.Errorf("malformed URL: %v", err)
	}
	if k.Server == "" {
		dir := u.Path
		if u.Scheme == "sqlite" {
			dir = filepath.Dir(u.Path)
		}
		st, err := os.Stat(dir)
		if err != nil || !st.IsDir() {
			return fmt.Errorf("directory %s does not exist", dir)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, ExternalTimeout)
	defer cancel()
	if nodes := strings.Split(u.Host, ","); len(nodes) > 1 && k.EveryNode {
		for i, node := range nodes {
			if err := dialOnce(ctx, node); err != nil {
				return fmt.Errorf("%s: node %d of %d (%s) does not answer (%v); are they all running and reachable?", k.Name, i+1, len(nodes), node, err)
			}
		}
		return nil
	}
	if seeds := strings.Split(u.Host, ","); len(seeds) > 1 {
		// A cluster's seeds: the client needs one that answers.
		var errs []string
		for _, seed := range seeds {
			err := dialOnce(ctx, seed)
			if err == nil {
				return nil
			}
			errs = append(errs, err.Error())
		}
		return fmt.Errorf("%s: none of the %d seed nodes answers (%s); are they running and reachable?", k.Name, len(seeds), strings.Join(errs, "; "))
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), defaultPorts[u.Scheme])
	}
	if err := dialOnce(ctx, host); err != nil {
		return fmt.Errorf("%s server at %s does not answer (%v); is it running and reachable?", k.Name, host, err)
	}
	return nil
}

func dialOnce(ctx context.Context, host string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return err
	}
	return c.Close()
}

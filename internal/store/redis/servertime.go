package redis

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/storebench/storebench/internal/store"
)

var _ store.ServerTimer = (*Store)(nil)

// serverTimeSource says what the figures cover: Redis counts per command for
// the whole server, not per key prefix.
const serverTimeSource = "INFO commandstats usec: the whole server's data commands (every client and key prefix, not only this store's), command execution only"

// notOps are commands that are not data operations: connection set-up,
// administration and storebench's own housekeeping (INFO, SCAN, UNLINK of
// Reset). Subcommands ("config|get", "client|setinfo") go by their command.
var notOps = map[string]bool{
	"info": true, "config": true, "client": true, "hello": true, "ping": true, "auth": true,
	"select": true, "command": true, "scan": true, "unlink": true, "quit": true, "reset": true,
	"echo": true, "slowlog": true, "latency": true, "memory": true, "debug": true, "monitor": true,
}

// cmdOps renames commands to the operation names the other stores use.
var cmdOps = map[string]string{"del": "delete"}

// ServerTime reads INFO commandstats on the store's admin connection (never a
// worker's): calls and usec of every data command, cumulative since the
// server started or CONFIG RESETSTAT. They cover the whole server: another
// client's GETs count as ours.
func (s *Store) ServerTime(ctx context.Context) (store.ServerTime, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.ServerTime{}, errClosed
	}
	raw, err := s.admin.Do(ctx, s.admin.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		return store.ServerTime{}, opErr("server time: INFO commandstats", err)
	}
	return parseCommandStats(raw), nil
}

// parseCommandStats reads lines such as
// "cmdstat_get:calls=10,usec=20,usec_per_call=2.00,rejected_calls=0,failed_calls=0".
func parseCommandStats(raw string) store.ServerTime {
	st := store.ServerTime{Source: serverTimeSource, Ops: map[string]store.OpTime{}}
	for _, line := range strings.Split(raw, "\n") {
		name, fields, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		name = strings.ToLower(strings.TrimPrefix(name, "cmdstat_"))
		if cmd, _, _ := strings.Cut(name, "|"); notOps[cmd] {
			continue
		}
		if op, ok := cmdOps[name]; ok {
			name = op
		}
		var t store.OpTime
		for _, f := range strings.Split(fields, ",") {
			k, v, _ := strings.Cut(f, "=")
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				continue
			}
			switch k {
			case "calls":
				t.Calls = n
			case "usec":
				t.Total = time.Duration(n) * time.Microsecond
			}
		}
		o := st.Ops[name]
		o.Calls += t.Calls
		o.Total += t.Total
		st.Ops[name] = o
	}
	return st
}

package server

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// ReloadTimeout bounds how long Reconfigure waits for reloaded settings to
// show.
const ReloadTimeout = 5 * time.Second

// Reconfigure applies settings on top of the ones the server runs with (its
// profile and Options.Settings) and reads the effective settings back.
// PostgreSQL settings that a reload applies (autovacuum_naptime…) are set
// with ALTER SYSTEM and pg_reload_conf(), without a restart; any other
// setting (autovacuum_max_workers before PostgreSQL 18; every setting of
// the other kinds) restarts the server on the same data dir and port:
// clients lose their connections, and Running is false for the moment of
// the restart. The settings also go on the command line of later restarts.
// Reserved settings are refused, as by Start.
func (s *Server) Reconfigure(ctx context.Context, settings map[string]string) error {
	s.mu.Lock()
	removed := s.removed
	s.mu.Unlock()
	if removed {
		return fmt.Errorf("reconfigure %s: data dir already removed by Stop", s.Kind)
	}
	merged, err := mergeSettings(s.want, settings, s.drv.reserved())
	if err != nil {
		return fmt.Errorf("reconfigure %s: %w", s.Kind, err)
	}
	reloaded, err := s.reload(ctx, settings)
	if err != nil {
		return fmt.Errorf("reconfigure %s: %w", s.Kind, err)
	}
	s.want = merged
	if !reloaded {
		if err := s.restartOnPurpose(ctx); err != nil {
			return fmt.Errorf("reconfigure %s: %w", s.Kind, err)
		}
	}
	version, set, err := s.drv.inspect(ctx, s)
	if err != nil {
		return fmt.Errorf("reconfigure %s: read back settings: %w", s.Kind, err)
	}
	var wrong []string
	for k, v := range settings {
		if got, ok := set[k]; ok && got != v {
			wrong = append(wrong, fmt.Sprintf("%s=%s (asked %s)", k, got, v))
		}
	}
	if len(wrong) > 0 {
		sort.Strings(wrong)
		return fmt.Errorf("reconfigure %s: the server has %s", s.Kind, strings.Join(wrong, ", "))
	}
	s.mu.Lock()
	s.Version, s.Settings, s.Durability = version, set, s.drv.durability(set)
	s.mu.Unlock()
	return nil
}

// reload applies settings without a restart when the server can (a
// PostgreSQL server, settings whose context a reload covers) and reports
// whether it did; false means a restart is needed.
func (s *Server) reload(ctx context.Context, settings map[string]string) (bool, error) {
	switch s.drv.(type) {
	case postgresDriver, replicaDriver:
	default:
		return false, nil
	}
	if len(settings) == 0 {
		return true, nil
	}
	conn, err := pgConnect(ctx, s, "postgres")
	if err != nil {
		return false, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for name := range settings {
		if _, onCommandLine := s.want[name]; onCommandLine {
			return false, nil // the command line overrides ALTER SYSTEM
		}
		var pgctx string
		if err := conn.QueryRow(ctx, `SELECT context FROM pg_settings WHERE name = $1`, name).Scan(&pgctx); err != nil {
			return false, fmt.Errorf("setting %s: %w", name, err)
		}
		switch pgctx {
		case "sighup", "superuser", "user":
		default:
			return false, nil // postmaster (or internal): needs a restart
		}
	}
	for name, v := range settings {
		// ALTER SYSTEM takes no parameters; names and values passed
		// mergeSettings' checks, and the value is quoted.
		if _, err := conn.Exec(ctx, `ALTER SYSTEM SET `+name+` = '`+strings.ReplaceAll(v, `'`, `''`)+`'`); err != nil {
			return false, fmt.Errorf("ALTER SYSTEM SET %s: %w", name, err)
		}
	}
	if _, err := conn.Exec(ctx, `SELECT pg_reload_conf()`); err != nil {
		return false, fmt.Errorf("pg_reload_conf: %w", err)
	}
	// The postmaster rereads the files asynchronously: wait until a new
	// session sees every value.
	deadline := time.Now().Add(ReloadTimeout)
	for {
		c, err := pgConnect(ctx, s, "postgres")
		if err != nil {
			return false, err
		}
		pending := ""
		for name, v := range settings {
			var got string
			if err := c.QueryRow(ctx, `SELECT current_setting($1)`, name).Scan(&got); err != nil {
				c.Close(context.WithoutCancel(ctx))
				return false, err
			}
			if got != v {
				pending = name + "=" + got
			}
		}
		c.Close(context.WithoutCancel(ctx))
		if pending == "" {
			return true, nil
		}
		if time.Now().After(deadline) {
			return false, errors.New("after pg_reload_conf the server still has " + pending)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// restartOnPurpose stops and starts the server while Running keeps saying
// true, so a watchdog does not take the restart for a death.
func (s *Server) restartOnPurpose(ctx context.Context) error {
	s.setRestarting(true)
	defer s.setRestarting(false)
	if err := s.Shutdown(ctx); err != nil {
		return err
	}
	return s.Restart(ctx)
}

func (s *Server) setRestarting(v bool) {
	s.mu.Lock()
	s.restarting = v
	s.mu.Unlock()
}

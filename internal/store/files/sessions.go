package files

// Sessions (the sessions workload): one file per session, "s<id>" in one of
// the store's 256 subdirectories (chosen by the id), its expiry kept in its
// mtime (now + TTL), as PHP's file session handler does with its gc:
//
//	create     temp file + write + mtime + [fsync file [+ dir]] + rename
//	           (RENAME_NOREPLACE where the file system has it)
//	read       open + fstat (mtime > now, else a miss) + read; keeping alive
//	           on read sets the mtime afterwards
//	keepalive  per id: fstatat, then utimensat unless expired (no
//	           resurrection) or, with skip-if-fresh, fresh
//	reap       a walk over the subdirectories unlinking expired files, at
//	           most limit per call, resuming where the last call stopped
//
// "s" + decimal digits cannot collide with the kv files ("k" + base64url,
// "h" + hex) nor with temp files (".t…").

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storebench/storebench/internal/store"
)

// File sync modes of a session create (store.SessionDesign.FileSync).
const (
	SyncNone = "none"
	SyncFile = "file"
	SyncDir  = "dir"
)

var _ store.Sessions = (*Store)(nil)

type sessionClient struct {
	c      *Client
	d      store.SessionDesign
	sync   string
	name   []byte
	st     unix.Stat_t
	cursor int // the subdirectory the next capped reap walk starts in
}

// OpenSessions opens a session handle on a client of its own.
func (s *Store) OpenSessions(ctx context.Context, d store.SessionDesign) (store.SessionClient, error) {
	if err := d.CheckTimes("files", 1, "positive"); err != nil {
		return nil, err
	}
	cl, err := s.Open(ctx)
	if err != nil {
		return nil, err
	}
	c := cl.(*Client)
	h := &sessionClient{c: c, d: d, sync: d.FileSync}
	switch h.sync {
	case "":
		switch {
		case c.s.cfg.dirFsync():
			h.sync = SyncDir
		case c.s.cfg.Fsync:
			h.sync = SyncFile
		default:
			h.sync = SyncNone
		}
	case SyncNone, SyncFile, SyncDir:
	default:
		c.Close()
		return nil, fmt.Errorf("files: sessions: fsync %q: want none, file or dir", d.FileSync)
	}
	return h, nil
}

// Close closes the handle's client.
func (h *sessionClient) Close() error { return h.c.Close() }

func (h *sessionClient) Caps() store.SessionCaps {
	return store.SessionCaps{Resolution: time.Microsecond}
}

// file returns the subdirectory descriptor and name of session id; the
// name aliases h.name.
func (h *sessionClient) file(id int64) (int, string) {
	u := uint64(id)
	h.name = strconv.AppendInt(append(h.name[:0], 's'), id, 10)
	return h.c.s.subs[byte(u^u>>8^u>>16^u>>24)], string(h.name)
}

func (h *sessionClient) check() error {
	if h.c.s.closed.Load() {
		return errClosed
	}
	return nil
}

// Setup removes the session files of an earlier design, after checking the
// namespace's marker.
func (h *sessionClient) Setup(context.Context) error {
	if err := h.check(); err != nil {
		return err
	}
	if err := checkMarker(h.c.s.dir); err != nil {
		return fmt.Errorf("files: sessions setup %s: %w", h.c.s.dir, errors.Join(err, store.ErrNotOwned))
	}
	return h.walk(func(dirfd int, name string, _ *unix.Stat_t) (bool, error) {
		if err := unix.Unlinkat(dirfd, name, 0); err != nil && err != unix.ENOENT {
			return false, pathErr("sessions setup", "unlink", name, err)
		}
		return true, nil
	}, 0, false)
}

// walk calls f for each session file, from subdirectory h.cursor on when
// resume is set, wrapping round once; f returns whether it counts. It stops
// after limit counted files (0: no limit), leaving h.cursor where it stopped.
func (h *sessionClient) walk(f func(dirfd int, name string, st *unix.Stat_t) (bool, error), limit int, resume bool) error {
	start := 0
	if resume {
		start = h.cursor
	}
	n := 0
	for k := range subdirs {
		i := (start + k) % subdirs
		ents, err := os.ReadDir(filepath.Join(h.c.s.dir, fmt.Sprintf("%02x", i)))
		if err != nil {
			return fmt.Errorf("files: sessions: %w", err)
		}
		dirfd := h.c.s.subs[i]
		for _, e := range ents {
			name := e.Name()
			if len(name) < 2 || name[0] != 's' {
				continue
			}
			if err := unix.Fstatat(dirfd, name, &h.st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				if err == unix.ENOENT {
					continue
				}
				return pathErr("sessions", "stat", name, err)
			}
			counted, err := f(dirfd, name, &h.st)
			if err != nil {
				return err
			}
			if counted {
				n++
				if limit > 0 && n >= limit {
					h.cursor = i
					return nil
				}
			}
		}
	}
	if resume {
		h.cursor = start
	}
	return nil
}

// expired reports whether mtime m is not in the future of now.
func expired(m unix.Timespec, now time.Time) bool {
	sec := now.Unix()
	return m.Sec < sec || m.Sec == sec && m.Nsec <= int64(now.Nanosecond())
}

// Create writes the session file as Set writes a key, without replacing an
// existing one.
func (h *sessionClient) Create(ctx context.Context, id int64, payload []byte) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, opErr("create session", err)
	}
	if err := h.check(); err != nil {
		return 0, err
	}
	dirfd, name := h.file(id)
	c := h.c
	fd, err := c.openat(dirfd, c.tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return 0, pathErr("create session", "create", c.tmp, err)
	}
	err = h.write(fd, dirfd, payload)
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		_ = unix.Unlinkat(dirfd, c.tmp, 0)
		return 0, pathErr("create session", "write", c.tmp, err)
	}
	err = renameNoReplace(dirfd, c.tmp, dirfd, name)
	if err == unix.EINVAL || err == unix.ENOSYS { // no RENAME_NOREPLACE here
		if e := unix.Faccessat(dirfd, name, unix.F_OK, 0); e == nil {
			err = unix.EEXIST
		} else {
			err = unix.Renameat(dirfd, c.tmp, dirfd, name)
		}
	}
	if err != nil {
		_ = unix.Unlinkat(dirfd, c.tmp, 0)
		return 0, pathErr("create session", "rename", name, err)
	}
	if h.sync == SyncDir {
		if err := unix.Fsync(dirfd); err != nil {
			return 0, pathErr("create session", "fsync dir", ".", err)
		}
	}
	return id, nil
}

func (h *sessionClient) write(fd, dirfd int, payload []byte) error {
	return writeExpiring(fd, dirfd, h.c.tmp, payload, unix.NsecToTimespec(time.Now().Add(h.d.TTL).UnixNano()), h.sync != SyncNone)
}

// Read reads an unexpired session file into dst[:0], extending it afterwards
// when the design keeps alive on read.
func (h *sessionClient) Read(ctx context.Context, id int64, dst []byte) ([]byte, bool, error) {
	dst = dst[:0]
	if err := ctx.Err(); err != nil {
		return dst, false, opErr("read session", err)
	}
	if err := h.check(); err != nil {
		return dst, false, err
	}
	dirfd, name := h.file(id)
	val, ok, err := h.c.readFile("read session", dirfd, name, dst)
	if err != nil {
		return val, ok, err
	}
	if ok && h.d.KeepaliveOnRead {
		now := time.Now()
		if h.d.RefreshBelow == 0 || time.Unix(h.c.st.Mtim.Unix()).Sub(now) < h.d.RefreshBelow {
			if err := h.touch(dirfd, name, now); err != nil && err != unix.ENOENT {
				return val, ok, pathErr("read session", "utimensat", name, err)
			}
		}
	}
	return val, ok, nil
}

func (h *sessionClient) touch(dirfd int, name string, now time.Time) error {
	ts := [2]unix.Timespec{{Nsec: utimeOmit}, unix.NsecToTimespec(now.Add(h.d.TTL).UnixNano())}
	return unix.UtimesNanoAt(dirfd, name, ts[:], unix.AT_SYMLINK_NOFOLLOW)
}

// KeepAlive sets the mtime of each live session file to now + TTL, skipping
// expired ones and, with skip-if-fresh, fresh ones.
func (h *sessionClient) KeepAlive(ctx context.Context, ids []int64) (int64, error) {
	if err := h.check(); err != nil {
		return 0, err
	}
	var n int64
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return n, opErr("keepalive", err)
		}
		dirfd, name := h.file(id)
		if err := unix.Fstatat(dirfd, name, &h.st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if err == unix.ENOENT {
				continue
			}
			return n, pathErr("keepalive", "stat", name, err)
		}
		now := time.Now()
		if expired(h.st.Mtim, now) || h.d.RefreshBelow > 0 && time.Unix(h.st.Mtim.Unix()).Sub(now) >= h.d.RefreshBelow {
			continue
		}
		if err := h.touch(dirfd, name, now); err != nil {
			if err == unix.ENOENT {
				continue
			}
			return n, pathErr("keepalive", "utimensat", name, err)
		}
		n++
	}
	return n, nil
}

// Reap unlinks expired session files, at most limit (0: a whole walk),
// continuing the walk where the last call stopped.
func (h *sessionClient) Reap(ctx context.Context, limit int) (int64, error) {
	if err := h.check(); err != nil {
		return 0, err
	}
	var n int64
	now := time.Now()
	err := h.walk(func(dirfd int, name string, st *unix.Stat_t) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, opErr("reap", err)
		}
		if !expired(st.Mtim, now) {
			return false, nil
		}
		if err := unix.Unlinkat(dirfd, name, 0); err != nil {
			if err == unix.ENOENT {
				return false, nil
			}
			return false, pathErr("reap", "unlink", name, err)
		}
		n++
		return true, nil
	}, limit, true)
	return n, err
}

// Observe walks every subdirectory: files, bytes, expired files and how
// long the oldest has lingered, and the walk's own time.
func (h *sessionClient) Observe(context.Context) (store.SessionSample, error) {
	if err := h.check(); err != nil {
		return store.SessionSample{}, err
	}
	t0 := time.Now()
	var rows, expiredN, size int64
	oldest := t0
	cursor := h.cursor
	err := h.walk(func(_ int, _ string, st *unix.Stat_t) (bool, error) {
		rows++
		size += st.Size
		if expired(st.Mtim, t0) {
			expiredN++
			if m := time.Unix(st.Mtim.Unix()); m.Before(oldest) {
				oldest = m
			}
		}
		return false, nil
	}, 0, false)
	h.cursor = cursor
	if err != nil {
		return store.SessionSample{}, err
	}
	walk := time.Since(t0)
	return store.SessionSample{Rows: rows, Expired: expiredN, OldestExpired: t0.Sub(oldest), Bytes: size,
		Metrics: map[string]float64{"files": float64(rows), "bytes": float64(size), "expired_files": float64(expiredN), "walk_seconds": walk.Seconds()}}, nil
}

// Describe says how sessions are written and what the file system is.
func (h *sessionClient) Describe(context.Context) (map[string]string, error) {
	info, err := h.c.s.Info(context.Background())
	if err != nil {
		return nil, err
	}
	out := map[string]string{
		"layout":    "one file s<id> per session in 256 subdirectories of " + h.c.s.dir + "; expiry in the mtime",
		"create":    "temp file, write, mtime = now + TTL, rename (no replace)",
		"fsync":     h.sync,
		"read":      "open, fstat (mtime > now), read",
		"keepalive": "fstatat, then utimensat mtime = now + TTL unless expired",
		"reap":      "walk the subdirectories, unlink files whose mtime has passed, at most the batch per call",
	}
	if h.d.KeepaliveOnRead {
		out["read"] += ", then utimensat mtime = now + TTL"
	}
	if h.d.RefreshBelow > 0 {
		out["keepalive"] += " or more than " + h.d.RefreshBelow.String() + " is left"
	}
	for _, k := range []string{"filesystem", "block_size"} {
		out[k] = info.Settings[k]
	}
	out["kernel"] = strings.TrimSpace(info.Version)
	return out, nil
}

// ServerSettings asks for nothing: there is no server.
func (h *sessionClient) ServerSettings(context.Context) (map[string]string, error) { return nil, nil }

// SessionKnobs are the sessions design knobs this store's sessions honour
// (store.SessionKnobber).
func (s *Store) SessionKnobs() []string {
	return []string{"reap", "keepalive", "skip_fresh", "fsync"}
}

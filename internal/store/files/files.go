// Package files is the file-per-key store: every key is one file under
// Dir/<namespace>/, as a PHP app's file cache does it. It measures the local
// filesystem and the OS page cache.
//
// Layout: Dir/<namespace>/.storebench marks the directory as storebench's own;
// 256 subdirectories 00..ff (chosen by a hash byte of the key) keep each
// directory small. A key's file name is "k" + base64url(key), or, for keys
// longer than 180 bytes (the name would pass the 255-byte limit),
// "h" + hex(sha256(key)). The two alphabets cannot produce each other's names,
// and temp files start with '.', which neither does.
//
// Expiry is kept in the file's mtime: a file whose mtime is not in the future
// has expired. No expiry is written as mtime 2400-01-01 (filesystems that
// clamp timestamps to 2038 still keep it in the future until then). Expired
// files are not removed on read, only by Reset, overwrite or Delete.
//
// Linux only: it uses *at system calls on directory descriptors, so a Get is
// open+fstat+read+close with no path walk above the subdirectory.
package files

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/storebench/storebench/internal/store"
)

// Marker is the file whose presence makes a namespace directory storebench's own.
const Marker = ".storebench"

const (
	subdirs     = 256
	maxRawKey   = 180         // base64url of 180 bytes is 240 characters: fits 255 with the prefix
	noExpirySec = 13569465600 // 2400-01-01T00:00:00Z
)

// Config configures a files store.
type Config struct {
	// Dir is the parent directory; the store creates Dir/<Namespace>.
	Dir string
	// Namespace is the subdirectory this store owns.
	Namespace string
	// Fsync makes every Set and Delete durable: the file is fsynced before the
	// rename and the directory after it.
	Fsync bool
	// NoDirFsync, with Fsync, leaves the directory fsync out: the file's
	// bytes are durable before its rename, its new name is not, so a power
	// loss can take an acknowledged write back. It is how many applications
	// write temp-then-rename, and what the power-cut test measures against.
	NoDirFsync bool
}

// ParseFsync reads the fsync option: true (file and directory), false, or
// "file" (the file alone, not its directory: Config.NoDirFsync).
func ParseFsync(v string) (fsync, noDirFsync bool, err error) {
	if v == FsyncFileOnly {
		return true, true, nil
	}
	if fsync, err = strconv.ParseBool(v); err != nil {
		return false, false, fmt.Errorf("fsync=%q: want true, false or %s", v, FsyncFileOnly)
	}
	return fsync, false, nil
}

// FsyncFileOnly is the fsync option's value for Fsync with NoDirFsync.
const FsyncFileOnly = "file"

// fsyncSetting is the fsync option's value for this config, as Info
// records it and ParseFsync reads it.
func (c Config) fsyncSetting() string {
	if c.Fsync && c.NoDirFsync {
		return FsyncFileOnly
	}
	return strconv.FormatBool(c.Fsync)
}

// dirFsync reports whether a name change is followed by its directory's fsync.
func (c Config) dirFsync() bool { return c.Fsync && !c.NoDirFsync }

// Validate checks the config.
func (c Config) Validate() error {
	if c.Dir == "" {
		return errors.New("files: no directory")
	}
	return store.ValidNamespace(c.Namespace)
}

// CheckURL accepts a files URL that is a local path and nothing else, before
// any work (store.CheckPathURL).
func CheckURL(raw string) error { return store.CheckPathURL(raw, "fsync: true") }

// Store is one namespace directory.
type Store struct {
	cfg     Config
	dir     string // Dir/<namespace>
	subs    [subdirs]int
	nextTmp atomic.Uint64

	mu      sync.Mutex // guards clients, and closed against Reset/Close running together
	clients int        // open clients: the descriptors stay open until the last one closes
	closed  atomic.Bool
}

var _ store.Store = (*Store)(nil)

// newStore validates cfg and makes the Store that New and Attach start
// from: the namespace directory's absolute path, no descriptor open yet.
func newStore(cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(filepath.Join(cfg.Dir, cfg.Namespace))
	if err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	s := &Store{cfg: cfg, dir: dir}
	for i := range s.subs {
		s.subs[i] = -1 // not open: closeFDs skips it
	}
	return s, nil
}

// New creates Dir/<namespace> with its marker and subdirectories. A leftover
// namespace directory that carries the marker is emptied (moveAside) and
// reused; one without it is refused with store.ErrNotOwned.
func New(ctx context.Context, cfg Config) (*Store, error) {
	s, err := newStore(cfg)
	if err != nil {
		return nil, err
	}
	dir := s.dir
	switch err := checkMarker(dir); {
	case err == nil:
		if err := s.moveAside(); err != nil {
			return nil, err
		}
	case errors.Is(err, fs.ErrNotExist) && !dirExists(dir):
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("files: %w", err)
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, fmt.Errorf("files: create namespace: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, Marker), []byte("storebench namespace "+cfg.Namespace+"\n"), 0o644); err != nil {
			return nil, fmt.Errorf("files: %w", err)
		}
	default:
		return nil, fmt.Errorf("files: %s exists without %s: %w", dir, Marker, store.ErrNotOwned)
	}
	if err := s.openSubs(true, ""); err != nil {
		return nil, err
	}
	if cfg.dirFsync() {
		if err := syncDir(dir); err != nil {
			s.closeFDs()
			return nil, err
		}
	}
	return s, nil
}

func dirExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// checkMarker returns nil when dir is a directory holding the marker file.
func checkMarker(dir string) error {
	fi, err := os.Lstat(filepath.Join(dir, Marker))
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("files: %s is not a regular file: %w", Marker, store.ErrNotOwned)
	}
	return nil
}

func syncDir(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("files: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("files: fsync %s: %w", p, err)
	}
	return nil
}

// openSubs opens the subdirectories, making them first with mkdir; on an
// error it closes those it opened. op goes before "open" in its errors.
func (s *Store) openSubs(mkdir bool, op string) error {
	for i := range s.subs {
		name := filepath.Join(s.dir, hex.EncodeToString([]byte{byte(i)}))
		if mkdir {
			if err := os.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				s.closeFDs()
				return fmt.Errorf("files: %w", err)
			}
		}
		fd, err := unix.Open(name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			s.closeFDs()
			return fmt.Errorf("files: %sopen %s: %w", op, name, err)
		}
		s.subs[i] = fd
	}
	return nil
}

func (s *Store) closeFDs() {
	for i, fd := range s.subs {
		if fd >= 0 {
			_ = unix.Close(fd)
			s.subs[i] = -1
		}
	}
}

// trashDir, under the namespace directory, receives what Reset clears;
// Close removes it with the rest.
const trashDir = ".trash"

// moveAside moves every entry of the subdirectories (keys and temp files)
// into a new directory under trashDir, keeping the subdirectories themselves
// so open descriptors stay valid. It renames instead of deleting because on
// ext4 without a journal a freed inode is skipped by allocation for 60 s
// (300 s while its inode table block is dirty), one inode table lookup per
// skipped inode and file created: a phase that followed the deletion of the
// previous phase's 1,000 files wrote 4–9k files/s instead of 51k. Renaming
// frees no inode, so each phase creates its files as the first one did.
func (s *Store) moveAside() error {
	trash := filepath.Join(s.dir, trashDir, strconv.FormatInt(time.Now().UnixNano(), 36))
	if err := os.MkdirAll(trash, 0o755); err != nil {
		return fmt.Errorf("files: reset: %w", err)
	}
	for i := range subdirs {
		hexName := hex.EncodeToString([]byte{byte(i)})
		sub := filepath.Join(s.dir, hexName)
		ents, err := os.ReadDir(sub)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("files: reset: %w", err)
		}
		for _, e := range ents {
			// Names are unique within a subdirectory, so prefixed with it
			// they are unique in the trash.
			if err := os.Rename(filepath.Join(sub, e.Name()), filepath.Join(trash, hexName+"-"+e.Name())); err != nil {
				return fmt.Errorf("files: reset: %w", err)
			}
		}
	}
	return nil
}

var errClosed = errors.New("files: store is closed")

// Open returns a client. Clients share the store's directory descriptors.
func (s *Store) Open(context.Context) (store.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return nil, errClosed
	}
	s.clients++
	c := &Client{s: s, tmp: ".t" + strconv.FormatUint(s.nextTmp.Add(1), 10)}
	c.name = make([]byte, 0, 256)
	return c, nil
}

// Info describes the directory and its filesystem.
func (s *Store) Info(context.Context) (store.Info, error) {
	set := map[string]string{
		"fsync":  s.cfg.fsyncSetting(),
		"layout": "one file per key in 256 subdirectories; name k+base64url(key) or h+sha256; expiry in mtime",
		"write":  "temp file in the same directory + rename",
		"reset":  "moves the files into " + trashDir + ", removed when the store closes (no inode freed between phases)",
	}
	var st unix.Statfs_t
	if err := unix.Statfs(s.dir, &st); err == nil {
		set["filesystem"] = fsName(int64(st.Type))
		set["block_size"] = strconv.FormatInt(int64(st.Bsize), 10)
	}
	for k, v := range mountFacts(s.dir) {
		set[k] = v
	}
	version := "unknown"
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		version = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
	}
	d := "OS page cache, no fsync: an OS crash or power loss may lose recent writes; a process crash loses nothing"
	switch {
	case s.cfg.dirFsync():
		d = "fsync every write (file, then directory)"
	case s.cfg.Fsync:
		d = "fsync of each file before its rename, not of its directory: the bytes are durable, the new name is not (a power loss may take recent writes back); a process crash loses nothing"
	}
	return store.Info{Kind: "files", Version: version, Location: s.dir, Settings: set, Durability: d, Namespace: s.cfg.Namespace}, nil
}

// CrashLoss says what the directory loses, under the fsync setting Info
// records, when the writing process is SIGKILLed (processCrash) and when
// the power fails (powerLoss): the durability workload's expectations.
func CrashLoss(set map[string]string) (processCrash, powerLoss string) {
	switch strings.ToLower(strings.TrimSpace(set["fsync"])) {
	case "true":
		return "nothing acknowledged", "nothing acknowledged (file and directory fsynced before the write returns), if the disk honours fsync"
	case FsyncFileOnly:
		return "nothing acknowledged", "recent writes: each file's bytes are fsynced, its new name (the rename) is not until its directory is"
	}
	return "nothing acknowledged: each write is in the OS page cache before it returns",
		"recent writes (no fsync); a file renamed before its data reached the disk may come back empty"
}

func fsName(t int64) string {
	switch uint32(t) {
	case 0xEF53:
		return "ext2/3/4"
	case 0x58465342:
		return "xfs"
	case 0x01021994:
		return "tmpfs"
	case 0x9123683E:
		return "btrfs"
	case 0x794c7630:
		return "overlayfs"
	case 0x2fc12fc1:
		return "zfs"
	case 0x6969:
		return "nfs"
	case 0xF2F52010:
		return "f2fs"
	}
	return "0x" + strconv.FormatInt(t, 16)
}

// Reset empties the namespace of every key, after checking the marker: the
// files go to the trash directory that Close removes (see moveAside).
func (s *Store) Reset(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return errClosed
	}
	if err := checkMarker(s.dir); err != nil {
		return fmt.Errorf("files: reset %s: %w", s.dir, errors.Join(err, store.ErrNotOwned))
	}
	return s.moveAside()
}

// Close removes the namespace directory, only if it carries the marker.
// Closing twice is not an error.
func (s *Store) Close(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.release() {
		return nil
	}
	if err := checkMarker(s.dir); err != nil {
		return fmt.Errorf("files: close %s: %w", s.dir, errors.Join(err, store.ErrNotOwned))
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("files: close: %w", err)
	}
	return nil
}

// release marks the store closed and closes its directory descriptors,
// unless a client still uses them; false if it was closed already. The
// caller holds s.mu.
func (s *Store) release() bool {
	if s.closed.Swap(true) {
		return false
	}
	// A descriptor closed under a live client could be reused by the process
	// for another directory, and that client would then write there; the
	// last client closes them instead. Meanwhile removed directories only
	// fail its operations.
	if s.clients == 0 {
		s.closeFDs()
	}
	return true
}

// Client is one worker's handle: its own name buffer and temp file name.
type Client struct {
	s      *Store
	tmp    string // this client's temp file name, unique within the store
	name   []byte // scratch for the key's file name
	cpath  []byte // scratch for a NUL-terminated name (openat)
	st     unix.Stat_t
	closed bool
}

var _ store.KV = (*Client)(nil)

// Close releases the client; the last one of a closed store closes the
// store's directory descriptors.
func (c *Client) Close() error {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if !c.closed {
		c.closed = true
		s.clients--
		if s.clients == 0 && s.closed.Load() {
			s.closeFDs()
		}
	}
	return nil
}

// fileName returns the subdirectory descriptor and the file name of key. The
// name aliases c.name and is valid until the next call.
func (c *Client) fileName(key []byte) (int, string) {
	h := uint32(2166136261) // FNV-1a: stable across processes, unlike maphash
	for _, b := range key {
		h = (h ^ uint32(b)) * 16777619
	}
	n := c.name[:0]
	if len(key) <= maxRawKey {
		n = append(n, 'k')
		n = base64.RawURLEncoding.AppendEncode(n, key)
	} else {
		sum := sha256.Sum256(key)
		n = append(n, 'h')
		n = hex.AppendEncode(n, sum[:])
	}
	c.name = n
	// openat copies the string into a NUL-terminated buffer of its own
	// before the system call, so a view of c.name is safe here.
	return c.s.subs[byte(h^h>>8^h>>16^h>>24)], unsafe.String(unsafe.SliceData(n), len(n))
}

// openat is unix.Openat without its allocation per call (it copies name
// into a new NUL-terminated buffer; this one reuses c.cpath): a Get makes
// none (issue 32).
func (c *Client) openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	if strings.IndexByte(name, 0) >= 0 {
		return -1, unix.EINVAL // as unix.Openat refuses it
	}
	c.cpath = append(append(c.cpath[:0], name...), 0)
	for {
		fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&c.cpath[0])), uintptr(flags), uintptr(mode), 0, 0)
		switch errno {
		case 0:
			return int(fd), nil
		case unix.EINTR:
			continue
		}
		return -1, errno
	}
}

// Get reads the key's file into dst[:0]; a missing or expired file is a miss.
func (c *Client) Get(ctx context.Context, key, dst []byte) ([]byte, bool, error) {
	dst = dst[:0]
	if err := ctx.Err(); err != nil {
		return dst, false, opErr("get", err)
	}
	dirfd, name := c.fileName(key)
	return c.readFile("get", dirfd, name, dst)
}

// readFile reads the file name of directory dirfd into dst[:0], a missing
// or expired file being a miss; its errors are op's.
func (c *Client) readFile(op string, dirfd int, name string, dst []byte) ([]byte, bool, error) {
	fd, err := c.openat(dirfd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ENOENT {
			return dst, false, nil
		}
		return dst, false, pathErr(op, "open", name, err)
	}
	val, ok, err := c.read(fd, dst)
	if cerr := unix.Close(fd); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return dst, false, pathErr(op, "read", name, err)
	}
	return val, ok, nil
}

func (c *Client) read(fd int, dst []byte) ([]byte, bool, error) {
	if err := unix.Fstat(fd, &c.st); err != nil {
		return dst, false, err
	}
	// Compared as seconds, then nanoseconds: 2400 in nanoseconds overflows int64.
	now := time.Now()
	if sec := now.Unix(); c.st.Mtim.Sec < sec || c.st.Mtim.Sec == sec && c.st.Mtim.Nsec <= int64(now.Nanosecond()) {
		return dst, false, nil
	}
	size := int(c.st.Size)
	if cap(dst) < size {
		dst = make([]byte, 0, size)
	}
	buf := dst[:size]
	for n := 0; n < size; {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return dst, false, err
		}
		if m == 0 { // shorter than fstat said: only someone else's write does that
			return dst, false, errors.New("file shrank while being read")
		}
		n += m
	}
	return buf, true, nil
}

// Set writes val to the client's temp file, stamps the expiry into its mtime,
// optionally fsyncs it, then renames it over the key's file: readers see the
// old or the new value, never a partial one.
func (c *Client) Set(ctx context.Context, key, val []byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return opErr("set", err)
	}
	dirfd, name := c.fileName(key)
	fd, err := c.openat(dirfd, c.tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return pathErr("set", "create", c.tmp, err)
	}
	if err := c.write(fd, dirfd, val, ttl); err != nil {
		_ = unix.Close(fd)
		_ = unix.Unlinkat(dirfd, c.tmp, 0)
		return pathErr("set", "write", c.tmp, err)
	}
	if err := unix.Close(fd); err != nil {
		_ = unix.Unlinkat(dirfd, c.tmp, 0)
		return pathErr("set", "close", c.tmp, err)
	}
	if err := unix.Renameat(dirfd, c.tmp, dirfd, name); err != nil {
		_ = unix.Unlinkat(dirfd, c.tmp, 0)
		return pathErr("set", "rename", name, err)
	}
	if c.s.cfg.dirFsync() {
		if err := unix.Fsync(dirfd); err != nil {
			return pathErr("set", "fsync dir", ".", err)
		}
	}
	return nil
}

func (c *Client) write(fd, dirfd int, val []byte, ttl time.Duration) error {
	exp := unix.Timespec{Sec: noExpirySec}
	if ttl > 0 {
		exp = unix.NsecToTimespec(time.Now().Add(ttl).UnixNano())
	}
	return writeExpiring(fd, dirfd, c.tmp, val, exp, c.s.cfg.Fsync)
}

// writeExpiring writes data to fd, the open file name of directory dirfd,
// stamps its expiry as its mtime (atime untouched) and, with fsync, syncs
// it: a key's or a session's file before its rename into place.
func writeExpiring(fd, dirfd int, name string, data []byte, expiry unix.Timespec, fsync bool) error {
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		data = data[n:]
	}
	ts := [2]unix.Timespec{{Nsec: utimeOmit}, expiry}
	if err := unix.UtimesNanoAt(dirfd, name, ts[:], 0); err != nil {
		return err
	}
	if fsync {
		return unix.Fsync(fd)
	}
	return nil
}

// Delete removes the key's file; a missing file is not an error.
func (c *Client) Delete(ctx context.Context, key []byte) error {
	if err := ctx.Err(); err != nil {
		return opErr("delete", err)
	}
	dirfd, name := c.fileName(key)
	if err := unix.Unlinkat(dirfd, name, 0); err != nil && err != unix.ENOENT {
		return pathErr("delete", "unlink", name, err)
	}
	if c.s.cfg.dirFsync() {
		if err := unix.Fsync(dirfd); err != nil {
			return pathErr("delete", "fsync dir", ".", err)
		}
	}
	return nil
}

// opErr leaves every class to errclass.Classify: a filesystem error has none of
// its own.
func opErr(op string, err error) error { return store.NewOpError("files", op, err, "") }

func pathErr(op, sysop, name string, err error) error {
	// name may alias the client's scratch buffer: copy it before it escapes.
	return opErr(op, &fs.PathError{Op: sysop, Path: strings.Clone(name), Err: err})
}

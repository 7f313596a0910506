package powercut

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/storebench/storebench/internal/owner"
)

// serveEnv, set to the parent's PID, makes a process started from this
// executable the server of one mount instead of whatever it is otherwise
// (storebench, a test binary): see init.
const serveEnv = "STOREBENCH_POWERCUT_SERVE"

// init turns the process into a mount's server when serveEnv says so, and
// exits with it, before main or TestMain: neither has to know. It runs after
// the packages powercut imports are initialized (all it uses) and may run
// before or after unrelated ones; none of them parses flags or runs tests
// in init, which only main and testing.M do.
func init() {
	if parent := os.Getenv(serveEnv); parent != "" {
		os.Exit(serveMain(parent))
	}
}

// The protocol: the parent writes one JSON request per line to the
// server's stdin and reads one JSON response per line from its stdout;
// requests are answered in order, one at a time. stdin's EOF (the parent
// closed it, or died) ends the server, unmounting first.
const (
	opMount   = "mount"   // Backing, Mountpoint, Attic
	opSyncAll = "syncall" // everything durable
	opCut     = "cut"     // force unmount and roll back: Report
	opUnmount = "unmount" // Force, Wait
	// For tests: the tracker's undo budget, a server that dies mid-request
	// (after a line on stderr), one that does not answer in time.
	opMaxUndo = "maxundo"   // MaxUndo
	opExit    = "test-exit" // exit status 3
	opSleep   = "test-sleep"
)

type request struct {
	Op         string        `json:"op"`
	Backing    string        `json:"backing,omitempty"`
	Mountpoint string        `json:"mountpoint,omitempty"`
	Attic      string        `json:"attic,omitempty"`
	Force      bool          `json:"force,omitempty"`
	Wait       time.Duration `json:"wait,omitempty"` // how long an unmount may wait for the server's loop to end
	MaxUndo    int64         `json:"max_undo,omitempty"`
}

type response struct {
	Err     string    `json:"err,omitempty"` // the error's text, worded for the caller
	Mounted bool      `json:"mounted"`       // the mount is up after the request
	Report  CutReport `json:"report"`
}

// serving is the serving process's state: the tracker (the undo state
// lives here, with the filesystem that feeds it) and the mount.
type serving struct {
	t          *tracker
	mountpoint string

	mu     sync.Mutex // guards fuse and served against the SIGTERM handler
	fuse   *fuse.Server
	served chan struct{} // closed when the server's loop returns
}

// serveMain serves requests until stdin's EOF or SIGTERM, and returns the
// exit status.
func serveMain(parent string) int {
	os.Unsetenv(serveEnv)
	// Responses go to a copy of stdout; fd 1 becomes stderr, so that
	// nothing else printing there can garble the protocol.
	respFD, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	if err == nil {
		err = unix.Dup2(2, 1)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "powercut server:", err)
		return 2
	}
	out := json.NewEncoder(os.NewFile(uintptr(respFD), "responses"))
	s := &serving{}

	// Pdeathsig's signal, or anyone's: the mount goes with the server.
	terms := make(chan os.Signal, 1)
	signal.Notify(terms, syscall.SIGTERM)
	go func() {
		<-terms
		s.abandon()
		os.Exit(1)
	}()
	// The parent may have died before Pdeathsig was set: stdin's EOF
	// would tell too, this tells at once.
	if strconv.Itoa(os.Getppid()) != parent {
		fmt.Fprintln(os.Stderr, "powercut server: the parent", parent, "is gone")
		return 1
	}

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 1<<20)
	for in.Scan() {
		var req request
		var resp response
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			resp.Err = fmt.Sprintf("powercut server: bad request %q: %v", in.Bytes(), err)
		} else if err := s.do(&req, &resp); err != nil {
			resp.Err = err.Error()
		}
		resp.Mounted = s.mounted()
		if err := out.Encode(resp); err != nil {
			fmt.Fprintln(os.Stderr, "powercut server: answer:", err)
			break
		}
	}
	// The parent is done with us, or gone: nothing may stay mounted.
	if s.mounted() {
		s.abandon()
		return 1
	}
	return 0
}

func (s *serving) do(req *request, resp *response) error {
	switch req.Op {
	case opMount:
		if s.mounted() {
			return fmt.Errorf("powercut: %s is still mounted", req.Mountpoint)
		}
		if s.t == nil {
			s.t = newTracker(req.Backing)
		}
		s.t.attic = req.Attic
		return s.mount(req.Mountpoint)
	case opSyncAll:
		if s.t == nil {
			return nil
		}
		return s.t.syncAll()
	case opCut:
		if err := s.unmount(true, req.Wait); err != nil {
			return err
		}
		if s.t == nil {
			return nil
		}
		rep, err := s.t.rollback()
		resp.Report = rep
		return err
	case opUnmount:
		return s.unmount(req.Force, req.Wait)
	case opMaxUndo:
		if s.t != nil {
			s.t.mu.Lock()
			s.t.maxUndo = req.MaxUndo
			s.t.mu.Unlock()
		}
		return nil
	case opExit:
		fmt.Fprintln(os.Stderr, "powercut server: exiting mid-request, as asked")
		os.Exit(3)
	case opSleep:
		time.Sleep(req.Wait)
		return nil
	}
	return fmt.Errorf("powercut server: unknown request %q", req.Op)
}

func (s *serving) mounted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fuse != nil
}

// mount serves the tracker's backing directory at mountpoint.
func (s *serving) mount(mountpoint string) error {
	var st syscall.Stat_t
	if err := syscall.Stat(s.t.backing, &st); err != nil {
		return fmt.Errorf("powercut: %w", err)
	}
	root := &fs.LoopbackRoot{Path: s.t.backing, Dev: st.Dev}
	root.NewNode = func(r *fs.LoopbackRoot, _ *fs.Inode, _ string, _ *syscall.Stat_t) fs.InodeEmbedder {
		return newNode(s.t, r)
	}
	rootNode := newNode(s.t, root)
	root.RootNode = rootNode
	sec := time.Second
	self := owner.Self()
	opts := &fs.Options{
		EntryTimeout: &sec,
		AttrTimeout:  &sec,
		MountOptions: fuse.MountOptions{
			AllowOther: true,
			Options:    []string{"default_permissions"},
			// The source names this process, the server: see CleanStale.
			FsName:            sourcePrefix + strconv.Itoa(self.PID) + ":" + strconv.FormatUint(self.Start, 10),
			Name:              fsName,
			DirectMountStrict: true,
			// Locks stay in the kernel, with POSIX's per-process owners:
			// forwarded, the loopback takes them as OFD locks, one per
			// descriptor, and SQLite's connections of one process lock
			// each other out. Every user of the mount is on this machine.
			EnableLocks: false,
		},
	}
	srv, err := fuse.NewServer(fs.NewNodeFS(rootNode, opts), mountpoint, &opts.MountOptions)
	if err != nil {
		return fmt.Errorf("powercut: mount %s: %w", mountpoint, err)
	}
	served := make(chan struct{})
	go func() {
		srv.Serve()
		close(served)
	}()
	if err := srv.WaitMount(); err != nil {
		_ = unmountForce(mountpoint)
		return fmt.Errorf("powercut: mount %s: %w", mountpoint, err)
	}
	s.mu.Lock()
	s.fuse, s.served, s.mountpoint = srv, served, mountpoint
	s.mu.Unlock()
	return nil
}

// busyWait is how long a clean unmount waits for open files to close.
const busyWait = 2 * time.Second

// unmount takes the mount away, waiting up to wait for the server's loop
// to end; force does not wait for open files to close.
func (s *serving) unmount(force bool, wait time.Duration) error {
	s.mu.Lock()
	srv, served, mp := s.fuse, s.served, s.mountpoint
	s.fuse, s.served = nil, nil
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	err := unix.Unmount(mp, 0)
	for w := 5 * time.Millisecond; errors.Is(err, unix.EBUSY) && !force && w < busyWait; w *= 2 {
		time.Sleep(w)
		err = unix.Unmount(mp, 0)
	}
	if errors.Is(err, unix.EBUSY) {
		err = unmountForce(mp)
	}
	if err != nil && !errors.Is(err, unix.EINVAL) { // EINVAL: no longer mounted
		return fmt.Errorf("powercut: unmount %s: %w", mp, err)
	}
	if wait <= 0 {
		wait = time.Minute
	}
	select {
	case <-served:
		return nil
	case <-time.After(wait):
		return fmt.Errorf("powercut: unmount %s: the filesystem still serves after %v", mp, wait)
	}
}

// abandon takes the mount away at once, for a server about to exit.
func (s *serving) abandon() {
	s.mu.Lock()
	mounted, mp := s.fuse != nil, s.mountpoint
	s.mu.Unlock()
	if mounted {
		if err := unmountForce(mp); err != nil {
			fmt.Fprintf(os.Stderr, "powercut server: unmount %s: %v\n", mp, err)
		}
	}
}

// unmountForce aborts the FUSE connection (MNT_FORCE), so that no request
// is answered any more, and detaches the mount from the tree.
func unmountForce(mountpoint string) error {
	err := unix.Unmount(mountpoint, unix.MNT_FORCE)
	if err == nil || errors.Is(err, unix.EINVAL) {
		return nil
	}
	return unix.Unmount(mountpoint, unix.MNT_DETACH)
}

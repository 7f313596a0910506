// Package server starts, inspects and stops local data store servers that
// storebench manages itself: a fresh data dir and a free loopback port per
// server, a named settings profile, and the effective settings and version
// read back from the running server so a result records what was measured.
package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storebench/storebench/internal/owner"
)

// Kind is a kind of managed server.
type Kind string

// The kinds of server storebench can manage.
const (
	Postgres  Kind = "postgres"
	Redis     Kind = "redis"
	Memcached Kind = "memcached"
	MariaDB   Kind = "mariadb"
	// Valkey is the Redis fork: the same protocol and configuration, its
	// own binary, version and build (INFO's mem_allocator).
	Valkey Kind = "valkey"
)

// Kinds returns every kind of managed server.
func Kinds() []Kind { return []Kind{Postgres, Redis, Valkey, Memcached, MariaDB} }

// Defaults applied by Start.
const (
	DefaultStartTimeout = 30 * time.Second
	// StopGrace is how long Stop waits after the polite signal before SIGKILL.
	StopGrace = 10 * time.Second
	// startAttempts bounds retries when a picked port was taken meanwhile.
	startAttempts = 3
	logTailLines  = 20
)

// Options configure Start.
type Options struct {
	// Profile is a named settings profile (see Profiles); "" (or "default"
	// where a kind has no profile of that name) means the kind's default
	// profile: the server's own out-of-the-box behaviour.
	Profile string
	// Settings are extra server settings applied on top of the profile. Keys
	// unknown to the server make it fail to start, with its log quoted.
	Settings map[string]string
	// BaseDir is the parent of the fresh data dir; "" means os.TempDir().
	BaseDir string
	// StartTimeout bounds each start until the server answers; 0 means 30s.
	StartTimeout time.Duration
	// CPUs, like "0" or "0-1,3", pins the server (and its children) to
	// those CPUs from its first instruction. Linux only.
	CPUs string
	// Version picks an installed version, e.g. "18" (matches 18.6) or
	// "7.0"; "" means the default binary (Locate).
	Version string
	// BinDir is a user's own build (--server-bin): a dir holding the kind's
	// binaries, or the server binary itself; it replaces discovery.
	BinDir string
}

// Server is a running (or killed) managed server. Its methods are safe for
// concurrent use.
type Server struct {
	Kind    Kind
	Profile string
	Addr    string // 127.0.0.1:port
	URL     string // what a client connects to
	DataDir string // removed by Stop
	PID     int
	// Version is what the server reports about itself.
	Version string
	// Binary is the path of the server program that runs.
	Binary string
	// Settings are the effective settings read back from the running server.
	Settings map[string]string
	// Durability says in a few words what a crash loses under Settings.
	Durability string
	// CPUs is the CPU list the server is pinned to, "" when not pinned.
	CPUs string
	// User is the OS user the server runs as.
	User string
	// Notes record deviations worth reporting, e.g. a missing extension.
	Notes []string

	drv      driver
	bins     Binaries
	port     int
	want     map[string]string // requested settings: profile + Options.Settings
	logPath  string
	sockDir  string // unix socket dir; outside DataDir only if that path is too long
	extraDir string // a dir to remove besides DataDir ("" if none)
	cred     *syscall.Credential
	cpuSet   []int
	timeout  time.Duration

	mu   sync.Mutex
	proc *process
	// restarting is true while Reconfigure restarts the server on purpose.
	restarting bool
	cmdline    string
	removed    bool
}

// driver is what differs between kinds.
type driver interface {
	profiles() []profile
	defaultProfile() string
	// users are the preferred unprivileged accounts when running as root.
	users() []string
	// reserved are settings storebench manages itself (port, bind address...).
	reserved() []string
	// init prepares the data dir once (initdb, config files).
	init(ctx context.Context, s *Server) error
	// command is the server command line for one launch on s.port.
	command(s *Server) (path string, args []string)
	// probe makes one real protocol request and checks the answer comes from
	// this server, not from another one that grabbed the port.
	probe(ctx context.Context, s *Server) error
	// setup runs once after the first successful launch (create database).
	setup(ctx context.Context, s *Server) error
	// inspect reads back the version and the effective settings.
	inspect(ctx context.Context, s *Server) (version string, settings map[string]string, err error)
	durability(settings map[string]string) string
	// crashLoss is what a killed process and a power cut lose under the
	// effective settings (Kind.CrashLoss).
	crashLoss(settings map[string]string) (processCrash, powerLoss string)
	url(s *Server) string
	// stopSignal is the signal for a clean but prompt shutdown.
	stopSignal() syscall.Signal
}

// settingsChecker is a driver whose settings depend on the installation
// (a setting new in some version, a feature of some builds): what it
// refuses is refused before any work, not left to the server's log.
type settingsChecker interface {
	checkSettings(want map[string]string, in Installation) error
}

type profile struct {
	name     string
	settings map[string]string
}

func driverFor(k Kind) (driver, error) {
	switch k {
	case Postgres:
		return postgresDriver{}, nil
	case Redis:
		return redisDriver{}, nil
	case Memcached:
		return memcachedDriver{}, nil
	case MariaDB:
		return mariadbDriver{}, nil
	case Valkey:
		return valkeyDriver{}, nil
	}
	return nil, fmt.Errorf("unknown server kind %q (known: %v)", k, Kinds())
}

// CrashLoss says what a server of kind k loses under the effective
// settings set (its profile's and the store's, merged as a target records
// them) when its processes are SIGKILLed (processCrash: the page cache
// survives) and when the power fails (powerLoss): what its profiles mean
// for the durability workload, said once, beside its drivers' durability.
func (k Kind) CrashLoss(set map[string]string) (processCrash, powerLoss string) {
	d, err := driverFor(k)
	if err != nil {
		return "unknown", "unknown"
	}
	return d.crashLoss(set)
}

// setting is set[k] as crashLoss compares it: trimmed, lower case.
func setting(set map[string]string, k string) string {
	return strings.ToLower(strings.TrimSpace(set[k]))
}

// Profiles returns the names of the settings profiles of kind k in a stable
// order; nil for an unknown kind.
func Profiles(k Kind) []string {
	d, err := driverFor(k)
	if err != nil {
		return nil
	}
	var names []string
	for _, p := range d.profiles() {
		names = append(names, p.name)
	}
	return names
}

func profileSettings(d driver, k Kind, name string) (string, map[string]string, error) {
	if name == "" || name == "default" {
		name = d.defaultProfile()
	}
	for _, p := range d.profiles() {
		if p.name == name {
			return name, p.settings, nil
		}
	}
	return "", nil, fmt.Errorf("unknown %s profile %q (known: %s)", k, name, strings.Join(Profiles(k), ", "))
}

// Start starts a fresh server of kind k in a new data dir on a free loopback
// port, waits until it answers a real request and reads back its settings.
// The caller must Stop it (StopAll does it for every server still running).
func Start(ctx context.Context, k Kind, opts Options) (*Server, error) {
	s, err := start(ctx, k, opts)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", k, err)
	}
	return s, nil
}

// Check verifies, without starting or creating anything, what Start would
// otherwise refuse or fail on late: a known kind and profile, settings that
// are not reserved or malformed, a valid CPU list this process may use, the
// binaries (a *MissingError, with the install hint), an unprivileged account
// to run as when storebench runs as root, and a BaseDir that exists, is a
// directory we can create the data dir in, and is searchable by that account
// along its whole path. A nil error does not promise the server accepts the
// settings' values: only the server itself knows them (Start quotes its log).
func Check(k Kind, opts Options) error {
	if _, err := driverFor(k); err != nil {
		return err
	}
	p, err := resolve(k, opts)
	if err == nil {
		err = checkBaseDir(opts.BaseDir, p.account, p.cred)
	}
	var missing *MissingError
	if err != nil && !errors.As(err, &missing) { // MissingError names the kind itself
		err = fmt.Errorf("%s: %w", k, err)
	}
	return err
}

// plan is what Start resolves from its arguments before touching anything.
type plan struct {
	d       driver
	profile string
	want    map[string]string
	cpuSet  []int
	bins    Binaries
	version string // asked for: the server must report it
	account string
	cred    *syscall.Credential
}

func resolve(k Kind, opts Options) (*plan, error) {
	d, err := driverFor(k)
	if err != nil {
		return nil, err
	}
	p := &plan{d: d}
	var base map[string]string
	if p.profile, base, err = profileSettings(d, k, opts.Profile); err != nil {
		return nil, err
	}
	if p.want, err = mergeSettings(base, opts.Settings, d.reserved()); err != nil {
		return nil, err
	}
	if p.cpuSet, err = ParseCPUList(opts.CPUs); err != nil {
		return nil, err
	}
	if err := checkCPUs(p.cpuSet); err != nil {
		return nil, err
	}
	in, err := findInstallation(k, opts)
	if err != nil {
		return nil, err
	}
	p.bins = in.Binaries
	if c, ok := d.(settingsChecker); ok {
		if err := c.checkSettings(p.want, in); err != nil {
			return nil, err
		}
	}
	p.version = opts.Version
	if p.account, p.cred, err = runAccount(d.users()); err != nil {
		return nil, err
	}
	if p.cred != nil {
		// A build under /root (STOREBENCH_DEPS, --server-bin) cannot be run
		// by the unprivileged account.
		if err := checkTraversable(filepath.Dir(p.bins.Server), p.account, p.cred, "put the binaries elsewhere (make deps as root uses /usr/local/lib/storebench)"); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// checkBaseDir checks that the data dir can be created in base ("" means
// os.TempDir()) and reached by the account the server runs as.
func checkBaseDir(base, account string, cred *syscall.Credential) error {
	if base == "" {
		base = os.TempDir()
	}
	fi, err := os.Stat(base)
	if err != nil {
		return fmt.Errorf("base dir: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("base dir %s is not a directory", base)
	}
	if err := unix.Access(base, unix.W_OK|unix.X_OK); err != nil {
		return fmt.Errorf("base dir %s: cannot create the data dir in it: %w", base, err)
	}
	if cred != nil {
		return checkTraversable(base, account, cred, "choose another base dir")
	}
	return nil
}

func start(ctx context.Context, k Kind, opts Options) (*Server, error) {
	p, err := resolve(k, opts)
	if err != nil {
		return nil, err
	}
	return startPlan(ctx, k, p, opts, "")
}

// startPlan is Start for a resolved plan, whose driver may be a variant of
// the kind's; role ("replica") names the variant in its data dir.
func startPlan(ctx context.Context, k Kind, p *plan, opts Options, role string) (_ *Server, err error) {
	if err := checkBaseDir(opts.BaseDir, p.account, p.cred); err != nil {
		return nil, err
	}
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	name := string(k)
	if role != "" {
		name += "-" + role
	}
	dir, err := owner.MakeDir(opts.BaseDir, "storebench-"+name+"-*", strings.ReplaceAll(name, "-", " ")+" data dir")
	if err != nil {
		return nil, err
	}
	s := &Server{
		Kind: k, Profile: p.profile, DataDir: dir, CPUs: opts.CPUs, User: p.account, Binary: p.bins.Server,
		drv: p.d, bins: p.bins, want: p.want, cred: p.cred, cpuSet: p.cpuSet, timeout: timeout,
		logPath: filepath.Join(dir, "server.log"),
	}
	// Registered from now on, so StopAll (Ctrl-C) also reaches a server that
	// is still starting.
	register(s)
	defer func() {
		if err != nil {
			s.Kill()
			s.mu.Lock()
			s.removed = true
			s.mu.Unlock()
			s.removeDirs()
			unregister(s)
		}
	}()
	if err := s.prepareDir(); err != nil {
		return nil, err
	}
	if err := p.d.init(ctx, s); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		if s.port, err = freePort(); err != nil {
			return nil, err
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
		s.URL = p.d.url(s)
		var inUse bool
		inUse, err = s.launch(ctx)
		if err == nil {
			break
		}
		if !inUse || attempt == startAttempts {
			return nil, err
		}
	}
	if err := p.d.setup(ctx, s); err != nil {
		return nil, s.withLog(fmt.Errorf("setup: %w", err))
	}
	if s.Version, s.Settings, err = p.d.inspect(ctx, s); err != nil {
		return nil, s.withLog(fmt.Errorf("read back settings: %w", err))
	}
	// --version and the running server could disagree (a wrapper script):
	// the version measured is the one the server reports.
	if p.version != "" && !VersionMatches(s.Version, p.version) {
		return nil, fmt.Errorf("%s reports version %s, not %s", s.Binary, s.Version, p.version)
	}
	s.Durability = p.d.durability(s.Settings)
	return s, nil
}

// mergeSettings layers user settings over a profile, refusing keys that
// storebench manages (so a server can never be made to listen beyond
// loopback) and values that could inject extra config lines.
func mergeSettings(base, extra map[string]string, reserved []string) (map[string]string, error) {
	out := make(map[string]string, len(base)+len(extra))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		if k == "" || strings.ContainsAny(k, " \t\r\n=\x00\"'") {
			return nil, fmt.Errorf("bad setting name %q", k)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return nil, fmt.Errorf("setting %s: value must be one line", k)
		}
		norm := strings.ReplaceAll(strings.ToLower(k), "-", "_")
		for _, r := range reserved {
			if norm == r {
				return nil, fmt.Errorf("setting %s is managed by storebench and cannot be changed", k)
			}
		}
		out[k] = v
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// process is one launched server process.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has been reaped
	err  error         // Wait's result, valid after done
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// launch starts the server process and waits until it answers. inUse
// reports a failure caused by the port being taken, worth a retry.
func (s *Server) launch(ctx context.Context) (inUse bool, err error) {
	path, args := s.drv.command(s)
	s.cmdline = path + " " + strings.Join(args, " ")
	logStart := fileSize(s.logPath)
	p, err := s.spawn(path, args)
	if err != nil {
		return false, s.withLog(err)
	}
	s.mu.Lock()
	s.proc, s.PID = p, p.cmd.Process.Pid
	removed := s.removed
	s.mu.Unlock()
	if removed { // Stop ran meanwhile: do not leave this one behind
		s.Kill()
		return false, errors.New("stopped while starting")
	}
	if err := s.waitReady(ctx, p); err != nil {
		s.Kill()
		return addrInUse(s.logPath, logStart), s.withLog(err)
	}
	return false, nil
}

func (s *Server) spawn(path string, args []string) (*process, error) {
	log, err := os.OpenFile(s.logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	defer log.Close() // the child keeps its own descriptor
	fmt.Fprintf(log, "--- storebench: %s: %s\n", time.Now().Format(time.RFC3339), s.cmdline)
	cmd := s.command(path, args)
	cmd.Stdout, cmd.Stderr = log, log
	if err := startPinned(cmd, s.cpuSet); err != nil {
		return nil, fmt.Errorf("run %s: %w", path, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// command builds a child command: in the data dir (readable by the server's
// user, unlike the caller's cwd), its own process group (a terminal Ctrl-C
// must not reach it before storebench stops it in order), unprivileged when
// storebench runs as root, and killed if storebench dies.
func (s *Server) command(path string, args []string) *exec.Cmd {
	cmd := exec.Command(path, args...)
	cmd.Dir = s.DataDir
	cmd.Env = childEnv()
	cmd.SysProcAttr = sysProcAttr(s.cred)
	return cmd
}

// run runs a setup tool (initdb...) to completion, its output in the log.
func (s *Server) run(ctx context.Context, what, path string, args ...string) error {
	log, err := os.OpenFile(s.logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmdline := path + " " + strings.Join(args, " ")
	fmt.Fprintf(log, "--- storebench: %s: %s\n", time.Now().Format(time.RFC3339), cmdline)
	cmd := s.command(path, args)
	cmd.Stdout, cmd.Stderr = log, log
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("%s: %w\ncommand: %s\nlast lines of %s:\n%s", what, err, cmdline, s.logPath, s.LogTail(logTailLines))
	}
	return nil
}

func (s *Server) waitReady(ctx context.Context, p *process) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	delay := 10 * time.Millisecond
	var lastErr error
	for {
		if p.exited() {
			return fmt.Errorf("server exited before answering: %v", p.err)
		}
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		lastErr = s.drv.probe(pctx, s)
		pcancel()
		if lastErr == nil {
			return nil
		}
		if errors.Is(lastErr, errNotOurs) {
			return lastErr
		}
		select {
		case <-p.done:
		case <-ctx.Done():
			if ctx.Err() == context.DeadlineExceeded {
				return fmt.Errorf("server did not answer within %v: %v", s.timeout, lastErr)
			}
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 100*time.Millisecond)
	}
}

// errNotOurs means another process answered on the port we picked.
var errNotOurs = errors.New("another server answers on this port")

func addrInUse(logPath string, from int64) bool {
	b, err := os.ReadFile(logPath)
	if err != nil || int64(len(b)) < from {
		return false
	}
	tail := string(b[from:])
	return strings.Contains(tail, "in use") || strings.Contains(tail, "EADDRINUSE")
}

// withLog decorates a start error with the command line and the log tail,
// which is where the server says why it failed.
func (s *Server) withLog(err error) error {
	return fmt.Errorf("%w\ncommand: %s\nlast lines of %s:\n%s", err, s.cmdline, s.logPath, s.LogTail(logTailLines))
}

// Shutdown stops the server cleanly (SIGTERM, or SIGINT for PostgreSQL's
// fast shutdown), waits up to StopGrace, then SIGKILLs it and its children.
// The data dir is kept, so Restart can start it again.
func (s *Server) Shutdown(ctx context.Context) error {
	p := s.live()
	if p == nil {
		return nil
	}
	_ = s.Resume() // a server stopped by Pause cannot act on the stop signal
	tree := processTree(p.cmd.Process.Pid)
	if err := p.cmd.Process.Signal(s.drv.stopSignal()); err != nil && !p.exited() {
		return fmt.Errorf("stop %s: %w", s.Kind, err)
	}
	grace := time.NewTimer(StopGrace)
	defer grace.Stop()
	var err error
	select {
	case <-p.done:
	case <-grace.C:
		err = fmt.Errorf("stop %s: no exit %v after %v, killed", s.Kind, s.drv.stopSignal(), StopGrace)
		killTree(tree)
		<-p.done
	case <-ctx.Done():
		killTree(tree)
		<-p.done
	}
	// Children normally exit before their parent; make sure of it.
	if !waitGone(tree, 2*time.Second) {
		killTree(tree)
		waitGone(tree, 5*time.Second)
	}
	return err
}

// Stop shuts the server down (see Shutdown) and removes its data dir. It is
// idempotent, and also cleans up after Kill.
func (s *Server) Stop(ctx context.Context) error {
	err := s.Shutdown(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed {
		return err
	}
	if rerr := s.removeDirs(); rerr != nil {
		err = errors.Join(err, fmt.Errorf("stop %s: %w", s.Kind, rerr))
	}
	s.removed = true
	unregister(s)
	return err
}

// Kill SIGKILLs the server and all its processes, as a crash would, and
// keeps the data dir for Restart or inspection. Stop still cleans up.
func (s *Server) Kill() error {
	p := s.live()
	if p == nil {
		return nil
	}
	tree := processTree(p.cmd.Process.Pid)
	killTree(tree)
	<-p.done
	if !waitGone(tree, 5*time.Second) {
		return fmt.Errorf("kill %s: processes still alive after SIGKILL", s.Kind)
	}
	return nil
}

// Restart starts the server again on the same data dir and port, after Kill
// or Shutdown, and waits until it answers (after crash recovery, if any).
func (s *Server) Restart(ctx context.Context) error {
	s.mu.Lock()
	p, removed := s.proc, s.removed
	s.mu.Unlock()
	switch {
	case removed:
		return fmt.Errorf("restart %s: data dir already removed by Stop", s.Kind)
	case p != nil && !p.exited():
		return fmt.Errorf("restart %s: still running (pid %d)", s.Kind, s.PID)
	}
	if _, err := s.launch(ctx); err != nil {
		return fmt.Errorf("restart %s: %w", s.Kind, err)
	}
	return nil
}

// Describe names the server for a report: its kind and process id.
func (s *Server) Describe() (kind string, pid int) { return string(s.Kind), s.PID }

// Dir is the server's data directory.
func (s *Server) Dir() string { return s.DataDir }

// live is the server's process while it runs, nil when there is none or
// it has exited.
func (s *Server) live() *process {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil || p.exited() {
		return nil
	}
	return p
}

// Running reports whether the server process is alive, or being restarted on
// purpose by Reconfigure.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	// A restart that Reconfigure does on purpose is not a death.
	return s.restarting || s.proc != nil && !s.proc.exited()
}

// CommandLine is the server's last command line, for the record.
func (s *Server) CommandLine() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmdline
}

// LogPath is the file that receives the server's output.
func (s *Server) LogPath() string { return s.logPath }

// LogTail returns the last n lines of the server's log.
func (s *Server) LogTail(n int) string {
	const maxRead = 64 << 10
	f, err := os.Open(s.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	size := fileSize(s.logPath)
	off := max(size-maxRead, 0)
	buf := make([]byte, size-off)
	nr, _ := f.ReadAt(buf, off)
	lines := strings.Split(strings.TrimRight(string(buf[:nr]), "\n"), "\n")
	if off > 0 && len(lines) > 1 {
		lines = lines[1:] // first line is likely partial
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func (s *Server) removeDirs() error {
	var errs []error
	for _, d := range []string{s.DataDir, s.extraDir} {
		if d != "" {
			errs = append(errs, os.RemoveAll(d))
		}
	}
	return errors.Join(errs...)
}

// childEnv is the caller's environment without variables the servers and
// their tools would pick up instead of our flags (PGDATA, PGPORT, MYSQL_HOST...).
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "PG") || strings.HasPrefix(name, "MYSQL") || strings.HasPrefix(name, "MARIADB") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// The registry of servers started and not yet Stopped, for StopAll. It is
// package state on purpose: a Ctrl-C handler must reach every server.
var registry struct {
	sync.Mutex
	servers map[*Server]struct{}
}

func register(s *Server) {
	registry.Lock()
	defer registry.Unlock()
	if registry.servers == nil {
		registry.servers = make(map[*Server]struct{})
	}
	registry.servers[s] = struct{}{}
}

func unregister(s *Server) {
	registry.Lock()
	defer registry.Unlock()
	delete(registry.servers, s)
}

// StopAll stops every server this process started and has not stopped yet
// (killed ones included, so their data dirs go too), in parallel.
func StopAll(ctx context.Context) error {
	registry.Lock()
	var all []*Server
	for s := range registry.servers {
		all = append(all, s)
	}
	registry.Unlock()
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, s := range all {
		wg.Go(func() { errs[i] = s.Stop(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

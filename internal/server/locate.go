package server

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Binaries are the programs that run one kind of server.
type Binaries struct {
	Server string // postgres, redis-server, memcached, mariadbd
	// Init creates a data dir: initdb, mariadb-install-db; "" if not needed.
	Init string
	// PGConfig is pg_config beside postgres ("" if absent), which tells where
	// extensions such as pg_stat_statements live.
	PGConfig string
}

// Environment variables that override where binaries are looked for.
const (
	EnvPostgresBin    = "STOREBENCH_POSTGRES_BIN" // dir with postgres and initdb
	EnvRedisServer    = "STOREBENCH_REDIS_SERVER" // path of redis-server
	EnvMemcached      = "STOREBENCH_MEMCACHED"    // path of memcached
	EnvMariaDBBin     = "STOREBENCH_MARIADB_BIN"  // dir with mariadbd (and mariadb-install-db)
	homebrewBin       = "/opt/homebrew/bin"
	homebrewOptPrefix = "/opt/homebrew/opt/"
)

// MissingError reports a server binary that cannot be found.
type MissingError struct {
	Kind   Kind
	Binary string   // e.g. "initdb"
	Env    string   // the override variable, set or not
	Looked []string // where it was looked for
}

func (e *MissingError) Error() string {
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
		return "sudo apt-get install -y postgresql (macOS: brew install postgresql@16)"
	case Redis:
		return "sudo apt-get install -y redis-server (macOS: brew install redis)"
	case Memcached:
		return "sudo apt-get install -y memcached (macOS: brew install memcached)"
	case MariaDB:
		return "sudo apt-get install -y mariadb-server (macOS: brew install mariadb)"
	}
	return fmt.Sprintf("unknown server kind %q", k)
}

// Locate finds the binaries of kind k: the STOREBENCH_* override if set (and
// nothing else then, so a wrong override is reported, not silently ignored),
// else PATH, then the usual Debian, Homebrew and /usr/local places. For
// PostgreSQL the newest /usr/lib/postgresql/N/bin wins after PATH, and all
// tools come from the same dir, so versions never mix.
func Locate(k Kind) (Binaries, error) {
	switch k {
	case Postgres:
		return locatePostgres()
	case Redis:
		return locateOne(k, "redis-server", EnvRedisServer)
	case Memcached:
		return locateOne(k, "memcached", EnvMemcached)
	case MariaDB:
		return locateMariaDB()
	}
	return Binaries{}, fmt.Errorf("unknown server kind %q (known: %v)", k, Kinds())
}

var commonDirs = []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin", homebrewBin}

func locatePostgres() (Binaries, error) {
	var dirs []string
	if d := os.Getenv(EnvPostgresBin); d != "" {
		dirs = []string{d}
	} else {
		if p, err := exec.LookPath("postgres"); err == nil {
			if r, err := filepath.EvalSymlinks(p); err == nil {
				p = r
			}
			dirs = append(dirs, filepath.Dir(p))
		}
		dirs = append(dirs, versionedDirs("/usr/lib/postgresql/*/bin")...)
		dirs = append(dirs, versionedDirs("/usr/local/opt/postgresql@*/bin")...)
		dirs = append(dirs, versionedDirs(homebrewOptPrefix+"postgresql@*/bin")...)
		dirs = append(dirs, "/usr/local/pgsql/bin", homebrewBin, "/usr/local/bin")
	}
	for _, d := range dirs {
		srv, init := filepath.Join(d, "postgres"), filepath.Join(d, "initdb")
		if isExecutable(srv) && isExecutable(init) {
			b := Binaries{Server: srv, Init: init}
			if c := filepath.Join(d, "pg_config"); isExecutable(c) {
				b.PGConfig = c
			}
			return b, nil
		}
	}
	return Binaries{}, &MissingError{Kind: Postgres, Binary: "postgres and initdb", Env: EnvPostgresBin, Looked: append([]string{"PATH"}, dirs...)}
}

// versionedDirs expands a glob with one version number in it, newest first.
func versionedDirs(pattern string) []string {
	matches, _ := filepath.Glob(pattern)
	star := strings.Index(pattern, "*")
	version := func(m string) float64 {
		rest := m[star:]
		end := strings.IndexFunc(rest, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		if end < 0 {
			end = len(rest)
		}
		v, _ := strconv.ParseFloat(rest[:end], 64)
		return v
	}
	sort.SliceStable(matches, func(i, j int) bool { return version(matches[i]) > version(matches[j]) })
	return matches
}

func locateOne(k Kind, name, env string) (Binaries, error) {
	if p := os.Getenv(env); p != "" {
		if isExecutable(p) {
			return Binaries{Server: p}, nil
		}
		return Binaries{}, &MissingError{Kind: k, Binary: name, Env: env}
	}
	if p, err := exec.LookPath(name); err == nil {
		return Binaries{Server: p}, nil
	}
	if p := findIn(name, commonDirs); p != "" {
		return Binaries{Server: p}, nil
	}
	return Binaries{}, &MissingError{Kind: k, Binary: name, Env: env, Looked: append([]string{"PATH"}, commonDirs...)}
}

func locateMariaDB() (Binaries, error) {
	dirs := append(append([]string{}, commonDirs...), "/usr/local/opt/mariadb/bin", homebrewOptPrefix+"mariadb/bin")
	usePath := true
	if d := os.Getenv(EnvMariaDBBin); d != "" {
		// Debian splits mariadbd (sbin) and mariadb-install-db (bin).
		dirs = []string{d, filepath.Join(d, "..", "sbin"), filepath.Join(d, "..", "bin")}
		usePath = false
	}
	find := func(names ...string) string {
		for _, n := range names {
			if usePath {
				if p, err := exec.LookPath(n); err == nil {
					return p
				}
			}
			if p := findIn(n, dirs); p != "" {
				return p
			}
		}
		return ""
	}
	b := Binaries{Server: find("mariadbd", "mysqld"), Init: find("mariadb-install-db", "mysql_install_db")}
	missing := ""
	switch {
	case b.Server == "":
		missing = "mariadbd"
	case b.Init == "":
		missing = "mariadb-install-db"
	default:
		return b, nil
	}
	looked := dirs
	if usePath {
		looked = append([]string{"PATH"}, dirs...)
	}
	return Binaries{}, &MissingError{Kind: MariaDB, Binary: missing, Env: EnvMariaDBBin, Looked: looked}
}

func findIn(name string, dirs []string) string {
	for _, d := range dirs {
		if p := filepath.Join(d, name); isExecutable(p) {
			return p
		}
	}
	return ""
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

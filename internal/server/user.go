package server

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/storebench/storebench/internal/owner"
)

// runAccount picks the OS account servers run as. As root, PostgreSQL refuses
// to start and MariaDB/Memcached want to drop privileges themselves, so run
// them as the kind's usual account or nobody; otherwise as ourselves.
func runAccount(preferred []string) (string, *syscall.Credential, error) {
	if os.Geteuid() != 0 {
		u, err := user.Current()
		if err != nil {
			return strconv.Itoa(os.Geteuid()), nil, nil
		}
		return u.Username, nil, nil
	}
	candidates := append(append([]string{}, preferred...), "nobody")
	for _, name := range candidates {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil || uid == 0 {
			continue
		}
		return name, &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return "", nil, fmt.Errorf("running as root, and none of the accounts %s exists to run the server unprivileged: run storebench as a non-root user or create user %s",
		strings.Join(candidates, ", "), candidates[0])
}

// prepareDir hands the fresh data dir to the server's account (Start has
// checked with checkBaseDir that the account can reach it).
func (s *Server) prepareDir() error {
	if s.cred == nil {
		return nil
	}
	if err := os.Chmod(s.DataDir, 0o700); err != nil {
		return err
	}
	return chownTree(s.DataDir, s.cred)
}

func chownTree(dir string, cred *syscall.Credential) error {
	return filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(cred.Uid), int(cred.Gid))
	})
}

// checkTraversable fails when an ancestor of dir (the data dir, or the
// binaries' dir) cannot be searched by the server's account (t.TempDir and
// MkdirTemp parents are 0700, and so is /root), since the server would then
// fail with a less clear "permission denied". other is the alternative the
// message offers.
func checkTraversable(dir, account string, cred *syscall.Credential, other string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for d := abs; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if !searchable(fi, cred) {
			return fmt.Errorf("directory %s is not searchable by user %s, who runs the server: chmod o+x %s, or %s", d, account, d, other)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

func searchable(fi os.FileInfo, cred *syscall.Credential) bool {
	mode := fi.Mode().Perm()
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return mode&0o001 != 0
	}
	switch {
	case st.Uid == cred.Uid:
		return mode&0o100 != 0
	case st.Gid == cred.Gid:
		return mode&0o010 != 0
	default:
		return mode&0o001 != 0
	}
}

// maxSocketPath keeps unix socket paths under the kernel's sun_path limit
// (108 bytes on Linux, 104 on macOS) with room for the file name.
const maxSocketPath = 90

// socketDir returns a dir for the server's unix socket: the data dir when its
// path is short enough, else a short fresh dir under /tmp removed by Stop.
func (s *Server) socketDir() (string, error) {
	if s.sockDir != "" {
		return s.sockDir, nil
	}
	if len(s.DataDir) <= maxSocketPath-20 {
		s.sockDir = s.DataDir
		return s.sockDir, nil
	}
	d, err := owner.MakeDir("/tmp", "sb-sock-", string(s.Kind)+" socket dir")
	if err != nil {
		return "", err
	}
	s.extraDir = d
	if s.cred != nil {
		if err := os.Chown(d, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return "", err
		}
	}
	s.sockDir = d
	return d, nil
}

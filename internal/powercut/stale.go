package powercut

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/storebench/storebench/internal/owner"
)

// mountEntry is one line of /proc/self/mountinfo, the fields we use.
type mountEntry struct {
	point, fsType, source string
}

// parseMountinfo reads proc(5)'s mountinfo; malformed lines are skipped.
func parseMountinfo(text string) []mountEntry {
	var out []mountEntry
	for line := range strings.Lines(text) {
		fields := strings.Fields(line)
		sep := -1
		for i := 6; i < len(fields); i++ {
			if fields[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+2 >= len(fields) {
			continue
		}
		out = append(out, mountEntry{point: unescapeMount(fields[4]), fsType: fields[sep+1], source: unescapeMount(fields[sep+2])})
	}
	return out
}

// unescapeMount undoes the kernel's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountOwner is the process that serves a power-cut filesystem, from the
// mount's source ("storebench:<pid>:<start ticks>").
func mountOwner(source string) (owner.Process, bool) {
	rest, ok := strings.CutPrefix(source, sourcePrefix)
	if !ok {
		return owner.Process{}, false
	}
	pidText, startText, ok := strings.Cut(rest, ":")
	pid, err1 := strconv.Atoi(pidText)
	start, err2 := strconv.ParseUint(startText, 10, 64)
	if !ok || err1 != nil || err2 != nil || pid <= 0 {
		return owner.Process{}, false
	}
	// A mount lives on this host and this boot only.
	self := owner.Self()
	return owner.Process{Host: self.Host, Boot: self.Boot, PID: pid, Start: start}, true
}

// CleanStale unmounts the power-cut filesystems under dir whose server
// process is gone (SIGKILLed mid-run: its mount answers "transport
// endpoint is not connected" and blocks removing dir), and returns their
// mountpoints. A live server's mounts are left alone. Their attics are
// owner-marked directories, for storebench clean to remove.
//
// The owner a mount's source names is its server, not the storebench that
// asked for it: the mount is dead exactly when its server is, whatever
// became of storebench; and a server whose storebench died is unmounting
// and exiting by itself (stdin's EOF, Pdeathsig), which is not to be
// raced.
func CleanStale(dir string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("powercut: %w", err)
	}
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("powercut: list mounts: %w", err)
	}
	var cleaned []string
	var errs []error
	for _, m := range parseMountinfo(string(info)) {
		if m.fsType != "fuse."+fsName || !within(abs, m.point) {
			continue
		}
		p, ok := mountOwner(m.source)
		if !ok {
			continue
		}
		if state, _ := p.State(); state != owner.Dead {
			continue
		}
		if err := unmountForce(m.point); err != nil {
			errs = append(errs, fmt.Errorf("powercut: unmount stale %s: %w", m.point, err))
			continue
		}
		cleaned = append(cleaned, m.point)
	}
	return cleaned, errors.Join(errs...)
}

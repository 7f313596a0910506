package files

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// utimeOmit leaves a timestamp unchanged in utimensat.
const utimeOmit = unix.UTIME_OMIT

// renameNoReplace renames like renameat, but fails with EEXIST when the
// target exists. EINVAL/ENOSYS mean the filesystem cannot, and the caller
// falls back.
func renameNoReplace(fromDir int, from string, toDir int, to string) error {
	return unix.Renameat2(fromDir, from, toDir, to, unix.RENAME_NOREPLACE)
}

// mountFacts describes the filesystem dir lives on, for the result:
// "mount_options" (the mount's and the superblock's, from
// /proc/self/mountinfo) and, for ext4, "journal" ("none" or "yes", from
// /sys/fs/ext4/<device>/journal_task): without a journal, ext4 delays the
// reuse of freed inodes, which slows file creation after deletions (see
// moveAside). A fact it cannot read is left out.
func mountFacts(dir string) map[string]string {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return nil
	}
	devID := fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	facts := map[string]string{}
	if opts, fsType := mountOptions(dir, devID); opts != "" {
		facts["mount_options"] = opts
		if strings.HasPrefix(fsType, "ext") { // ext2 and ext3 mounts are served by ext4 too
			if j := ext4Journal(devID); j != "" {
				facts["journal"] = j
			}
		}
	}
	return facts
}

// mountOptions finds the mount of device devID ("major:minor") that holds
// dir (the longest mount point that is a prefix of it) in
// /proc/self/mountinfo, and returns its options and filesystem type.
func mountOptions(dir, devID string) (opts, fsType string) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", ""
	}
	best := -1
	for _, line := range strings.Split(string(b), "\n") {
		// id parent major:minor root mountpoint options [optional...] - type source superoptions
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 6 || len(g) < 3 || f[2] != devID {
			continue
		}
		mp := f[4]
		if !(dir == mp || strings.HasPrefix(dir, strings.TrimSuffix(mp, "/")+"/")) || len(mp) <= best {
			continue
		}
		best = len(mp)
		opts, fsType = f[5]+" ("+g[2]+")", g[0]
	}
	return opts, fsType
}

// ext4Journal reads whether the ext4 filesystem on device devID has a
// journal: "none", "yes", or "" when it cannot tell.
func ext4Journal(devID string) string {
	ue, err := os.ReadFile("/sys/dev/block/" + devID + "/uevent")
	if err != nil {
		return ""
	}
	var name string
	for _, l := range strings.Split(string(ue), "\n") {
		if v, ok := strings.CutPrefix(l, "DEVNAME="); ok {
			name = filepath.Base(v)
		}
	}
	if name == "" {
		return ""
	}
	task, err := os.ReadFile("/sys/fs/ext4/" + name + "/journal_task")
	if err != nil {
		return ""
	}
	if strings.TrimSpace(string(task)) == "<none>" {
		return "none"
	}
	return "yes"
}

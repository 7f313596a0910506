package durability

import (
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// childSysProcAttr makes the kernel kill the writer process if storebench
// dies first, so no child outlives a run, and puts it in a process group of
// its own: a terminal's Ctrl-C goes to the foreground group, and a writer in
// storebench's group died of it before storebench saw the signal, so the
// cell was recorded as failed ("the writer process is gone") instead of
// interrupted. storebench kills the writer itself when a run is cancelled.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// filesystem names the filesystem holding path, "" when unknown.
func filesystem(path string) string {
	var st unix.Statfs_t
	if path == "" || unix.Statfs(path, &st) != nil {
		return ""
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC:
		return "ext2/3/4"
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.TMPFS_MAGIC:
		return "tmpfs (memory: nothing on it survives a power loss, fsync or not)"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	case unix.OVERLAYFS_SUPER_MAGIC:
		return "overlayfs"
	case 0x2fc12fc1:
		return "zfs"
	case unix.NFS_SUPER_MAGIC:
		return "nfs"
	case unix.F2FS_SUPER_MAGIC:
		return "f2fs"
	}
	return "0x" + strconv.FormatUint(uint64(uint32(st.Type)), 16)
}

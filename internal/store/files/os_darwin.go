package files

import "golang.org/x/sys/unix"

// utimeOmit leaves a timestamp unchanged in utimensat (UTIME_OMIT in macOS's
// <sys/stat.h>; golang.org/x/sys does not define it for darwin).
const utimeOmit = -2

// renameNoReplace is renameatx_np with RENAME_EXCL, macOS's RENAME_NOREPLACE.
func renameNoReplace(fromDir int, from string, toDir int, to string) error {
	return unix.RenameatxNp(fromDir, from, toDir, to, unix.RENAME_EXCL)
}

// mountFacts is empty on macOS: the reuse of freed inodes that it reports
// on Linux is ext4's.
func mountFacts(string) map[string]string { return nil }

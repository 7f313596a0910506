package files

import "golang.org/x/sys/unix"

// utimeOmit leaves a timestamp unchanged in utimensat.
const utimeOmit = unix.UTIME_OMIT

// renameNoReplace renames like renameat, but fails with EEXIST when the
// target exists. EINVAL/ENOSYS mean the filesystem cannot, and the caller
// falls back.
func renameNoReplace(fromDir int, from string, toDir int, to string) error {
	return unix.Renameat2(fromDir, from, toDir, to, unix.RENAME_NOREPLACE)
}

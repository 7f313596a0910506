package store

import (
	"fmt"
	"io/fs"
)

// CheckWholeFile says why a file that is read whole (a scenario, a
// certificate, a password file) must not be: it is not a regular file (a
// FIFO waits for a writer, /dev/zero never ends), or it is larger than
// maxMiB MiB. fi is the file's (f.Stat of the opened file where it can
// be, so that nothing is swapped in between). The error names no path:
// the caller's message does.
func CheckWholeFile(fi fs.FileInfo, maxMiB int64) error {
	m := fi.Mode()
	if m.IsRegular() {
		if fi.Size() > maxMiB<<20 {
			return fmt.Errorf("larger than %d MiB, the most storebench reads", maxMiB)
		}
		return nil
	}
	kind := "a special file"
	switch {
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		kind = "a character device"
	case m&fs.ModeDevice != 0:
		kind = "a block device"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	}
	return fmt.Errorf("%s, not a regular file", kind)
}

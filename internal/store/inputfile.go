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
	return fmt.Errorf("%s, not a regular file", FileKind(m))
}

// FileKind names what a file that is not a regular file is, for a message.
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "a special file"
}

package result

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// maxSameName bounds how many runs may share a start second in one output
// directory (20261124T061344Z, -2, -3, …) before Create gives up: far more
// than shards or CI jobs started together, few enough to fail fast on a
// directory that refuses every name.
const maxSameName = 1000

// mkdirUnique creates a new directory out/id, or out/id-2, out/id-3, … when
// that name is taken, and returns the name it made. The directory is made
// with mkdir(2), which fails if the name exists, so two runs started in the
// same second (or shards sharing --out) never share one and never replace
// each other's result.
func mkdirUnique(out, id string) (string, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", fmt.Errorf("create result directory: %w", explain(err))
	}
	name := id
	for n := 2; n <= maxSameName+1; n++ {
		err := os.Mkdir(filepath.Join(out, name), 0o755)
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("create result directory: %w", explain(err))
		}
		name = id + "-" + strconv.Itoa(n)
	}
	return "", fmt.Errorf("create result directory: %s and %d more names like it exist in %s", id, maxSameName, out)
}

// WriteFileAtomic writes path through a temporary file beside it and a
// rename, so a reader never sees half a file and a failed write (a full
// disk, a failed render) leaves no temporary file and the old file intact.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return explain(errors.Unwrap(err))
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	bw := bufio.NewWriterSize(tmp, 64<<10)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return explain(err)
}

// explain names the cause a user can act on for the errors of a full or
// read-only disk, which the OS words tersely ("no space left on device").
func explain(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return fmt.Errorf("the disk is full (%w): free some space or give another --out", err)
	case errors.Is(err, syscall.EROFS):
		return fmt.Errorf("the filesystem is read-only (%w): give another --out", err)
	}
	return err
}

// WriteNew writes r as dir/result.json, making dir if needed. It first
// claims result.json and each name in beside (report.html) with O_EXCL,
// so it refuses a dir that holds any of them before it writes anything: a
// result is never replaced, nor what goes beside it. A claimed name is an
// empty file until its content is renamed over it (WriteFileAtomic).
func WriteNew(dir string, r *Result, beside ...string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", explain(err)
	}
	var claimed []string
	for _, name := range append([]string{"result.json"}, beside...) {
		path := filepath.Join(dir, name)
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			for _, c := range claimed {
				os.Remove(c)
			}
			if errors.Is(err, os.ErrExist) {
				return "", fmt.Errorf("%s exists: a result is never replaced, give another directory", path)
			}
			return "", explain(err)
		}
		f.Close()
		claimed = append(claimed, path)
	}
	w := &Writer{path: claimed[0], r: r}
	if err := w.flush(); err != nil {
		for _, c := range claimed {
			os.Remove(c)
		}
		return "", err
	}
	return w.path, nil
}

package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/storebench/storebench/internal/result"
)

// checkOutputFile refuses, before any work, an output file that could not
// be written after it: a directory, or a path whose directory is missing.
// "" is no file.
func checkOutputFile(flag, path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return usagef("%s %s: a directory; want a file", flag, path)
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || !fi.IsDir() {
		return usagef("%s %s: its directory %s does not exist", flag, path, filepath.Dir(path))
	}
	return nil
}

// writeJUnit writes a JUnit file atomically: a CI system reading it never
// sees half of one.
func writeJUnit(path string, write func(io.Writer) error) error {
	if err := result.WriteFileAtomic(path, write); err != nil {
		return fmt.Errorf("--junit %s: %w", path, err)
	}
	return nil
}

package owner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// MarkerFile, inside a directory storebench made, names its owner: the
// directory is storebench's own, and left over once that owner is gone.
const MarkerFile = ".storebench-owner"

// Marker is the content of a MarkerFile.
type Marker struct {
	Process
	Made time.Time `json:"made"`
	// What the directory is, e.g. "run scratch dir", "postgres data dir".
	What string `json:"what"`
}

// Mark writes this process's marker into dir, which it has just made.
func Mark(dir, what string) error {
	b, err := json.Marshal(Marker{Process: Self(), Made: time.Now().UTC(), What: what})
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, MarkerFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("mark %s as storebench's: %w", dir, err)
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("mark %s as storebench's: %w", dir, err)
	}
	return nil
}

// MakeDir makes a fresh directory in base (os.MkdirTemp's pattern) marked
// with this process as its owner, so that what a killed run leaves behind
// can be found and removed by storebench clean, and a live run's never is.
func MakeDir(base, pattern, what string) (string, error) {
	dir, err := os.MkdirTemp(base, pattern)
	if err != nil {
		return "", err
	}
	if err := Mark(dir, what); err != nil {
		return "", errors.Join(err, os.RemoveAll(dir))
	}
	return dir, nil
}

// ErrNoMarker means a directory carries no marker: not storebench's to remove.
var ErrNoMarker = errors.New("no " + MarkerFile + " marker")

// ReadMarker reads dir's marker; ErrNoMarker when it has none.
func ReadMarker(dir string) (Marker, error) {
	fi, err := os.Lstat(filepath.Join(dir, MarkerFile))
	if errors.Is(err, os.ErrNotExist) {
		return Marker{}, ErrNoMarker
	}
	if err != nil {
		return Marker{}, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return Marker{}, fmt.Errorf("%s: %s is not a marker file: %w", dir, MarkerFile, ErrNoMarker)
	}
	b, err := os.ReadFile(filepath.Join(dir, MarkerFile))
	if err != nil {
		return Marker{}, err
	}
	var m Marker
	if err := json.Unmarshal(b, &m); err != nil || m.PID <= 0 {
		return Marker{}, fmt.Errorf("%s: unreadable %s: %w", dir, MarkerFile, ErrNoMarker)
	}
	return m, nil
}

package powercut

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// model is the POSIX durability model the filesystem implements, kept by
// the test beside the mount: names per directory and bytes per inode, live
// and durable.
type model struct {
	live, durable           map[string]map[string]int // dir -> name -> inode
	liveBytes, durableBytes map[int][]byte
	nextIno                 int
}

var modelDirs = []string{"a", "b"}

func newModel() *model {
	m := &model{live: map[string]map[string]int{}, durable: map[string]map[string]int{},
		liveBytes: map[int][]byte{}, durableBytes: map[int][]byte{}}
	for _, d := range modelDirs {
		m.live[d], m.durable[d] = map[string]int{}, map[string]int{}
	}
	return m
}

// afterCut is what the cut leaves: the durable names with their durable
// bytes, all of it durable from now on.
func (m *model) afterCut() {
	for _, d := range modelDirs {
		m.live[d] = maps(m.durable[d])
	}
	m.liveBytes = map[int][]byte{}
	for _, d := range modelDirs {
		for _, ino := range m.live[d] {
			m.liveBytes[ino] = slices.Clone(m.durableBytes[ino])
		}
	}
	m.durableBytes = map[int][]byte{}
	for ino, b := range m.liveBytes {
		m.durableBytes[ino] = slices.Clone(b)
	}
}

func maps(in map[string]int) map[string]int {
	out := make(map[string]int, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

// step does one random operation on the mount and on the model.
func (m *model) step(t *testing.T, rng *rand.Rand, mp string) string {
	t.Helper()
	dir := modelDirs[rng.IntN(len(modelDirs))]
	name := fmt.Sprintf("f%d", rng.IntN(4))
	p := filepath.Join(mp, dir, name)
	ino, exists := m.live[dir][name]
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	switch op := rng.IntN(10); {
	case op == 0 && !exists:
		must(os.WriteFile(p, nil, 0o644))
		m.nextIno++
		m.live[dir][name] = m.nextIno
		m.liveBytes[m.nextIno] = nil
		m.durableBytes[m.nextIno] = nil // a new file's durable content is empty
		return "create " + p
	case op == 1 && exists:
		off, n := rng.IntN(3*blockSize+100), 1+rng.IntN(5000)
		data := bytes.Repeat([]byte{byte('a' + rng.IntN(26))}, n)
		h, err := os.OpenFile(p, os.O_WRONLY, 0)
		must(err)
		_, err = h.WriteAt(data, int64(off))
		must(err)
		must(h.Close())
		b := m.liveBytes[ino]
		if len(b) < off+n {
			b = append(b, make([]byte, off+n-len(b))...)
		}
		copy(b[off:], data)
		m.liveBytes[ino] = b
		return fmt.Sprintf("write %s %d+%d", p, off, n)
	case op == 2 && exists:
		fsyncPath(t, p)
		m.durableBytes[ino] = slices.Clone(m.liveBytes[ino])
		return "fsync " + p
	case op == 3 && exists:
		size := rng.IntN(10000)
		must(os.Truncate(p, int64(size)))
		b := m.liveBytes[ino]
		if len(b) < size {
			b = append(b, make([]byte, size-len(b))...)
		}
		m.liveBytes[ino] = b[:size]
		return fmt.Sprintf("truncate %s %d", p, size)
	case op == 4 && exists:
		must(os.Remove(p))
		delete(m.live[dir], name)
		return "unlink " + p
	case op == 5 && exists:
		toDir := modelDirs[rng.IntN(len(modelDirs))]
		toName := fmt.Sprintf("f%d", rng.IntN(4))
		if other, ok := m.live[toDir][toName]; ok && other == ino {
			return "" // rename to a name of the same inode: no change
		}
		must(os.Rename(p, filepath.Join(mp, toDir, toName)))
		delete(m.live[dir], name)
		m.live[toDir][toName] = ino
		return fmt.Sprintf("rename %s %s/%s", p, toDir, toName)
	case op == 6 && exists:
		toDir := modelDirs[rng.IntN(len(modelDirs))]
		toName := fmt.Sprintf("f%d", rng.IntN(4))
		if _, ok := m.live[toDir][toName]; ok {
			return ""
		}
		must(os.Link(p, filepath.Join(mp, toDir, toName)))
		m.live[toDir][toName] = ino
		return fmt.Sprintf("link %s %s/%s", p, toDir, toName)
	case op == 9 && exists:
		h, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
		must(err)
		must(h.Close())
		m.liveBytes[ino] = nil
		return "open O_TRUNC " + p
	case op == 7 || op == 8:
		fsyncPath(t, filepath.Join(mp, dir))
		m.durable[dir] = maps(m.live[dir])
		return "fsync dir " + dir
	}
	return ""
}

// check compares the mount with the model's live state.
func (m *model) check(t *testing.T, mp string, history []string) {
	t.Helper()
	for _, d := range modelDirs {
		des, err := os.ReadDir(filepath.Join(mp, d))
		if err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for _, de := range des {
			got = append(got, de.Name())
		}
		for name := range m.live[d] {
			want = append(want, name)
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("dir %s holds %q, the model %q\nafter: %q", d, got, want, history)
		}
		for name, ino := range m.live[d] {
			b, err := os.ReadFile(filepath.Join(mp, d, name))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			if !bytes.Equal(b, m.liveBytes[ino]) {
				t.Fatalf("%s/%s: %d bytes, the model %d (equal prefix: %v)\nafter: %q",
					d, name, len(b), len(m.liveBytes[ino]), bytes.HasPrefix(m.liveBytes[ino], b), history)
			}
		}
	}
}

// Random sequences of writes, truncations (O_TRUNC too), fsyncs, creates, unlinks,
// renames and links: after each cut the mount holds exactly what the
// model says was durable.
func TestCutMatchesTheDurabilityModel(t *testing.T) {
	f, mp := mountT(t)
	for _, d := range modelDirs {
		if err := os.Mkdir(filepath.Join(mp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.SyncAll(); err != nil {
		t.Fatal(err)
	}
	m := newModel()
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 19))
		var history []string
		for range 40 {
			if op := m.step(t, rng, mp); op != "" {
				history = append(history, op)
			}
		}
		m.check(t, mp, history)
		cut(t, f)
		m.afterCut()
		m.check(t, mp, append(history, "cut"))
	}
}

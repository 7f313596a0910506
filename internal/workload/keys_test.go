package workload

import (
	"bytes"
	"testing"
)

func TestKeysAreUniqueAndStable(t *testing.T) {
	for _, mode := range KeyModes {
		seen := make(map[string]int64, 100000)
		for i := int64(0); i < 100000; i++ {
			k := string(AppendKey(nil, mode, 42, i))
			if j, dup := seen[k]; dup {
				t.Fatalf("%s: key %q for index %d and %d", mode, k, j, i)
			}
			seen[k] = i
		}
		a := AppendKey(nil, mode, 7, 123)
		if !bytes.Equal(a, AppendKey(nil, mode, 7, 123)) {
			t.Fatalf("%s: key not stable", mode)
		}
	}
	if bytes.Equal(AppendKey(nil, KeyRandomFloat, 1, 5), AppendKey(nil, KeyRandomFloat, 2, 5)) {
		t.Fatal("seed does not change the keys")
	}
	if k := AppendKey(nil, KeyRandomFloat, 1, 5); len(k) != 22 || string(k[:2]) != "0." {
		t.Fatalf("random-float key %q is not shaped like 0.<20 digits>", k)
	}
	if k := string(AppendKey(nil, KeySequential, 1, 42)); k != "key:0000000042" {
		t.Fatalf("sequential key = %q", k)
	}
}

func TestValuesDifferAndHaveTheAskedSize(t *testing.T) {
	v1 := AppendValue(nil, 1, 10, 0, 100)
	if len(v1) != 100 {
		t.Fatalf("len = %d", len(v1))
	}
	if bytes.Equal(v1, AppendValue(nil, 1, 11, 0, 100)) || bytes.Equal(v1, AppendValue(nil, 1, 10, 1, 100)) {
		t.Fatal("values of different keys or versions are equal")
	}
	if !bytes.Equal(v1, AppendValue(nil, 1, 10, 0, 100)) {
		t.Fatal("value not stable")
	}
}

func TestAppendKeyDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() {
		buf = AppendKey(buf[:0], KeyRandomFloat, 1, 99)
		buf = AppendValue(buf[:0], 1, 99, 0, 50)
	}); n != 0 {
		t.Fatalf("allocs = %v", n)
	}
}

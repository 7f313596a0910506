package workload

import "testing"

// FuzzParseShard: --shard's parser never panics, accepts only
// 1 <= I <= N <= MaxShards, and what it accepts reads back the same.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/1", "2/3", "1023/1024", "0/3", "3/3", "4/3", "1/0", "1/1025", "a/b", "1", "", "-1/2", "1/2/3", " 1 / 2 ", "+1/2", "9223372036854775808/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseShard(text)
		if err != nil {
			return
		}
		if s.Index < 0 || s.Index >= s.Count || s.Count > MaxShards {
			t.Fatalf("ParseShard(%q) accepted %v", text, s)
		}
		if back, err := ParseShard(s.String()); err != nil || back != s {
			t.Fatalf("%v reads back as %v, %v", s, back, err)
		}
		whole := Load{Clients: MaxShards, Ops: 1 << 40}
		if l, err := whole.Share(s); err != nil || l.Clients < 1 {
			t.Fatalf("share %v of %+v: %+v, %v", s, whole, l, err)
		}
	})
}

package gen

import (
	"math"
	"testing"
)

// The vectors were printed by this Java program, run once on OpenJDK
// 17.0.15; its two functions are copied from YCSB's Utils.fnvhash64 and
// CoreWorkload.buildKeyName (commit d9faaac8):
//
//	static long fnvhash64(long val) {
//	  long hashval = 0xCBF29CE484222325L;
//	  for (int i = 0; i < 8; i++) {
//	    long octet = val & 0x00ff;
//	    val = val >> 8;
//	    hashval = hashval ^ octet;
//	    hashval = hashval * 1099511628211L;
//	  }
//	  return Math.abs(hashval);
//	}
//	static String buildKeyName(long keynum, int zeropadding, boolean orderedinserts) {
//	  if (!orderedinserts) keynum = fnvhash64(keynum);
//	  String value = Long.toString(keynum);
//	  int fill = zeropadding - value.length();
//	  String prekey = "user";
//	  for (int i = 0; i < fill; i++) prekey += '0';
//	  return prekey + value;
//	}
//	for (long k : keys) System.out.println(k + " " + buildKeyName(k, 1, false)
//	    + " " + buildKeyName(k, 20, false) + " " + buildKeyName(k, 5, true));
//
// Keynum 0's "user6284781860667377211" is the first key of every YCSB load
// with the default hashed insert order.
func TestKeyNamesMatchYCSB(t *testing.T) {
	for _, c := range []struct {
		keynum                    int64
		hashed, padded20, ordered string
	}{
		{0, "user6284781860667377211", "user06284781860667377211", "user00000"},
		{1, "user8517097267634966620", "user08517097267634966620", "user00001"},
		{2, "user1820151046732198393", "user01820151046732198393", "user00002"},
		{3, "user4052466453699787802", "user04052466453699787802", "user00003"},
		{4, "user3232700585171816769", "user03232700585171816769", "user00004"},
		{5, "user1000385178204227360", "user01000385178204227360", "user00005"},
		{6, "user7697331399106995587", "user07697331399106995587", "user00006"},
		{7, "user5465015992139406178", "user05465015992139406178", "user00007"},
		{8, "user6873002678636213555", "user06873002678636213555", "user00008"},
		{9, "user9105318085603802964", "user09105318085603802964", "user00009"},
		{10, "user2408371864701034737", "user02408371864701034737", "user00010"},
		{999, "user2071219101098386137", "user02071219101098386137", "user00999"},
		{1000, "user5952875239596136740", "user05952875239596136740", "user01000"},
		{123456789, "user2350796791908741607", "user02350796791908741607", "user123456789"},
		{-1, "user8289690350564177859", "user08289690350564177859", "user000-1"},
		{math.MinInt64, "user6284922598155788219", "user06284922598155788219", "user-9223372036854775808"},
		{math.MaxInt64, "user8289549613075766851", "user08289549613075766851", "user9223372036854775807"},
	} {
		if got := KeyName(c.keynum, 1, false); got != c.hashed {
			t.Errorf("buildKeyName(%d, 1, hashed) = %s, YCSB's %s", c.keynum, got, c.hashed)
		}
		if got := KeyName(c.keynum, 20, false); got != c.padded20 {
			t.Errorf("buildKeyName(%d, 20, hashed) = %s, YCSB's %s", c.keynum, got, c.padded20)
		}
		if got := KeyName(c.keynum, 5, true); got != c.ordered {
			t.Errorf("buildKeyName(%d, 5, ordered) = %s, YCSB's %s", c.keynum, got, c.ordered)
		}
	}
}

func TestAppendKeyNameDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 32)
	allocs := testing.AllocsPerRun(100, func() { buf = AppendKeyName(buf[:0], 12345, 1, false) })
	if allocs != 0 {
		t.Errorf("AppendKeyName allocated %v times a call into a buffer with room", allocs)
	}
}

// Java's casts, which the ports go through where Go's conversions are
// undefined or differ.
func TestJavaConversions(t *testing.T) {
	for _, c := range []struct {
		f    float64
		long int64
		i    int32
	}{
		{math.NaN(), 0, 0},
		{1e19, math.MaxInt64, math.MaxInt32},
		{-1e19, math.MinInt64, math.MinInt32},
		{3e9, 3000000000, math.MaxInt32},
		{-2.9, -2, -2},
		{2.9, 2, 2},
	} {
		if got := javaLong(c.f); got != c.long {
			t.Errorf("(long) %v = %d, Java's %d", c.f, got, c.long)
		}
		if got := javaInt(c.f); got != c.i {
			t.Errorf("(int) %v = %d, Java's %d", c.f, got, c.i)
		}
	}
	if got := intValue(1 << 31); got != math.MinInt32 {
		t.Errorf("Long.intValue(2^31) = %d, Java's %d", got, math.MinInt32)
	}
	if got := intValue(1<<32 + 5); got != 5 {
		t.Errorf("Long.intValue(2^32+5) = %d, Java's 5", got)
	}
}

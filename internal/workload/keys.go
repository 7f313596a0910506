// Package workload holds what every workload shares: keys and values derived
// from an index and a recorded seed, so every target sees the same data in the
// same order and the client never keeps the key set in memory.
package workload

import (
	"fmt"
	"strconv"
)

// KeyMode is how key i is spelled.
type KeyMode string

const (
	// KeyRandomFloat spells keys like the article's random floats ("0.01846..."):
	// a seeded 64-bit permutation of the index printed as 20 decimals, so the
	// keys look random, yet are unique (a permutation has no collisions).
	KeyRandomFloat KeyMode = "random-float"
	// KeySequential spells keys "key:0000000042".
	KeySequential KeyMode = "sequential"
)

// KeyModes lists the valid key modes.
var KeyModes = []KeyMode{KeyRandomFloat, KeySequential}

// ParseKeyMode validates a key mode name; "" is random-float.
func ParseKeyMode(s string) (KeyMode, error) {
	if s == "" {
		return KeyRandomFloat, nil
	}
	for _, m := range KeyModes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown key mode %q (valid: random-float, sequential)", s)
}

// Mix is splitmix64's finalizer: a bijection on uint64, so distinct inputs
// give distinct outputs.
func Mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// AppendKey appends key i to dst. It does not allocate when dst has room (32 bytes).
func AppendKey(dst []byte, mode KeyMode, seed uint64, i int64) []byte {
	if mode == KeySequential {
		dst = append(dst, "key:"...)
		return appendPadded(dst, uint64(i), 10)
	}
	// Adding the seed before mixing keeps the map a bijection for every seed.
	dst = append(dst, "0."...)
	return appendPadded(dst, Mix(uint64(i)+seed*0x9e3779b97f4a7c15), 20)
}

func appendPadded(dst []byte, v uint64, width int) []byte {
	var tmp [20]byte
	b := strconv.AppendUint(tmp[:0], v, 10)
	for n := len(b); n < width; n++ {
		dst = append(dst, '0')
	}
	return append(dst, b...)
}

const valueAlphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_"

// AppendValue appends the value of key i: size printable bytes derived from
// the seed and the index, so a read can be checked byte for byte without
// keeping what was written. version lets an overwrite produce a new value.
func AppendValue(dst []byte, seed uint64, i int64, version uint64, size int) []byte {
	state := Mix(uint64(i)^Mix(seed+version*0x632be59bd9b4e019)) | 1
	for n := 0; n < size; n++ {
		if n%10 == 0 {
			state = Mix(state + 0x9e3779b97f4a7c15)
		}
		dst = append(dst, valueAlphabet[state&63])
		state >>= 6
	}
	return dst
}

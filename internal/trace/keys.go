package trace

import "strconv"

// hash64 is a deterministic 64-bit hash (FNV-1a, then splitmix's finish),
// the same in every process, so a replay on one store uses the keys and
// connections of a replay on another.
func hash64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return mix(h)
}

func mix(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	return z ^ z>>31
}

// keyAlphabet are the bytes of a mapped key: printable, and valid in a
// memcached key (no space or control byte).
const keyAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// MapKey appends to dst the key an anonymized key becomes: anon itself
// when it has the recorded size (or none is recorded, size <= 0), else
// size bytes drawn from anon's hash, so one anonymized key is always the
// same key and keys of a size keep that size. Two anonymized keys may map
// onto one only when the size leaves too few keys (6 bits a byte).
func MapKey(dst, anon []byte, size int) []byte {
	if size <= 0 || len(anon) == size {
		return append(dst, anon...)
	}
	h := hash64(anon)
	for i := 0; i < size; i++ {
		if i%10 == 0 && i > 0 {
			h = mix(h + uint64(i))
		}
		dst = append(dst, keyAlphabet[h&63])
		h >>= 6
	}
	return dst
}

// clientID hashes a recorded client's name.
func clientID(name []byte) uint64 { return hash64(name) }

// parseInt parses a decimal integer field.
func parseInt(b []byte) (int64, error) {
	return strconv.ParseInt(string(b), 10, 64)
}

// Connection is the replay connection (of n) that a client's requests go
// to: every request of one client on one connection, in order.
func Connection(client uint64, n int) int {
	if n <= 1 {
		return 0
	}
	return int(mix(client^0x9e3779b97f4a7c15) % uint64(n))
}

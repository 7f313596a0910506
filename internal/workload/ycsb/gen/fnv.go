package gen

// FNV-64 constants, as Utils.FNV_OFFSET_BASIS_64 and FNV_PRIME_64.
const (
	fnvOffsetBasis64 = int64(-3750763034362895579) // 0xCBF29CE484222325L
	fnvPrime64       = int64(1099511628211)
)

// FNVHash64 is Utils.fnvhash64: FNV-1a over val's eight bytes, low to
// high, in signed 64-bit arithmetic, then Math.abs, which leaves
// math.MinInt64 negative as Java's does.
func FNVHash64(val int64) int64 {
	hash := fnvOffsetBasis64
	for range 8 {
		octet := val & 0xff
		val >>= 8
		hash ^= octet
		hash *= fnvPrime64
	}
	if hash < 0 {
		hash = -hash
	}
	return hash
}

// KeyPrefix is the prefix of every CoreWorkload key.
const KeyPrefix = "user"

// AppendKeyName appends CoreWorkload.buildKeyName(keynum, zeropadding,
// orderedinserts) to dst: "user", then zeros up to zeropadding digits, then
// the key number (hashed with FNVHash64 unless ordered) in decimal. It does
// not allocate when dst has room (4 + max(zeropadding, 20) bytes).
func AppendKeyName(dst []byte, keynum int64, zeropadding int, ordered bool) []byte {
	if !ordered {
		keynum = FNVHash64(keynum)
	}
	dst = append(dst, KeyPrefix...)
	if zeropadding > 1 { // a number has at least one character
		for range zeropadding - decimalLen(keynum) {
			dst = append(dst, '0')
		}
	}
	return appendJavaLong(dst, keynum)
}

// KeyName is AppendKeyName as a string.
func KeyName(keynum int64, zeropadding int, ordered bool) string {
	var buf [64]byte
	return string(AppendKeyName(buf[:0], keynum, zeropadding, ordered))
}

// decimalLen is len(Long.toString(v)), sign included.
func decimalLen(v int64) int {
	n := 1
	u := uint64(v)
	if v < 0 {
		n++
		u = -u
	}
	for ; u >= 10; u /= 10 {
		n++
	}
	return n
}

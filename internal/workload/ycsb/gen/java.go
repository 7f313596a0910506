package gen

import (
	"math"
	"strconv"
)

// The Java conversions CoreWorkload's arithmetic goes through: Go's own
// conversions differ where Java's are defined (NaN, overflow), and a
// faithful port must land on the same numbers.

// javaLong is Java's (long) cast of a double: NaN is 0, values beyond the
// range saturate, the rest truncate toward zero. Go leaves the first two
// to the platform (amd64 gives math.MinInt64 for both).
func javaLong(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt64: // 2^63 as a float64
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// javaInt is Java's (int) cast of a double: as javaLong, over 32 bits.
func javaInt(f float64) int32 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt32:
		return math.MaxInt32
	case f <= math.MinInt32:
		return math.MinInt32
	}
	return int32(f)
}

// intValue is Java's Long.intValue(): the low 32 bits, sign-extended.
// CoreWorkload passes every key number through it.
func intValue(v int64) int64 { return int64(int32(v)) }

// appendJavaLong appends Long.toString(v): decimal, '-' when negative.
func appendJavaLong(dst []byte, v int64) []byte { return strconv.AppendInt(dst, v, 10) }

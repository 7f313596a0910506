package report

import (
	"math"
	"strconv"
	"strings"
)

// Every figure a report prints goes through the helpers of this file, which
// print any float64 or int64 without a crash: "—" for NaN and ±Inf (no
// figure), exponent form (1e+300) from largestFixed on, fixed-point below.
// A float is never converted to an integer beyond that bound: Go's
// conversion of a float64 out of int64's range is implementation-defined
// (MinInt64 on amd64), which is how --rate 1e300 once printed as
// -9,223,372,036,854,775,808, and before that recursed forever.

// largestFixed is where figures switch to exponent form: no measurement
// comes near it (a quadrillion ops/s, µs or bytes), and it stays well inside
// the integers a float64 holds exactly.
const largestFixed = 1e15

// outOfScale is the text of a figure that fixed-point cannot print, and
// whether v is one: NaN, ±Inf, or |v| ≥ largestFixed.
func outOfScale(v float64) (string, bool) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "—", true
	case math.Abs(v) >= largestFixed:
		return strconv.FormatFloat(v, 'g', 3, 64), true
	}
	return "", false
}

// fixed prints v with that many decimals ("%.1f"), or out of scale.
func fixed(v float64, decimals int) string {
	if s, ok := outOfScale(v); ok {
		return s
	}
	return strconv.FormatFloat(v+0, 'f', decimals, 64) // +0: -0 prints as 0
}

// whole prints v rounded to a whole number, with thousands separators.
func whole(v float64) string {
	if s, ok := outOfScale(v); ok {
		return s
	}
	return thousands(int64(math.Round(v)))
}

// Whole is whole for the live progress line, so the terminal groups digits
// the one way the reports do.
func Whole(v float64) string { return whole(v) }

// thousands prints n with thousands separators: 1,234,567. Every int64,
// MinInt64 included (which has no positive counterpart to print instead).
func thousands(n int64) string {
	digits := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, digits = "-", digits[1:]
	}
	var b strings.Builder
	b.WriteString(sign)
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// num prints a figure with three significant digits, and thousands
// separators from 1,000 up: enough for measurements that are themselves
// HdrHistogram values good to 0.1%.
func num(v float64) string {
	if s, ok := outOfScale(v); ok {
		return s
	}
	switch {
	case v < 0:
		return "-" + num(-v)
	case v == 0:
		return "0"
	case v >= 999.5:
		return whole(v)
	case v >= 99.95:
		return fixed(v, 0)
	case v >= 9.995:
		return fixed(v, 1)
	case v >= 0.9995:
		return fixed(v, 2)
	case v < 1e-6:
		// As many decimals as three digits need would be hundreds for a
		// subnormal float.
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	// Below 1: three significant digits.
	d := int(math.Ceil(-math.Log10(v))) + 2
	return fixed(v, d)
}

// shortest prints v in full precision for a reader: the fewest digits that
// tell it from any other float64, in exponent form where fixed-point would
// need more than 20 digits; "—" for NaN and ±Inf.
func shortest(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "—"
	case a != 0 && (a < 1e-6 || a >= largestFixed):
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strconv.FormatFloat(v+0, 'f', -1, 64) // +0: -0 prints as 0
}

// exact is a figure in full precision, for data attributes and CSV.
func exact(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// ms prints milliseconds with the precision the size deserves.
func ms(v float64) string {
	switch {
	case math.Abs(v) >= 1000:
		return whole(v)
	case v >= 10:
		return fixed(v, 0)
	case v >= 1:
		return fixed(v, 1)
	}
	return fixed(v, 2)
}

// us prints microseconds, in tenths.
func us(v float64) string { return tenths(v) }

// tenths prints a figure with one decimal below 100, whole from 100 on.
func tenths(v float64) string {
	if math.Abs(v) >= 100 {
		return whole(v)
	}
	return fixed(v, 1)
}

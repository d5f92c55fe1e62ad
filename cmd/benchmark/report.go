package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"
)

// reporter writes the machine-readable result lines.
type reporter struct {
	w   io.Writer
	err error // first write error
}

func newReporter(w io.Writer) *reporter { return &reporter{w: w} }

// bench prints "BENCH <name> <value> <unit>".
func (r *reporter) bench(name string, value float64, unit string) {
	r.printf("BENCH %s %s %s\n", name, formatValue(value), unit)
}

// ratio prints "RATIO <name> <value>".
func (r *reporter) ratio(name string, value float64) {
	r.printf("RATIO %s %s\n", name, formatValue(value))
}

func (r *reporter) printf(format string, args ...any) {
	if r.err != nil {
		return
	}
	_, r.err = fmt.Fprintf(r.w, format, args...)
}

// formatValue keeps about three significant digits, never in exponent form:
// 123456 -> "123456", 72.34 -> "72.3", 1.234 -> "1.23", 0.01234 -> "0.0123".
func formatValue(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "0"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1 || a == 0:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		digits := 2 - int(math.Floor(math.Log10(a)))
		return strconv.FormatFloat(v, 'f', min(digits, 9), 64)
	}
}

// divide returns a/b, or 0 when b is 0.
func divide(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func sortedCopy(ds []time.Duration) []time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s
}

package answer

import (
	"math"
	"strconv"
	"strings"
)

// FormatFloat prints f as PostgreSQL (12 and later) prints float8 (bits
// 64) or float4 (bits 32): the shortest text that reads back as the same
// value, in fixed notation when the decimal exponent is at least -4 and
// below 15 (float8) or 6 (float4), else as d.ddde±XX; NaN and ±Infinity
// spelled PostgreSQL's way.
func FormatFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	sci := strconv.FormatFloat(f, 'e', -1, bits)
	_, expText, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(expText)
	limit := 15
	if bits == 32 {
		limit = 6
	}
	if exp < -4 || exp >= limit {
		return sci
	}
	return strconv.FormatFloat(f, 'f', -1, bits)
}

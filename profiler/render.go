package profiler

import (
	"math"
	"strconv"
	"strings"
)

// MaxDefaultBudget caps DefaultBudget.
const MaxDefaultBudget = 2700

// DefaultBudget is the token budget Markdown uses when given 0: 60 tokens
// plus 32 per column, at most MaxDefaultBudget.
func DefaultBudget(columns int) int { return min(MaxDefaultBudget, 60+32*columns) }

// shares lists values with their share of n, as "a.a@a.a 60%".
func shares(vs []ValueCount, n int64) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.Value + " " + pct(v.Count, n)
	}
	return strings.Join(parts, ", ")
}

func pct(n, total int64) string {
	if total == 0 {
		return "0%"
	}
	p := 100 * float64(n) / float64(total)
	switch {
	case p >= 10:
		return strconv.FormatFloat(p, 'f', 0, 64) + "%"
	case p >= 0.1:
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	}
	return group(n)
}

// group formats an integer with thousands separators.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// num formats a number: an integer exactly, anything else with at most
// six significant digits.
func num(v float64, isInt bool) string {
	if isInt && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return sig(v, 6)
}

// sig formats v correctly rounded to n significant digits, trailing zeros
// dropped: plainly from 0.001 up to 10 million (integer digits are never
// dropped, so 99963 stays 99963), in scientific notation (1.21e12)
// beyond.
func sig(v float64, n int) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	e := strconv.FormatFloat(v, 'e', n-1, 64)
	i := strings.IndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[i+1:])
	if exp >= -3 && exp < 7 {
		f := strconv.FormatFloat(v, 'f', max(n-1-exp, 0), 64)
		if strings.IndexByte(f, '.') >= 0 {
			f = strings.TrimRight(strings.TrimRight(f, "0"), ".")
		}
		return f
	}
	m := e[:i]
	if strings.IndexByte(m, '.') >= 0 {
		m = strings.TrimRight(strings.TrimRight(m, "0"), ".")
	}
	return m + "e" + strconv.Itoa(exp)
}

// mean3 formats a mean or standard deviation to three significant digits.
func mean3(v float64) string { return sig(v, 3) }

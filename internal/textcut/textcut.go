// Package textcut cuts strings to a byte budget without splitting a UTF-8
// sequence, for the places that bound what they echo, store or read.
package textcut

import "unicode/utf8"

// Prefix returns the longest start of s of at most n bytes that ends at a
// rune boundary of s.
func Prefix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n < 0 {
		n = 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Suffix returns the longest end of s of at most n bytes that starts at a
// rune boundary of s.
func Suffix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n < 0 {
		n = 0
	}
	start := len(s) - n
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[start:]
}

package memstore

import (
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/unicode/norm"
)

// Terms calls fn with each full-text term of text, in order: its words
// (runs of letters and digits after NFKD normalisation with combining
// marks removed, lower-cased), English stop words left out, each reduced
// to its Snowball (Porter 2) English stem. Every index backend ranks on
// these terms, so that they agree on what a query matches.
func Terms(text string, fn func(term string)) {
	TermWords(text, func(_, term string) { fn(term) })
}

// TermWords is Terms, calling fn with each term's word (lower-cased,
// normalised, not stemmed) too.
func TermWords(text string, fn func(word, term string)) {
	Words(text, func(w string) {
		if !english.IsStopWord(w) {
			fn(w, Stem(w))
		}
	})
}

// Words calls fn with each word of text: runs of letters and digits after
// NFKD normalisation with combining marks removed, lower-cased, so "Café"
// and "cafe" are the same word.
func Words(text string, fn func(word string)) {
	var sb strings.Builder
	flush := func() {
		if sb.Len() > 0 {
			fn(sb.String())
			sb.Reset()
		}
	}
	for _, r := range text {
		if r >= 0x80 {
			// Only non-ASCII text needs normalising.
			for _, r := range norm.NFKD.String(string(r)) {
				switch {
				case unicode.Is(unicode.Mn, r):
				case unicode.IsLetter(r) || unicode.IsDigit(r):
					sb.WriteRune(unicode.ToLower(r))
				default:
					flush()
				}
			}
			continue
		}
		switch {
		case 'a' <= r && r <= 'z' || '0' <= r && r <= '9':
			sb.WriteRune(r)
		case 'A' <= r && r <= 'Z':
			sb.WriteRune(r + 'a' - 'A')
		default:
			flush()
		}
	}
	flush()
}

// Stem returns the Snowball English stem of a lower-cased word; words of
// three letters or fewer, and words holding digits, are their own stems.
func Stem(w string) string {
	if len(w) <= 3 || strings.ContainsAny(w, "0123456789") {
		return w
	}
	return english.Stem(w, false)
}

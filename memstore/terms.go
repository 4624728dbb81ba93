package memstore

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/unicode/norm"

	"github.com/selmem/selmem/memstore/lemma"
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
	ContentWords(text, func(w string) { fn(w, Stem(w)) })
}

// ContentWords calls fn with each word of text (Words) that is not an
// English stop word: the words whose stems are its terms.
func ContentWords(text string, fn func(word string)) {
	Words(text, func(w string) {
		if !english.IsStopWord(w) {
			fn(w)
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

// Stem returns the Snowball English stem of a lower-cased word, or of its
// base form when it is an irregular inflection ("ran" stems as "run",
// "children" as "child": package lemma); words of three letters or fewer,
// and words holding digits, are their own stems.
func Stem(w string) string {
	if b, ok := lemma.Base(w); ok {
		w = b
	}
	if len(w) <= 3 || strings.ContainsAny(w, "0123456789") {
		return w
	}
	return english.Stem(w, false)
}

// TypoPrefixes returns the prefixes whose indexed words stand for a query
// word w that no chunk holds: w itself and, when it differs and has at
// least minLen bytes, its stem, so that "visits" finds "visitor". Both
// index backends look typos up with them.
func TypoPrefixes(w string, minLen int) []string {
	if st := Stem(w); st != w && len(st) >= minLen {
		return []string{w, st}
	}
	return []string{w}
}

// TypoStemVariants returns the strings one edit away from the stem of w
// (EditVariants) when the stem differs from w, else none: the indexed
// terms among them stand for a query word w that no chunk holds, so that
// "segmentts" (stem "segmentt") finds the term "segment". Both index
// backends look typos up with them, as terms, beside EditVariants of w
// itself, as words.
func TypoStemVariants(w string) []string {
	st := Stem(w)
	if st == w || st == "" {
		return nil
	}
	return EditVariants(st)
}

// editAlphabet are the letters EditVariants inserts and substitutes.
const editAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// MaxTypoWordLen is the longest query word, in bytes, that typo
// tolerance reads as a misspelling (EditVariants, TypoStemVariants): far
// above any word a person mistypes, and below the lengths at which a
// word's variants, about 72 times its length of them, each as long as it,
// would cost a search seconds and gigabytes.
const MaxTypoWordLen = 64

// EditVariants returns the distinct strings one edit away from w that keep
// its first byte: a byte dropped, two adjacent bytes swapped, or a letter
// or digit of editAlphabet inserted or substituted, valid UTF-8 only; none
// for a word longer than MaxTypoWordLen. Both index backends look typos up
// with them, so that they agree on which indexed words a misspelt query
// word stands for.
func EditVariants(w string) []string {
	if len(w) > MaxTypoWordLen {
		return nil
	}
	seen := map[string]bool{w: true}
	var out []string
	add := func(v string) {
		if !seen[v] && len(v) > 0 && v[0] == w[0] && utf8.ValidString(v) {
			seen[v] = true
			out = append(out, v)
		}
	}
	for i := 1; i <= len(w); i++ {
		if i < len(w) {
			add(w[:i] + w[i+1:])
			if i+1 < len(w) {
				add(w[:i] + string(w[i+1]) + string(w[i]) + w[i+2:])
			}
			for _, c := range []byte(editAlphabet) {
				add(w[:i] + string(c) + w[i+1:])
			}
		}
		for _, c := range []byte(editAlphabet) {
			add(w[:i] + string(c) + w[i:])
		}
	}
	return out
}

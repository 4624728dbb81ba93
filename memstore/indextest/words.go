package indextest

import (
	"math/rand/v2"
	"strings"
)

// MadeUpWords returns words followed by made-up words of two to four
// syllables, drawn with r, until there are n, all distinct: the vocabulary
// of synthetic corpora.
func MadeUpWords(r *rand.Rand, words, syllables []string, n int) []string {
	words = append([]string(nil), words...)
	seen := map[string]bool{}
	for _, w := range words {
		seen[w] = true
	}
	for len(words) < n {
		var sb strings.Builder
		for range 2 + r.IntN(3) {
			sb.WriteString(syllables[r.IntN(len(syllables))])
		}
		if w := sb.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

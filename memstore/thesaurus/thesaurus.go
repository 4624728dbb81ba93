// Package thesaurus is an English dictionary and thesaurus, offline:
// whether WordNet 3.0 knows a word, the word's other spellings, and the
// words that stand for its most frequent senses, from a table generated
// from WordNet (gen.go) and embedded in the binary.
//
// It owns that table and its lookup and nothing else; memstore decides
// what to do with them (memstore.Thesaurus).
//
// WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved.
// The table is used under the WordNet licence, whose full text, with its
// disclaimer, is in LICENSE.WordNet beside this file.
package thesaurus

import (
	_ "embed"
	"strings"

	"github.com/selmem/selmem/memstore"
)

//go:generate go run gen.go -wordnet /usr/share/wordnet

// table is gen.go's output: sorted lines of a lemma, its related lemmas
// and its other spellings, tab-separated. It is searched where it lies,
// so that using it costs no time nor memory up front.
//
//go:embed wordnet.txt
var table string

// WordNet is the memstore.Thesaurus of WordNet's synsets. A word WordNet
// does not list is looked up by the base forms its English inflections
// imply ("clients" as "client", "considers" as "consider"), the first
// listed one. The zero value is ready to use.
type WordNet struct{}

var _ memstore.Thesaurus = WordNet{}

// Spellings reports whether word, or the base form of an inflection of
// it, is a WordNet lemma of one word, and returns the lemma's other
// spellings: the lemmas of its synsets one edit from it ("colour" for
// "color").
func (WordNet) Spellings(word string) ([]string, bool) {
	e, ok := lookup(word)
	return strings.Fields(e.spellings), ok
}

// Related returns the one-word lemmas of the synsets of the first senses,
// of each part of speech, of word or of its base form, that stand for the
// synset (gen.go), or nil.
func (WordNet) Related(word string) []string {
	e, _ := lookup(word)
	return strings.Fields(e.related)
}

// entry is a lemma's line of the table: its related lemmas and other
// spellings, space-separated.
type entry struct{ related, spellings string }

// lookup returns the entry of word, or of its first listed base form, and
// whether either is a lemma.
func lookup(word string) (entry, bool) {
	word = strings.ToLower(word)
	if e, ok := find(word); ok {
		return e, true
	}
	for _, r := range inflections {
		if base, cut := strings.CutSuffix(word, r.suffix); cut && base != "" {
			if e, ok := find(base + r.base); ok {
				return e, true
			}
		}
	}
	return entry{}, false
}

// find returns the entry of lemma by binary search of the table's lines.
func find(lemma string) (entry, bool) {
	lo, hi := 0, len(table) // both at the start of a line (or the end)
	for lo < hi {
		mid := lo + (hi-lo)/2
		start := strings.LastIndexByte(table[:mid], '\n') + 1
		end := start + strings.IndexByte(table[start:], '\n')
		l, rest, _ := strings.Cut(table[start:end], "\t")
		switch {
		case l == lemma:
			related, spellings, _ := strings.Cut(rest, "\t")
			return entry{related, spellings}, true
		case l < lemma:
			lo = end + 1
		default:
			hi = start
		}
	}
	return entry{}, false
}

// inflections undo English inflectional endings, in the order they are
// tried: WordNet's own detachment rules (morphy) for nouns, verbs and
// adjectives, without its part of speech.
var inflections = []struct{ suffix, base string }{
	{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"},
	{"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""},
	{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"},
}

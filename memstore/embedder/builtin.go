package embedder

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/thesaurus"
)

// hashDim is the length of the lexical part of Builtin vectors.
const hashDim = 384

// Feature weights: a whole-word match counts for more than one shared
// character n-gram, so exact words dominate and n-grams supply typo
// tolerance and partial-word matching.
const (
	wordWeight  = 2.0
	ngramWeight = 1.0
)

// Parts of a Builtin vector, chosen with bench/retrieval: the lexical
// part's share of the cosine (the semantic part has the rest); and the
// smooth inverse frequency weighting of the semantic part, sifA/(sifA+p)
// for a word of probability p, which Zipf's law estimates from its GloVe
// frequency rank r as 1/(zipfNorm·r), zipfNorm the harmonic number of
// GloVe's 400,000 words (ln 400,000 + γ).
const (
	lexicalShare = 0.3
	sifA         = 1e-3
	zipfNorm     = 13.5
)

// Builtin is the default embedder: offline, dependency-free and
// deterministic. Its vectors have two parts, each of unit length before
// they are weighed (lexicalShare of the cosine to the first):
//
//   - lexical, hashed words and character n-grams: text is Unicode-
//     normalised (NFKD, diacritics removed), lower-cased and split into
//     words of letters and digits; each word contributes itself and its
//     character 3- and 4-grams with boundary markers ("^re", "ret", ...,
//     "on$", "^ret", ...). The features are hashed with 64-bit FNV-1a
//     into signed buckets of 384 dimensions, weighted by 1+ln(tf) (whole
//     words twice as much as n-grams). Shared n-grams keep a query with a
//     typo ("retension") or a word fragment ("retent") close to the text
//     it was meant for.
//   - semantic, 100 dimensions: the mean of the GloVe vectors
//     (thesaurus.GloVe.Vector) of the text's words that are not stop
//     words, each weighted by its smooth inverse frequency, less its
//     part along the direction every GloVe vector leans to
//     (thesaurus.GloVe.CommonDirection), so that words used in like
//     contexts ("trip", "vacation") bring texts together that share no
//     word, and texts that share nothing but that lean stay apart.
//
// A text without a word GloVe knows has a lexical part alone, of unit
// length. A word of n letters sets at most 2n lexical dimensions, so a
// query of a few words is sparse there, which the embedded index
// exploits by scoring only its non-zero dimensions.
type Builtin struct{}

var _ memstore.Embedder = (*Builtin)(nil)

// NewBuiltin returns the built-in embedder.
func NewBuiltin() *Builtin { return &Builtin{} }

// ID names the feature set and dimension; it changes whenever vectors would.
func (b *Builtin) ID() string { return fmt.Sprintf("builtin-hash-glove-v3-%d", b.Dim()) }

// similarityFloor is the cosine similarity below which a chunk's builtin
// vector is taken to be unrelated to the query's, calibrated with
// bench/retrieval: nonsense queries stay under it, typos of a chunk's words
// and queries that mean what a chunk says in other words reach it.
const similarityFloor = 0.32

// SimilarityFloor returns the calibrated relevance floor of Builtin
// vectors (memstore.SimilarityFloorer).
func (*Builtin) SimilarityFloor() float64 { return similarityFloor }

// Dim returns 484: 384 lexical and 100 semantic dimensions.
func (*Builtin) Dim() int { return hashDim + thesaurus.VectorDim }

// Embed returns one vector per text. An empty text, or one without letters or
// digits, yields the zero vector.
func (b *Builtin) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("builtin embed: %w", err)
		}
		out[i] = b.embed(t)
	}
	return out, nil
}

// feature is one hashed occurrence of a word or n-gram.
type feature struct {
	hash   uint64
	weight float64
}

// embed computes the vector of one text: its lexical part, and its
// semantic part when it has one, each weighed by its share.
func (b *Builtin) embed(text string) []float32 {
	vec := make([]float32, b.Dim())
	if !lexical(text, vec[:hashDim]) {
		return vec
	}
	if semantic(text, vec[hashDim:]) {
		l, s := math.Sqrt(lexicalShare), math.Sqrt(1-lexicalShare)
		for d := range vec {
			if d < hashDim {
				vec[d] *= float32(l)
			} else {
				vec[d] *= float32(s)
			}
		}
	}
	return vec
}

// lexical sets vec to the unit vector of text's hashed words and n-grams
// and reports whether text has any. Features are summed in hash order so
// the floating-point result does not depend on map iteration.
func lexical(text string, vec []float32) bool {
	var feats []feature
	var offs []int // byte offsets of the runes of one word, then its length
	for _, w := range words(text) {
		feats = append(feats, feature{fnv1a('w', w), wordWeight})
		b := "^" + w + "$"
		offs = offs[:0]
		for i := range b {
			offs = append(offs, i)
		}
		offs = append(offs, len(b))
		for i := 0; i+3 < len(offs); i++ {
			feats = append(feats, feature{fnv1a('3', b[offs[i]:offs[i+3]]), ngramWeight})
		}
		for i := 0; i+4 < len(offs); i++ {
			feats = append(feats, feature{fnv1a('4', b[offs[i]:offs[i+4]]), ngramWeight})
		}
	}
	slices.SortFunc(feats, func(a, b feature) int { return cmp.Compare(a.hash, b.hash) })
	acc := make([]float64, len(vec))
	for i := 0; i < len(feats); {
		j := i
		for j < len(feats) && feats[j].hash == feats[i].hash {
			j++
		}
		// Sublinear tf: a feature seen tf times counts 1+ln(tf) times its
		// weight; the sign bit of the hash picks the bucket's sign.
		v := feats[i].weight * (1 + math.Log(float64(j-i)))
		h := feats[i].hash
		if h>>63 == 1 {
			v = -v
		}
		acc[h%uint64(len(vec))] += v
		i = j
	}
	return normalizeInto(vec, acc)
}

// semantic sets vec to the unit vector of the SIF-weighted mean of the
// GloVe vectors of text's words that are not stop words, without its part
// along the vocabulary's common direction, and reports whether it has
// any.
func semantic(text string, vec []float32) bool {
	var acc [thesaurus.VectorDim]float64
	memstore.ContentWords(text, func(word string) {
		v, rank := thesaurus.GloVe{}.Vector(word)
		if rank == 0 {
			return
		}
		w := sifA / (sifA + 1/(zipfNorm*float64(rank)))
		for d, x := range v {
			acc[d] += w * float64(x)
		}
	})
	u := thesaurus.GloVe{}.CommonDirection()
	var along float64
	for d := range acc {
		along += acc[d] * u[d]
	}
	for d := range acc {
		acc[d] -= along * u[d]
	}
	return normalizeInto(vec, acc[:])
}

// words splits text into memstore.Words.
func words(text string) []string {
	var out []string
	memstore.Words(text, func(w string) { out = append(out, w) })
	return out
}

// 64-bit FNV-1a parameters.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnv1a hashes a kind byte followed by s with 64-bit FNV-1a.
func fnv1a(kind byte, s string) uint64 {
	h := uint64(fnvOffset)
	h ^= uint64(kind)
	h *= fnvPrime
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

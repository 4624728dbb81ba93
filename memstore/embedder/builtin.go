package embedder

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/selmem/selmem/memstore"
)

// builtinDim is the length of Builtin vectors.
const builtinDim = 384

// Feature weights: a whole-word match counts for more than one shared
// character n-gram, so exact words dominate and n-grams supply typo
// tolerance and partial-word matching.
const (
	wordWeight  = 2.0
	ngramWeight = 1.0
)

// Builtin is the default embedder: offline, dependency-free and
// deterministic. It is lexical, not a language model: it knows nothing of
// synonyms or meaning. Text is Unicode-normalised (NFKD, diacritics removed),
// lower-cased and split into words of letters and digits; each word
// contributes itself and its character 3- and 4-grams with boundary markers
// ("^re", "ret", ..., "on$", "^ret", ...). The features are hashed with
// 64-bit FNV-1a into signed buckets of a 384-dim vector, weighted by
// 1+ln(tf) (whole words twice as much as n-grams), and the vector is
// L2-normalised.
//
// Shared n-grams keep a query with a typo ("retension") or a word fragment
// ("retent") close to the text it was meant for. A word of n letters sets at
// most 2n dimensions, so a query of a few words is sparse, which the embedded
// index exploits by scoring only those dimensions.
type Builtin struct{}

var _ memstore.Embedder = (*Builtin)(nil)

// NewBuiltin returns the built-in hashing embedder.
func NewBuiltin() *Builtin { return &Builtin{} }

// ID names the feature set and dimension; it changes whenever vectors would.
func (*Builtin) ID() string { return fmt.Sprintf("builtin-hash-v1-%d", builtinDim) }

// similarityFloor is the cosine similarity below which a chunk's builtin
// vector is taken to be unrelated to the query's, calibrated with
// bench/retrieval: nonsense queries stay under it, typos of a chunk's words
// reach it.
const similarityFloor = 0.2

// SimilarityFloor returns the calibrated relevance floor of Builtin
// vectors (memstore.SimilarityFloorer).
func (*Builtin) SimilarityFloor() float64 { return similarityFloor }

// Dim returns 384.
func (*Builtin) Dim() int { return builtinDim }

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

// embed computes the vector of one text. Features are summed in hash order
// so the floating-point result does not depend on map iteration.
func (*Builtin) embed(text string) []float32 {
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
	acc := make([]float64, builtinDim)
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
		acc[h%builtinDim] += v
		i = j
	}
	var norm2 float64
	for _, x := range acc {
		norm2 += x * x
	}
	vec := make([]float32, builtinDim)
	if norm2 == 0 {
		return vec
	}
	inv := 1 / math.Sqrt(norm2)
	for d, x := range acc {
		vec[d] = float32(x * inv)
	}
	return vec
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

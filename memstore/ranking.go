package memstore

import "strings"

// Ranking holds the parameters of the hybrid ranking every index backend
// computes, so that backends given the same parameters return the same
// hits.
//
// The full-text score of a chunk is BM25F over its terms (Terms): each
// field's term frequency is normalised by the field's length against the
// index's average, weighted (heading HeadingWeight, workspace and file name
// PathWeight, text 1), summed, and saturated with K1; the inverse document
// frequency comes from the index's own statistics. A chunk of one of
// NeighbourTypes also takes Neighbour times the best full-text score of
// the chunks just before and after it in its file, so that an answer that
// shares few words with the question ranks beside the turn that asked it.
//
// The two rankings, full text and vector similarity, are fused by weighted
// reciprocal rank fusion: 1/(RRFK + text rank) + w/(RRFK + vector rank),
// where w is VectorWeight when the index knows every term of the query and
// UnknownVectorWeight when it does not. The vector ranking covers every
// chunk the filters pass, or, with Rerank and a query the index knows,
// only the full-text ranking's.
type Ranking struct {
	K1            float64 // BM25 term-frequency saturation
	B             float64 // BM25 length normalisation, 0..1
	HeadingWeight float64 // weight of the heading field (text is 1)
	PathWeight    float64 // weight of the workspace and file name field
	Neighbour     float64 // share of the best adjacent chunk's full-text score added to a chunk's
	// NeighbourTypes are the item types (Chunk.Type) whose chunks take the
	// neighbour share; empty: every type.
	NeighbourTypes []string
	VectorWeight   float64 // weight of the vector ranking in the fusion (full text is 1)
	// Rerank restricts the vector ranking of a query the index knows every
	// term of to the chunks of its full-text ranking: the vectors reorder
	// what the words found. Queries with an unknown term are ranked by
	// vector among all chunks.
	Rerank bool
	// UnknownVectorWeight replaces VectorWeight for queries holding a term
	// no chunk contains.
	UnknownVectorWeight float64
	// TypoWeight weighs the terms standing in for a query word no chunk
	// holds: those of the indexed words it begins or is one edit from
	// (EditVariants), the three most frequent; 0 turns typo tolerance off.
	TypoWeight float64
	// RelatedWeight weighs the terms of the words of like meaning standing
	// in for a query word no chunk holds (Query.Related); 0 turns them
	// off.
	RelatedWeight float64
	// AssociatedWeight weighs the terms of the words used in like
	// contexts standing in for a query word no chunk holds
	// (Query.Associated); 0 turns them off.
	AssociatedWeight float64
	// StandInMajority: a query none of whose words the index holds matches
	// through stand-ins (typo variants, related and associated words) only
	// when more than half its words have one. One word guessed of two or
	// three is no sign that the memory holds what was asked.
	StandInMajority bool
	// GuessShare judges the full-text hits of a query none of whose words
	// the index holds: a hit holding stand-ins for no more than half of
	// the query's words is a guess, kept only when its vector similarity
	// reaches GuessShare times the relevance floor (Query.MinSimilarity),
	// as the vector ranking found it. 0 keeps every full-text hit.
	GuessShare float64
}

// DefaultRanking returns the ranking selmem ships with the built-in
// embedder, chosen with bench/retrieval's ablations: a lower K1 and B than
// the textbook 1.2 and 0.75 suit short sections; half the adjacent
// section's score lifts a conversation's answer beside its question, in
// notes only: a note's section (a conversation's turn, a dated decision)
// goes on from the one before, while each section of task rules, output
// constraints, schemas or tools stands alone; and
// the built-in vectors, whose semantic part tells which of the sections
// sharing the query's words mean what it asks, reorder full text's
// candidates at half its weight, and search every chunk, at a quarter,
// for a query with a word the memory lacks (typos, word fragments and
// words used alike). Searching every chunk for every query ranks the
// workspace set better still, but Postgres's approximate vector index
// could then not give the embedded index's answers. A full-text hit of a
// query the index holds none of the words of, holding stand-ins for half
// its words or fewer, needs three quarters of the relevance floor: such
// guesses of nonsense queries stayed below 0.6 of it, the relevant hits of
// the dev sets' labelled queries above 0.85.
func DefaultRanking() Ranking {
	return Ranking{K1: 0.9, B: 0.5, HeadingWeight: 2, PathWeight: 1, Neighbour: 0.5, NeighbourTypes: []string{"note"}, VectorWeight: 0.5, Rerank: true, UnknownVectorWeight: 0.25, TypoWeight: 0.7, RelatedWeight: 0.7, AssociatedWeight: 0.7, StandInMajority: true, GuessShare: 0.75}
}

// MaxGuessWords is the most words a query may have for its full-text hits
// to be judged as guesses (Ranking.GuessShare): the index backends track
// the words a hit holds stand-ins for in 64 bits.
const MaxGuessWords = 64

// GuessCover returns how many words of a query of n words, none of which
// the index holds, a full-text hit must hold stand-ins for not to be a
// guess (Ranking.GuessShare): more than half of them. It returns 0 (no
// hit is a guess) when GuessShare is 0 or n exceeds MaxGuessWords.
func (r *Ranking) GuessCover(n int) int {
	if r.GuessShare <= 0 || n > MaxGuessWords {
		return 0
	}
	return n/2 + 1
}

// ModelRanking is DefaultRanking for a semantic embedding model (the
// OpenAI-compatible embedder): its vectors know what the words do not, so
// the vector ranking always counts as much as full text.
func ModelRanking() Ranking {
	r := DefaultRanking()
	r.VectorWeight, r.UnknownVectorWeight, r.Rerank = 1, 1, false
	return r
}

// Fields of a chunk that the full-text ranking weighs separately.
const (
	FieldHeading = iota // the heading path
	FieldPath           // workspace and file: Context without the heading
	FieldText           // the section's text
	NumFields
)

// ChunkFields splits a chunk into the texts of its ranking fields.
func ChunkFields(heading, context, text string) [NumFields]string {
	path := context
	if heading != "" {
		path = strings.TrimSuffix(context, headingSep+heading)
	}
	return [NumFields]string{heading, path, text}
}

// FieldWeights returns the weights of the fields, by Field constant.
func (r *Ranking) FieldWeights() [NumFields]float64 {
	return [NumFields]float64{r.HeadingWeight, r.PathWeight, 1}
}

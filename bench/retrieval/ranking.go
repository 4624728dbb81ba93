package main

import (
	"slices"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/thesaurus"
)

// variant is a ranking to evaluate: a change to the default ranking.
type variant struct {
	name   string
	change func(*memstore.Ranking)
	floor  float64 // memstore.Options.MinSimilarity; 0 for the embedder's
	// noThesaurus leaves memstore.Options.Thesaurus unset; noSpelled
	// keeps its related words but tells the index of no word that is
	// spelled right; noRelated keeps the dictionary without related words.
	noThesaurus, noSpelled, noRelated bool
	// noAssociations leaves memstore.Options.Associations unset.
	noAssociations bool
}

func (v variant) thesaurus() memstore.Thesaurus {
	switch {
	case v.noThesaurus:
		return nil
	case v.noSpelled:
		return relatedOnly{}
	case v.noRelated:
		return dictionaryOnly{}
	}
	return thesaurus.WordNet{}
}

// associations returns the memstore.Options.Associations of v.
func (v variant) associations() memstore.Associations {
	if v.noAssociations {
		return nil
	}
	return thesaurus.GloVe{}
}

// relatedOnly is WordNet's related words without its dictionary.
type relatedOnly struct{ thesaurus.WordNet }

func (relatedOnly) Spellings(string) ([]string, bool) { return nil, false }

// dictionaryOnly is WordNet's dictionary without its related words.
type dictionaryOnly struct{ thesaurus.WordNet }

func (dictionaryOnly) Related(string) []string { return nil }

// ranking returns v's ranking.
func (v variant) ranking() *memstore.Ranking {
	r := memstore.DefaultRanking()
	v.change(&r)
	return &r
}

// variants are the rankings -variants can name: "default" is what selmem
// ships, each other one changes one thing of it, for the ablation table.
var variants = []variant{
	{name: "default", change: func(*memstore.Ranking) {}},
	{name: "no-neighbour", change: func(r *memstore.Ranking) { r.Neighbour = 0 }},
	{name: "neighbour-every-type", change: func(r *memstore.Ranking) { r.NeighbourTypes = nil }},
	{name: "neighbour-0.3", change: func(r *memstore.Ranking) { r.Neighbour = 0.3 }},
	{name: "neighbour-0.7", change: func(r *memstore.Ranking) { r.Neighbour = 0.7 }},
	{name: "heading-1", change: func(r *memstore.Ranking) { r.HeadingWeight = 1 }},
	{name: "heading-3", change: func(r *memstore.Ranking) { r.HeadingWeight = 3 }},
	{name: "no-path-field", change: func(r *memstore.Ranking) { r.PathWeight = 0 }},
	{name: "no-vector", change: func(r *memstore.Ranking) { r.VectorWeight, r.UnknownVectorWeight = 0, 0 }},
	{name: "no-rerank", change: func(r *memstore.Ranking) { r.VectorWeight = 0 }},
	{name: "rerank-0.25", change: func(r *memstore.Ranking) { r.VectorWeight = 0.25 }},
	{name: "rerank-1", change: func(r *memstore.Ranking) { r.VectorWeight = 1 }},
	{name: "vector-0.5 over every chunk", change: func(r *memstore.Ranking) { r.Rerank = false }},
	{name: "unknown-vector-1", change: func(r *memstore.Ranking) { r.UnknownVectorWeight = 1 }},
	{name: "unknown-vector-0.5", change: func(r *memstore.Ranking) { r.UnknownVectorWeight = 0.5 }},
	{name: "no-thesaurus", change: func(*memstore.Ranking) {}, noThesaurus: true},
	{name: "no-spelled-words", change: func(*memstore.Ranking) {}, noSpelled: true},
	{name: "no-related-words", change: func(*memstore.Ranking) {}, noRelated: true},
	{name: "no-associated-words", change: func(*memstore.Ranking) {}, noAssociations: true},
	{name: "associated-weight-0.4", change: func(r *memstore.Ranking) { r.AssociatedWeight = 0.4 }},
	{name: "associated-weight-1", change: func(r *memstore.Ranking) { r.AssociatedWeight = 1 }},
	{name: "related-weight-0.4", change: func(r *memstore.Ranking) { r.RelatedWeight = 0.4 }},
	{name: "related-weight-1", change: func(r *memstore.Ranking) { r.RelatedWeight = 1 }},
	{name: "stand-ins-any", change: func(r *memstore.Ranking) { r.StandInMajority = false }},
	{name: "guesses-kept", change: func(r *memstore.Ranking) { r.GuessShare = 0 }},
	{name: "guess-share-0.5", change: func(r *memstore.Ranking) { r.GuessShare = 0.5 }},
	{name: "guess-share-1", change: func(r *memstore.Ranking) { r.GuessShare = 1 }},
	{name: "no-typo-terms", change: func(r *memstore.Ranking) { r.TypoWeight = 0 }},
	{name: "typo-weight-1", change: func(r *memstore.Ranking) { r.TypoWeight = 1 }},
	{name: "vector-1 always (equal RRF)", change: func(r *memstore.Ranking) {
		r.VectorWeight, r.UnknownVectorWeight, r.Rerank = 1, 1, false
	}},
	{name: "b-0.75", change: func(r *memstore.Ranking) { r.B = 0.75 }},
	{name: "b-0.3", change: func(r *memstore.Ranking) { r.B = 0.3 }},
	{name: "k1-1.2", change: func(r *memstore.Ranking) { r.K1 = 1.2 }},
	{name: "k1-0.6", change: func(r *memstore.Ranking) { r.K1 = 0.6 }},
	{name: "previous-k1.2-b0.75-n0.3", change: func(r *memstore.Ranking) { r.K1, r.B, r.Neighbour = 1.2, 0.75, 0.3 }},
	{name: noFloor, change: func(r *memstore.Ranking) { r.GuessShare = 0 }, floor: -2},
	{name: "floor-0.2", change: func(*memstore.Ranking) {}, floor: 0.2},
	{name: "floor-0.25", change: func(*memstore.Ranking) {}, floor: 0.25},
	{name: "floor-0.3", change: func(*memstore.Ranking) {}, floor: 0.3},
	{name: "floor-0.4", change: func(*memstore.Ranking) {}, floor: 0.4},
	{name: "floor-0.45", change: func(*memstore.Ranking) {}, floor: 0.45},
	{name: "plain BM25 (all off)", change: func(r *memstore.Ranking) {
		r.Neighbour, r.HeadingWeight, r.PathWeight, r.VectorWeight, r.UnknownVectorWeight = 0, 1, 0, 0, 0
	}},
}

func variantByName(name string) (variant, bool) {
	i := slices.IndexFunc(variants, func(v variant) bool { return v.name == name })
	if i < 0 {
		return variant{}, false
	}
	return variants[i], true
}

func variantNames() []string {
	var out []string
	for _, v := range variants {
		out = append(out, v.name)
	}
	return out
}

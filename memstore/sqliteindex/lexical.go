package sqliteindex

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/selmem/selmem/memstore"
)

// nFields is the number of ranking fields of a chunk.
const nFields = memstore.NumFields

// posting is one chunk's occurrences of a term, per field (saturated at
// 255).
type posting struct {
	row int32
	tf  [nFields]uint8
}

// lexicon is the in-memory inverted index of the full-text ranking: for
// every term (memstore.Terms) the rows holding it, and per row its field
// lengths and terms, so that removing a row updates the statistics BM25
// needs. It lives in vecStore and is guarded by Index.mu like it.
type lexicon struct {
	ids    map[string]int32
	terms  []string
	words  map[byte][]wordTerm // the indexed words by first byte, for prefix matching
	wordOf map[string]int32    // the term of every indexed word
	post   [][]posting         // by term id, rows ascending
	df     []int32             // live rows holding the term
	fwd    [][]int32           // by row: its distinct term ids
	rows   []lexRow            // by row
	sumLen [nFields]float64    // over live rows
	live   int
}

// lexRow is what scoring reads of a row, together in memory: its field
// lengths, and whether it was removed.
type lexRow struct {
	lens [nFields]uint16
	gone bool
}

// wordTerm is an indexed word and its term.
type wordTerm struct {
	word string
	term int32
}

func newLexicon(capacity int) *lexicon {
	return &lexicon{ids: make(map[string]int32), words: make(map[byte][]wordTerm), wordOf: make(map[string]int32), fwd: make([][]int32, 0, capacity), rows: make([]lexRow, 0, capacity)}
}

// fieldsOf splits a chunk into the texts of its fields.
func fieldsOf(heading, context, text string) [nFields]string {
	return memstore.ChunkFields(heading, context, text)
}

// add indexes row, which must be the next row, with the texts of its
// fields.
func (l *lexicon) add(fields [nFields]string) {
	row := int32(len(l.fwd))
	tfs := map[int32]*[nFields]uint8{}
	var order []int32
	var lens [nFields]uint16
	for f, text := range fields {
		n := 0
		memstore.TermWords(text, func(word, term string) {
			n++
			id, ok := l.ids[term]
			if !ok {
				id = int32(len(l.terms))
				l.ids[term] = id
				l.terms = append(l.terms, term)
				l.post = append(l.post, nil)
				l.df = append(l.df, 0)
			}
			if _, ok := l.wordOf[word]; !ok {
				l.wordOf[word] = id
				l.words[word[0]] = append(l.words[word[0]], wordTerm{word, id})
			}
			tf := tfs[id]
			if tf == nil {
				tf = new([nFields]uint8)
				tfs[id] = tf
				order = append(order, id)
			}
			if tf[f] < math.MaxUint8 {
				tf[f]++
			}
		})
		lens[f] = uint16(min(n, math.MaxUint16))
		l.sumLen[f] += float64(lens[f])
	}
	for _, id := range order {
		l.post[id] = append(l.post[id], posting{row: row, tf: *tfs[id]})
		l.df[id]++
	}
	l.fwd = append(l.fwd, order)
	l.rows = append(l.rows, lexRow{lens: lens})
	l.live++
}

// remove takes row out of the statistics; its postings stay until compact.
func (l *lexicon) remove(row int) {
	for _, id := range l.fwd[row] {
		l.df[id]--
	}
	for f := range nFields {
		l.sumLen[f] -= float64(l.rows[row].lens[f])
	}
	l.fwd[row] = nil
	l.rows[row].gone = true
	l.live--
}

// compact keeps the rows of keep (ascending), renumbered from 0.
func (l *lexicon) compact(keep []int) {
	newRow := make(map[int32]int32, len(keep))
	for k, r := range keep {
		newRow[int32(r)] = int32(k)
		l.fwd[k], l.rows[k] = l.fwd[r], l.rows[r]
	}
	l.fwd, l.rows = l.fwd[:len(keep)], l.rows[:len(keep)]
	for id, ps := range l.post {
		out := ps[:0]
		for _, p := range ps {
			if r, ok := newRow[p.row]; ok {
				p.row = r
				out = append(out, p)
			}
		}
		l.post[id] = out
	}
}

// queryTerm is a term of a query with its weight: 1 for the query's own
// terms, the typo weight for those standing in for a word the index lacks.
type queryTerm struct {
	id     int32
	weight float64
	// related: the term stands in for a word the index lacks through the
	// thesaurus (memstore.Query.Related) or associations
	// (memstore.Query.Associated), not through its spelling.
	related bool
	// associated: the term stands in through associations alone.
	associated bool
	// words has bit i set when the term stands in for the i-th of the
	// query's words the index lacks (of the first
	// memstore.MaxGuessWords); 0 for the query's own terms.
	words uint64
}

// Fuzzy matching of query words the index lacks: a word of at least
// fuzzyMinLen bytes stands for the indexed words that it or its stem
// begins (memstore.TypoPrefixes), the indexed words one edit away that
// keep its first letter (memstore.EditVariants) and the indexed terms one
// edit away from its stem (memstore.TypoStemVariants); a word spelled
// right (memstore.Query.Spelled) stands, of those one edit away, only for
// its other spellings. The fuzzyMax most frequent of their terms count,
// each at memstore.Ranking.TypoWeight.
const (
	fuzzyMinLen = 4
	fuzzyMax    = 3
)

// queryTerms returns the distinct terms of q's text that rows readable
// under the query's access filter hold, each with its weight in r, and
// the number of the text's words no such row holds. Typo tolerance, words
// of like meaning (related) and associated words apply only to the
// latter: words matching exactly are never expanded. A term standing in
// for several words has the highest of their weights, and counts as
// related (or associated) only when it stands in for no word but through
// related or associated words (associated words alone). Associated terms
// are kept only beside a term that is not related. With
// memstore.Ranking.StandInMajority, a query none of whose words a row
// holds has no terms unless more than half its words keep a stand-in.
// readable is nil when every row is readable. A word only unreadable rows
// hold counts as a word the index lacks, so that the query runs as if
// those rows did not exist.
func (l *lexicon) queryTerms(q *memstore.Query, r *memstore.Ranking, readable func(row int32) bool) (terms []queryTerm, unknown int) {
	at := map[int32]int{}
	add := func(t queryTerm) {
		k, ok := at[t.id]
		if !ok {
			at[t.id] = len(terms)
			terms = append(terms, t)
			return
		}
		terms[k].weight = max(terms[k].weight, t.weight)
		terms[k].words |= t.words
		terms[k].related = terms[k].related && t.related
		terms[k].associated = terms[k].associated && t.associated
	}
	var missing []string
	known := false
	memstore.TermWords(q.Text, func(word, term string) {
		if id, ok := l.ids[term]; ok && l.held(id, readable) {
			add(queryTerm{id: id, weight: 1})
			known = true
			return
		}
		if !slices.Contains(missing, word) {
			missing = append(missing, word)
		}
	})
	// Of the missing words, how many have a stand-in, and how many have
	// associated ones alone.
	var covered, associatedOnly int
	var bit uint64
	standIn := func(terms []string, weight float64, associated bool) bool {
		if weight <= 0 {
			return false
		}
		held := false
		for _, term := range terms {
			if id, ok := l.ids[term]; ok && l.held(id, readable) {
				add(queryTerm{id: id, weight: weight, related: true, associated: associated, words: bit})
				held = true
			}
		}
		return held
	}
	for j, w := range missing {
		bit = 0
		if j < memstore.MaxGuessWords {
			bit = 1 << j
		}
		found := false
		if r.TypoWeight > 0 {
			others, ok := q.Spelled[w]
			for _, id := range l.fuzzy(w, others, ok, readable) {
				add(queryTerm{id: id, weight: r.TypoWeight, words: bit})
				found = true
			}
		}
		found = standIn(q.Related[w], r.RelatedWeight, false) || found
		associated := standIn(q.Associated[w], r.AssociatedWeight, true)
		switch {
		case found:
			covered++
		case associated:
			associatedOnly++
		}
	}
	if !slices.ContainsFunc(terms, func(t queryTerm) bool { return !t.related }) {
		terms = slices.DeleteFunc(terms, func(t queryTerm) bool { return t.associated })
	} else {
		covered += associatedOnly
	}
	if !known && r.StandInMajority && 2*covered <= len(missing) {
		terms = nil
	}
	return terms, len(missing)
}

// guess returns a predicate telling the rows that hold terms standing in
// for fewer than cover of the query's words (queryTerm.words), or one
// telling none when cover is 0.
func (l *lexicon) guess(terms []queryTerm, cover int) func(row int32) bool {
	if cover == 0 {
		return func(int32) bool { return false }
	}
	words := make(map[int32]uint64, len(terms))
	for _, t := range terms {
		words[t.id] = t.words
	}
	return func(row int32) bool {
		var held uint64
		for _, id := range l.fwd[row] {
			held |= words[id]
		}
		return bits.OnesCount64(held) < cover
	}
}

// held reports whether a live row readable holds term id (readable nil:
// any live row).
func (l *lexicon) held(id int32, readable func(row int32) bool) bool {
	if l.df[id] <= 0 {
		return false
	}
	if readable == nil {
		return true
	}
	for _, p := range l.post[id] {
		if !l.rows[p.row].gone && readable(p.row) {
			return true
		}
	}
	return false
}

// fuzzy returns the terms of the indexed words near w that a readable
// row holds, most frequent first (ties by term), at most fuzzyMax. A word
// spelled right (memstore.Query.Spelled) stands for the words it begins
// and, of those one edit away, only for its other spellings, whose terms
// are others.
func (l *lexicon) fuzzy(w string, others []string, spelled bool, readable func(row int32) bool) []int32 {
	if len(w) < fuzzyMinLen {
		return nil
	}
	var ids []int32
	add := func(id int32) {
		if !slices.Contains(ids, id) && l.held(id, readable) {
			ids = append(ids, id)
		}
	}
	prefixes := memstore.TypoPrefixes(w, fuzzyMinLen)
	for _, wt := range l.words[w[0]] {
		for _, p := range prefixes {
			if strings.HasPrefix(wt.word, p) {
				add(wt.term)
				break
			}
		}
	}
	for _, v := range memstore.EditVariants(w) {
		if id, ok := l.wordOf[v]; ok && (!spelled || slices.Contains(others, l.terms[id])) {
			add(id)
		}
	}
	if !spelled {
		for _, t := range memstore.TypoStemVariants(w) {
			if id, ok := l.ids[t]; ok {
				add(id)
			}
		}
	}
	slices.SortFunc(ids, func(a, b int32) int {
		return cmp.Or(cmp.Compare(l.df[b], l.df[a]), strings.Compare(l.terms[a], l.terms[b]))
	})
	return ids[:min(len(ids), fuzzyMax)]
}

// idf is the BM25 inverse document frequency of term id.
func (l *lexicon) idf(id int32) float64 {
	n, df := float64(l.live), float64(l.df[id])
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// score adds the BM25F score of every live row holding term id that
// readable accepts (nil: every row), times weight, to scores, and appends
// rows scored for the first time to touched.
func (l *lexicon) score(r *memstore.Ranking, id int32, weight float64, readable func(row int32) bool, scores []float32, touched []int32) []int32 {
	idf := l.idf(id) * weight
	var norm [nFields]float64 // field weight / average length
	for f := range nFields {
		avg := l.sumLen[f] / float64(max(l.live, 1))
		if avg == 0 {
			avg = 1
		}
		norm[f] = 1 / avg
	}
	w := r.FieldWeights()
	for _, p := range l.post[id] {
		row := &l.rows[p.row]
		if row.gone || readable != nil && !readable(p.row) {
			continue // removed, or not the principal's to read
		}
		lens := &row.lens
		var tf float64
		for f := range nFields {
			if p.tf[f] > 0 {
				tf += w[f] * float64(p.tf[f]) / (1 - r.B + r.B*float64(lens[f])*norm[f])
			}
		}
		if tf == 0 {
			continue // only in fields weighted 0
		}
		if scores[p.row] == 0 {
			touched = append(touched, p.row)
		}
		scores[p.row] += float32(idf * tf / (r.K1 + tf))
	}
	return touched
}

package sqliteindex

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/selmem/selmem/memstore"
)

// Search ranks the chunks passing q's filters by full text (BM25F over the
// in-memory lexicon, see memstore.Ranking) and by similarity to q.Vector,
// and fuses the two rankings with weighted reciprocal rank fusion. A chunk
// full text does not find is a hit only when its similarity reaches
// q.MinSimilarity, the relevance floor. Ties are broken by path, then seq.
func (i *Index) Search(ctx context.Context, q memstore.Query) ([]memstore.Hit, error) {
	return i.search(ctx, q, (*vecStore).textSearch, (*vecStore).search)
}

// textRanker and vectorRanker compute the two rankings of a search over
// the in-memory rows; tests pass reference implementations.
type (
	textRanker   func(s *vecStore, r *memstore.Ranking, f *vecFilter, readable func(row int32) bool, terms []queryTerm, k, cover int) []ranked
	vectorRanker func(s *vecStore, f *vecFilter, vec []float32, k int) []ranked
)

// search is Search with the given rankers.
func (i *Index) search(ctx context.Context, q memstore.Query, rankText textRanker, rankVector vectorRanker) ([]memstore.Hit, error) {
	if q.Limit <= 0 {
		q.Limit = 10
	}
	if q.Candidates <= 0 {
		q.Candidates = max(50, 4*q.Limit)
	}
	if q.Now.IsZero() {
		q.Now = time.Now()
	}
	vec := q.Vector
	if isZero(vec) {
		vec = nil
	}
	if strings.TrimSpace(q.Text) == "" && vec == nil {
		return nil, nil
	}

	i.mu.RLock()
	defer i.mu.RUnlock()
	// Both rankings filter on the in-memory rows, loaded by the first
	// search and again whenever another process has written the file.
	gen, err := i.generation(ctx)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if i.vecs == nil || gen != i.gen {
		if err := i.loadVectors(ctx, gen); err != nil {
			return nil, err
		}
	}
	if vec != nil && len(vec) != i.dim {
		return nil, fmt.Errorf("search: query vector has %d dimensions, the index %d: %w", len(vec), i.dim, memstore.ErrInvalid)
	}
	f, ok := i.vecs.filter(&q)
	if !ok {
		return nil, nil
	}
	readable := i.vecs.readable(&f)
	terms, unknown := i.vecs.lex.queryTerms(&q, &i.rank, readable)
	known := unknown == 0 && len(terms) > 0
	// A query with no word of its own in the index matches by stand-ins
	// alone: a hit holding too few of them is a guess.
	cover := 0
	if !slices.ContainsFunc(terms, func(t queryTerm) bool { return t.words == 0 }) {
		cover = i.rank.GuessCover(unknown)
	}
	textRanked := rankText(i.vecs, &i.rank, &f, readable, terms, q.Candidates, cover)
	var vecRanked []ranked
	vw := i.rank.VectorWeight
	if !known {
		vw = i.rank.UnknownVectorWeight
	}
	switch {
	case vec == nil || vw == 0:
	case known && i.rank.Rerank:
		vecRanked = i.vecs.searchAmong(&f, vec, textRanked, q.Candidates)
	default:
		vecRanked = rankVector(i.vecs, &f, vec, q.Candidates)
	}
	fused := fuse(textRanked, vecRanked, vw, floors{q.MinSimilarity, i.rank.GuessShare * q.MinSimilarity}, q.Limit)
	return i.fetch(ctx, fused)
}

// loadVectors loads the in-memory rows and vectors unless they mirror
// generation gen or a later one. It is called with i.mu read-locked and
// returns with it read-locked, but releases it meanwhile.
func (i *Index) loadVectors(ctx context.Context, gen int64) error {
	i.mu.RUnlock()
	defer i.mu.RLock()
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.vecs != nil && i.gen >= gen {
		return nil
	}
	// Writers of this process wait for i.mu; another process's write
	// between the two readings of the generation makes the load start
	// over.
	for attempt := 1; ; attempt++ {
		start := time.Now()
		var dim int
		err := i.db.QueryRowContext(ctx, "SELECT n, coalesce((SELECT dim FROM state WHERE id = 1), 0) FROM generation WHERE id = 1").
			Scan(&gen, &dim)
		if err != nil {
			return fmt.Errorf("search: read the index generation: %w", classify(err))
		}
		vs, err := loadVecStore(ctx, i.db, dim)
		if err != nil {
			return fmt.Errorf("search: %w", err)
		}
		after, err := i.generation(ctx)
		if err != nil {
			return fmt.Errorf("search: %w", err)
		}
		if after == gen {
			i.vecs, i.gen, i.dim = vs, gen, dim
			i.log.Debug("loaded vectors", logKeyRows, len(vs.rows), logKeyDuration, time.Since(start))
			return nil
		}
		if attempt == maxLoadAttempts {
			return fmt.Errorf("search: the index changed during each of %d loads; retry", attempt)
		}
	}
}

// maxLoadAttempts bounds the loads of the in-memory rows a search tries
// while other processes keep writing.
const maxLoadAttempts = 5

func isZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// readable returns the access filter of f as a predicate on rows, nil
// when it lets every row through.
func (s *vecStore) readable(f *vecFilter) func(row int32) bool {
	if f.allZones {
		return nil
	}
	return func(row int32) bool { return f.readable(&s.rows[row]) }
}

// textSearch returns the best k rows passing f by full-text score (BM25F
// plus the neighbour share, memstore.Ranking), best first. Only rows
// readable accepts are scored; neighbours share a file, so a readable
// row's neighbours are readable. With cover > 0, a row holding terms
// standing in for fewer than cover of the query's words is a guess
// (memstore.Ranking.GuessShare).
func (s *vecStore) textSearch(r *memstore.Ranking, f *vecFilter, readable func(row int32) bool, terms []queryTerm, k, cover int) []ranked {
	if len(terms) == 0 || len(s.rows) == 0 {
		return nil
	}
	sc := s.scoreTerms(r, readable, terms)
	defer s.release(sc)
	scores := sc.scores
	guess := s.lex.guess(terms, cover)
	h := make(topHeap, 0, k)
	shares := s.sharesNeighbour(r)
	for _, row := range sc.touched {
		score := float64(scores[row])
		if shares(row) {
			// A row's neighbours are the previous and next chunks of its
			// file, stored just before and after it.
			adj := s.adj[row]
			var b float32
			if adj&adjPrev != 0 {
				b = max(b, scores[row-1])
			}
			if adj&adjNext != 0 {
				b = max(b, scores[row+1])
			}
			score += r.Neighbour * float64(b)
		}
		if len(h) == k && score < h[0].score {
			continue
		}
		if rw := &s.rows[row]; f.match(rw) {
			h.offer(ranked{id: rw.id, path: rw.path, seq: rw.seq, score: score, guess: guess(row)}, k)
		}
	}
	h.sort()
	return h
}

// sharesNeighbour returns a predicate telling the rows that take the
// neighbour share: none without one, else those of r.NeighbourTypes, or
// every row when it is empty.
func (s *vecStore) sharesNeighbour(r *memstore.Ranking) func(row int32) bool {
	switch {
	case r.Neighbour == 0:
		return func(int32) bool { return false }
	case len(r.NeighbourTypes) == 0:
		return func(int32) bool { return true }
	}
	var types []int32
	for _, t := range r.NeighbourTypes {
		if n, ok := s.names[t]; ok {
			types = append(types, n)
		}
	}
	return func(row int32) bool { return slices.Contains(types, s.rows[row].ty) }
}

// scoreTerms returns scratch buffers holding every row's BM25F score for
// terms, the rows scored listed in touched; release them.
func (s *vecStore) scoreTerms(r *memstore.Ranking, readable func(row int32) bool, terms []queryTerm) *scratch {
	sc := s.scratch(len(s.rows))
	for _, t := range terms {
		sc.touched = s.lex.score(r, t.id, t.weight, readable, sc.scores, sc.touched)
	}
	return sc
}

// fused is a hit with the row id to fetch its chunk by.
type fused struct {
	id    int64
	hit   memstore.Hit
	sim   float64 // vector similarity, when in the vector ranking
	guess bool    // a full-text guess (ranked.guess)
}

// floors are the vector similarities a hit needs: vector-only hits
// vector (the relevance floor), full-text guesses guess.
type floors struct{ vector, guess float64 }

// fuse combines the rankings with reciprocal rank fusion, the vector
// ranking weighted by vectorWeight, and returns the best limit, highest
// score first, ties broken by path then seq. Of the hits only the vector
// ranking holds, those with a similarity of at least fl.vector remain
// (the relevance floor); of the full-text guesses, those the vector
// ranking holds with a similarity of at least fl.guess.
func fuse(text, vec []ranked, vectorWeight float64, fl floors, limit int) []fused {
	byID := make(map[int64]int, len(text)+len(vec))
	var out []fused
	add := func(rs []ranked, weight float64, setRank func(f *fused, rank int, x *ranked)) {
		for k, x := range rs {
			j, ok := byID[x.id]
			if !ok {
				j = len(out)
				byID[x.id] = j
				out = append(out, fused{id: x.id, hit: memstore.Hit{Chunk: memstore.Chunk{Path: x.path, Seq: x.seq}}})
			}
			setRank(&out[j], k+1, &x)
			out[j].hit.Score += weight / float64(memstore.RRFK+k+1)
		}
	}
	add(text, 1, func(f *fused, rank int, x *ranked) { f.hit.TextRank, f.guess = rank, x.guess })
	if vectorWeight > 0 {
		add(vec, vectorWeight, func(f *fused, rank int, x *ranked) { f.hit.VectorRank, f.sim = rank, x.score })
	}
	out = slices.DeleteFunc(out, func(f fused) bool {
		if f.hit.TextRank == 0 {
			return f.sim < fl.vector
		}
		return f.guess && (f.hit.VectorRank == 0 || f.sim < fl.guess)
	})
	slices.SortFunc(out, func(a, b fused) int {
		if c := cmp.Compare(b.hit.Score, a.hit.Score); c != 0 {
			return c
		}
		if c := strings.Compare(a.hit.Path, b.hit.Path); c != 0 {
			return c
		}
		return cmp.Compare(a.hit.Seq, b.hit.Seq)
	})
	return out[:min(limit, len(out))]
}

// chunkColumns are the columns scanned by scanChunk.
const chunkColumns = `id, path, seq, workspace, scope, type, heading, start_line, end_line, context, text,
	source, confidence, valid_from, invalid_at, expires_at, "commit"`

// fetchQuery reads the chunks whose ids are in the JSON array given, with
// one statement prepared once whatever their number.
const fetchQuery = "SELECT " + chunkColumns + " FROM chunks WHERE id IN (SELECT value FROM json_each(?))"

// fetch fills in the chunks of hits and returns them in order.
func (i *Index) fetch(ctx context.Context, hits []fused) ([]memstore.Hit, error) {
	if len(hits) == 0 {
		return nil, nil
	}
	ids := make([]byte, 0, 16*len(hits))
	pos := make(map[int64]int, len(hits))
	for k, h := range hits {
		ids = strconv.AppendInt(append(ids, ','), h.id, 10)
		pos[h.id] = k
	}
	ids[0] = '['
	rows, err := i.fetchStmt.QueryContext(ctx, string(append(ids, ']')))
	if err != nil {
		return nil, fmt.Errorf("search: fetch chunks: %w", err)
	}
	defer rows.Close()
	found := make([]bool, len(hits))
	for rows.Next() {
		var (
			id                              int64
			c                               memstore.Chunk
			validFrom, invalidAt, expiresAt sql.NullInt64
		)
		if err := rows.Scan(&id, &c.Path, &c.Seq, &c.Workspace, &c.Scope, &c.Type, &c.Heading,
			&c.StartLine, &c.EndLine, &c.Context, &c.Text, &c.Source, &c.Confidence,
			&validFrom, &invalidAt, &expiresAt, &c.Commit); err != nil {
			return nil, fmt.Errorf("search: fetch chunks: %w", err)
		}
		c.ValidFrom, c.InvalidAt, c.ExpiresAt = fromNanos(validFrom), fromNanos(invalidAt), fromNanos(expiresAt)
		k := pos[id]
		hits[k].hit.Chunk = c
		found[k] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: fetch chunks: %w", err)
	}
	out := make([]memstore.Hit, 0, len(hits))
	for k, h := range hits {
		if found[k] {
			out = append(out, h.hit)
		}
	}
	return out, nil
}

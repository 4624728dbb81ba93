package sqliteindex

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/selmem/selmem/memstore"
)

// Search ranks the chunks passing q's filters by full text (BM25F over the
// in-memory lexicon, see memstore.Ranking) and by similarity to q.Vector,
// and fuses the two rankings with weighted reciprocal rank fusion. When no
// chunk the principal may read holds a word of the query, allowing for
// typos, only chunks whose similarity reaches q.MinSimilarity are hits
// (relevanceFloor). Ties are broken by path, then seq.
func (i *Index) Search(ctx context.Context, q memstore.Query) ([]memstore.Hit, error) {
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
	// Both rankings filter on the in-memory rows.
	for i.vecs == nil {
		if err := i.loadVectors(ctx); err != nil {
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
	terms, unknown := i.vecs.lex.queryTerms(q.Text, i.rank.TypoWeight, readable)
	textRanked := i.vecs.textSearch(&i.rank, &f, readable, terms, q.Candidates)
	var vecRanked []ranked
	vw := i.rank.VectorWeight
	if unknown > 0 || len(terms) == 0 {
		vw = i.rank.UnknownVectorWeight
	}
	if vec != nil && vw > 0 {
		vecRanked = i.vecs.search(&f, vec, q.Candidates)
	}
	fused := fuse(textRanked, vecRanked, vw, relevanceFloor(q.MinSimilarity, terms), q.Limit)
	return i.fetch(ctx, fused)
}

// loadVectors loads the in-memory rows and vectors unless another search
// did. It is
// called with i.mu read-locked and returns with it read-locked, but releases
// it meanwhile: callers check i.vecs again.
func (i *Index) loadVectors(ctx context.Context) error {
	i.mu.RUnlock()
	defer i.mu.RLock()
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.vecs != nil {
		return nil
	}
	start := time.Now()
	vs, err := loadVecStore(ctx, i.db, i.dim)
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	i.vecs = vs
	i.log.Debug("loaded vectors", logKeyRows, len(vs.rows), logKeyDuration, time.Since(start))
	return nil
}

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
// row's neighbours are readable.
func (s *vecStore) textSearch(r *memstore.Ranking, f *vecFilter, readable func(row int32) bool, terms []queryTerm, k int) []ranked {
	if len(terms) == 0 || len(s.rows) == 0 {
		return nil
	}
	n := len(s.rows)
	buf := s.scratch(n)
	defer s.pool.Put(buf)
	scores := (*buf)[:n]
	var touched []int32
	for _, t := range terms {
		touched = s.lex.score(r, t.id, t.weight, readable, scores, touched)
	}
	h := make(topHeap, 0, k)
	offer := func(row int32, score float64) {
		if len(h) == k && score < h[0].score {
			return
		}
		rw := &s.rows[row]
		if !f.match(rw) {
			return
		}
		h.offer(ranked{id: rw.id, path: rw.path, seq: rw.seq, score: score}, k)
	}
	if r.Neighbour == 0 {
		for _, row := range touched {
			offer(row, float64(scores[row]))
		}
	} else {
		// A row's neighbours are the rows before and after it of the same
		// path: a file's chunks are stored together, in order.
		adjacent := func(row, d int32) (int32, bool) {
			o := row + d
			if o < 0 || int(o) >= n || s.rows[o].path != s.rows[row].path || s.rows[o].seq != s.rows[row].seq+int(d) {
				return 0, false
			}
			return o, true
		}
		best := func(row int32) float64 {
			var b float32
			for _, d := range []int32{-1, 1} {
				if o, ok := adjacent(row, d); ok {
					b = max(b, scores[o])
				}
			}
			return float64(scores[row]) + r.Neighbour*float64(b)
		}
		for _, row := range touched {
			offer(row, best(row))
		}
	}
	for _, row := range touched {
		scores[row] = 0
	}
	h.sort()
	return h
}

// relevanceFloor returns the similarity a vector-only hit needs: min
// when the query is nothing the memory knows (no chunk the principal may
// read holds a term of it or of its typo variants: terms is empty), no
// floor otherwise. The query's words may then exist outside the searched
// workspace, scope or types, and its vector ranks what is inside.
func relevanceFloor(min float64, terms []queryTerm) float64 {
	if len(terms) > 0 {
		return math.Inf(-1)
	}
	return min
}

// fused is a hit with the row id to fetch its chunk by.
type fused struct {
	id  int64
	hit memstore.Hit
	sim float64 // vector similarity, when in the vector ranking
}

// fuse combines the rankings with reciprocal rank fusion, the vector
// ranking weighted by vectorWeight, and returns the best limit, highest
// score first, ties broken by path then seq. When the full-text ranking is
// empty only vector hits with a similarity of at least floor remain: the
// relevance floor (relevanceFloor).
func fuse(text, vec []ranked, vectorWeight, floor float64, limit int) []fused {
	byID := make(map[int64]int, len(text)+len(vec))
	var out []fused
	add := func(rs []ranked, weight float64, setRank func(f *fused, rank int, score float64)) {
		for k, x := range rs {
			j, ok := byID[x.id]
			if !ok {
				j = len(out)
				byID[x.id] = j
				out = append(out, fused{id: x.id, hit: memstore.Hit{Chunk: memstore.Chunk{Path: x.path, Seq: x.seq}}})
			}
			setRank(&out[j], k+1, x.score)
			out[j].hit.Score += weight / float64(memstore.RRFK+k+1)
		}
	}
	add(text, 1, func(f *fused, rank int, _ float64) { f.hit.TextRank = rank })
	if vectorWeight > 0 {
		add(vec, vectorWeight, func(f *fused, rank int, sim float64) { f.hit.VectorRank, f.sim = rank, sim })
	}
	if len(text) == 0 {
		out = slices.DeleteFunc(out, func(f fused) bool { return f.sim < floor })
	}
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

// fetch fills in the chunks of hits and returns them in order.
func (i *Index) fetch(ctx context.Context, hits []fused) ([]memstore.Hit, error) {
	if len(hits) == 0 {
		return nil, nil
	}
	args := make([]any, len(hits))
	pos := make(map[int64]int, len(hits))
	for k, h := range hits {
		args[k] = h.id
		pos[h.id] = k
	}
	rows, err := i.db.QueryContext(ctx, "SELECT "+chunkColumns+" FROM chunks WHERE id IN (?"+
		strings.Repeat(", ?", len(hits)-1)+")", args...)
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

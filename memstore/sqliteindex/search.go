package sqliteindex

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"modernc.org/sqlite"

	"github.com/selmem/selmem/memstore"
)

// maxQueryTerms bounds the terms of a full-text query.
const maxQueryTerms = 32

// Search ranks the chunks passing q's filters by their full-text match of
// q.Text and by cosine similarity to q.Vector, and fuses the two rankings
// with reciprocal rank fusion. Ties are broken by path, then seq.
//
// The full-text ranking puts chunks containing more of the query's distinct
// words first and orders chunks containing equally many by BM25; see
// textSearch.
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
	terms := queryTerms(q.Text)
	if len(terms) == 0 && vec == nil {
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

	var textRanked, vecRanked []ranked
	if len(terms) > 0 {
		var err error
		if textRanked, err = i.textSearch(ctx, &f, terms, q.Candidates); err != nil {
			return nil, err
		}
	}
	if vec != nil {
		vecRanked = i.vecs.search(&f, vec, q.Candidates)
	}
	fused := fuse(textRanked, vecRanked, q.Limit)
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

// maxLevelQueries bounds the AND queries textSearch runs for one level.
const maxLevelQueries = 10

// textSearch returns the best k chunks passing f that contain any of terms,
// best first. A chunk's level is the number of distinct terms it contains;
// chunks rank by level, then by BM25 (weighted by column), then by path and
// seq. Chunks containing every word are what a memory search is after, and
// ranking by level first lets the search stop early: levels are read from
// the top, each with one AND query per combination of that many terms, until
// k chunks are found. A level needing more than maxLevelQueries queries, and
// everything below it, is read with one OR query as a single last level, in
// BM25 order. FTS5 computes bm25() for every row a query returns, which is
// what costs; an AND query returns few rows, the OR query all rows containing
// any term.
//
// A chunk of level j contains exactly one combination of j terms, so the AND
// queries of a level return it once, and the bm25() of that query equals the
// bm25() of the OR query: terms absent from a chunk add nothing to its score.
func (i *Index) textSearch(ctx context.Context, f *vecFilter, terms []string, k int) ([]ranked, error) {
	var out []ranked
	tq := &textQuery{vecs: i.vecs, f: f, seen: make(map[int64]bool), h: make(topHeap, 0, k)}
	for level := len(terms); level >= 1 && len(out) < k; level-- {
		var exprs []string
		if level == 1 || binomial(len(terms), level) > maxLevelQueries {
			exprs = []string{strings.Join(terms, " OR ")}
			level = 1
		} else {
			for _, set := range combinations(len(terms), level) {
				var sb strings.Builder
				for j, t := range set {
					if j > 0 {
						sb.WriteString(" AND ")
					}
					sb.WriteString(terms[t])
				}
				exprs = append(exprs, sb.String())
			}
		}
		tq.h, tq.k = tq.h[:0], k-len(out)
		for _, expr := range exprs {
			if err := i.matchInto(ctx, tq, expr); err != nil {
				return nil, err
			}
		}
		tq.h.sort()
		for _, r := range tq.h {
			tq.seen[r.id] = true
		}
		out = append(out, tq.h...)
	}
	return out, nil
}

// Names of the SQL functions of textSearch, registered on the index's
// connections by Open.
const (
	sqlKeep  = "selmem_keep"  // (handle, rowid): whether the chunk takes part
	sqlOffer = "selmem_offer" // (handle, rowid, bm25): offers the chunk to the ranking
)

// textQuery is the state of one textSearch level, which the SQL functions
// reach through its handle.
type textQuery struct {
	vecs *vecStore
	f    *vecFilter
	seen map[int64]bool // chunks ranked at higher levels
	h    topHeap        // the best k chunks offered, by -bm25
	k    int
	row  int // the row selmem_keep last found, -1 for none
}

// matchInto offers every chunk matching the FTS5 expression expr that passes
// tq's filter and was not seen to tq.h. The filter runs in SQL, before
// bm25(), whose cost is what a query over common words spends its time on,
// and the ranking in Go, so that no row crosses database/sql.
func (i *Index) matchInto(ctx context.Context, tq *textQuery, expr string) error {
	tq.row = -1
	handle := i.nextHandle.Add(1)
	i.textQueries.Store(handle, tq)
	defer i.textQueries.Delete(handle)
	// selmem_offer returns false, so the query returns no rows; CASE keeps
	// bm25() from running on the chunks selmem_keep rejects.
	rows, err := i.db.QueryContext(ctx, fmt.Sprintf(`SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?2
		AND CASE WHEN %s(?1, rowid) THEN %s(?1, rowid, bm25(chunks_fts, %g, %g, %g)) END`,
		sqlKeep, sqlOffer, weightHeading, weightContext, weightText), handle, expr)
	if err != nil {
		return fmt.Errorf("search: full text: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("search: full text: %w", err)
	}
	return nil
}

// textQuery returns the query of handle.
func (i *Index) textQuery(handle driver.Value) (*textQuery, error) {
	h, _ := handle.(int64)
	tq, ok := i.textQueries.Load(h)
	if !ok {
		return nil, fmt.Errorf("%s: no full-text query %v", sqlKeep, handle)
	}
	return tq.(*textQuery), nil
}

// sqlKeep implements selmem_keep(handle, rowid).
func (i *Index) sqlKeep(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	tq, err := i.textQuery(args[0])
	if err != nil {
		return nil, err
	}
	id, _ := args[1].(int64)
	if tq.seen[id] {
		return false, nil
	}
	r := tq.vecs.find(id, tq.row)
	if r < 0 {
		return false, nil
	}
	tq.row = r
	return tq.f.match(&tq.vecs.rows[r]), nil
}

// sqlOffer implements selmem_offer(handle, rowid, bm25) for a chunk
// selmem_keep accepted.
func (i *Index) sqlOffer(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	tq, err := i.textQuery(args[0])
	if err != nil {
		return nil, err
	}
	id, _ := args[1].(int64)
	bm25, _ := args[2].(float64)
	// bm25() is lower for better matches.
	if len(tq.h) == tq.k && -bm25 < tq.h[0].score {
		return false, nil
	}
	r := tq.row // found by selmem_keep for this chunk
	if r < 0 || tq.vecs.rows[r].id != id {
		if r = tq.vecs.find(id, 0); r < 0 {
			return false, nil
		}
	}
	row := &tq.vecs.rows[r]
	tq.h.offer(ranked{id: id, path: row.path, seq: row.seq, score: -bm25}, tq.k)
	return false, nil
}

// binomial returns n choose k for n <= maxQueryTerms.
func binomial(n, k int) int {
	b := 1
	for j := 1; j <= k; j++ {
		b = b * (n - k + j) / j
	}
	return b
}

// combinations returns every k-element subset of 0..n-1, each ascending.
func combinations(n, k int) [][]int {
	var out [][]int
	set := make([]int, k)
	var rec func(start, j int)
	rec = func(start, j int) {
		if j == k {
			out = append(out, slices.Clone(set))
			return
		}
		for x := start; x <= n-(k-j); x++ {
			set[j] = x
			rec(x+1, j+1)
		}
	}
	rec(0, 0)
	return out
}

// queryTerms turns free text into safe FTS5 terms: the text's distinct words
// (runs of letters, digits and marks), each quoted. Stop words are dropped
// unless nothing else is left. It returns nil when the text has no words.
func queryTerms(text string) []string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.IsMark(r)
	})
	var terms, stops []string
	for _, w := range words {
		switch {
		case slices.Contains(terms, w) || slices.Contains(stops, w):
		case stopWords[w]:
			stops = append(stops, w)
		default:
			terms = append(terms, w)
		}
	}
	if len(terms) == 0 {
		terms = stops
	}
	if len(terms) > maxQueryTerms {
		terms = terms[:maxQueryTerms]
	}
	for k, t := range terms {
		terms[k] = `"` + t + `"` // words hold no '"', so quoting is enough
	}
	return terms
}

// stopWords are English words too common to be worth a full-text term.
var stopWords = func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(`a about above after again all am an and any are as at be because been
		before being below between both but by can could did do does doing down during each few for from
		further had has have having he her here hers him his how i if in into is it its itself just me more
		most my no nor not now of off on once only or other our ours out over own same she should so some
		such than that the their theirs them then there these they this those through to too under until up
		very was we were what when where which while who whom why will with would you your yours`) {
		m[w] = true
	}
	return m
}()

// fused is a hit with the row id to fetch its chunk by.
type fused struct {
	id  int64
	hit memstore.Hit
}

// fuse combines the rankings with reciprocal rank fusion and returns the
// best limit, highest score first, ties broken by path then seq.
func fuse(text, vec []ranked, limit int) []fused {
	byID := make(map[int64]int, len(text)+len(vec))
	var out []fused
	add := func(rs []ranked, setRank func(h *memstore.Hit, rank int)) {
		for k, r := range rs {
			j, ok := byID[r.id]
			if !ok {
				j = len(out)
				byID[r.id] = j
				out = append(out, fused{id: r.id, hit: memstore.Hit{Chunk: memstore.Chunk{Path: r.path, Seq: r.seq}}})
			}
			setRank(&out[j].hit, k+1)
			out[j].hit.Score += 1 / float64(memstore.RRFK+k+1)
		}
	}
	add(text, func(h *memstore.Hit, rank int) { h.TextRank = rank })
	add(vec, func(h *memstore.Hit, rank int) { h.VectorRank = rank })
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

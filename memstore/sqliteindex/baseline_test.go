package sqliteindex

import (
	"context"

	"github.com/selmem/selmem/memstore"
)

// The rankers of the index before its search was made fast (commit
// b62e17f): the reference the fast rankers must agree with exactly, and
// the baseline BenchmarkSearch measures them against. They are kept as
// they were but for the score buffers, which now come from scratch.

// SearchBaseline is Search with the reference rankers.
func (i *Index) SearchBaseline(ctx context.Context, q memstore.Query) ([]memstore.Hit, error) {
	return i.search(ctx, q, (*vecStore).textSearchBaseline, (*vecStore).searchBaseline)
}

// textSearchBaseline finds a row's neighbours by comparing its path with
// the adjacent rows'.
func (s *vecStore) textSearchBaseline(r *memstore.Ranking, f *vecFilter, readable func(row int32) bool, terms []queryTerm, k, cover int) []ranked {
	if len(terms) == 0 || len(s.rows) == 0 {
		return nil
	}
	n := len(s.rows)
	sc := s.scoreTerms(r, readable, terms)
	defer s.release(sc)
	scores, touched := sc.scores, sc.touched
	h := make(topHeap, 0, k)
	guess := s.lex.guess(terms, cover)
	offer := func(row int32, score float64) {
		if len(h) == k && score < h[0].score {
			return
		}
		rw := &s.rows[row]
		if !f.match(rw) {
			return
		}
		h.offer(ranked{id: rw.id, path: rw.path, seq: rw.seq, score: score, guess: guess(row)}, k)
	}
	shares := s.sharesNeighbour(r)
	if r.Neighbour == 0 {
		for _, row := range touched {
			offer(row, float64(scores[row]))
		}
	} else {
		adjacent := func(row, d int32) (int32, bool) {
			o := row + d
			if o < 0 || int(o) >= n || s.rows[o].path != s.rows[row].path || s.rows[o].seq != s.rows[row].seq+int(d) {
				return 0, false
			}
			return o, true
		}
		best := func(row int32) float64 {
			if !shares(row) {
				return float64(scores[row])
			}
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
	h.sort()
	return h
}

// searchBaseline scores every row (or every readable one) in one buffer,
// a dimension at a time, on one core.
func (s *vecStore) searchBaseline(f *vecFilter, vec []float32, k int) []ranked {
	if len(s.rows) == 0 || k <= 0 || s.dim == 0 {
		return nil
	}
	n := len(s.rows)
	sc := s.scratch(n)
	scores := sc.scores[:n]
	defer func() {
		clear(scores)
		s.pool.Put(sc)
	}()
	h := make(topHeap, 0, k)
	offer := func(r int) {
		row := &s.rows[r]
		score := float64(scores[r])
		if len(h) == k && score < h[0].score || !f.match(row) {
			return
		}
		h.offer(ranked{id: row.id, path: row.path, seq: row.seq, score: score}, k)
	}
	if rows := s.readableRows(f); rows != nil {
		for d, w := range vec {
			if w != 0 {
				col := s.cols[d][:n]
				for _, r := range rows {
					scores[r] += w * col[r]
				}
			}
		}
		for _, r := range rows {
			offer(int(r))
		}
	} else {
		for d, w := range vec {
			if w != 0 {
				axpy(scores, w, s.cols[d][:n])
			}
		}
		for r := range s.rows {
			offer(r)
		}
	}
	h.sort()
	return h
}

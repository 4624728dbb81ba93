package sqliteindex

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
)

// never marks an absent invalid_at or expires_at in memory.
const never = math.MaxInt64

// vecStore holds every chunk's filter fields and embedding in memory, rows
// in id order, embeddings dimension-major: cols[d][r] is dimension d of row
// r. A sparse query then reads only the columns of its non-zero dimensions.
// Both rankings filter on the rows. Removed rows are
// tombstoned and compacted away once they are a quarter of all rows. It is
// guarded by Index.mu.
type vecStore struct {
	dim    int
	cols   [][]float32
	rows   []vecRow
	adj    []uint8 // by row: adjPrev | adjNext
	dead   int
	byPath map[string][]int  // live rows of each path
	byZone map[int32][]int32 // rows of each interned access zone (-1: open), ascending, dead ones included until compaction
	names  map[string]int32  // interned workspace, scope and type values
	lex    *lexicon          // the full-text index of the rows
	pool   sync.Pool         // *scratch buffers, scores zeroed when put back
	// minWork is the least work (products) per worker of the vector
	// scan, and workers the most workers (0: GOMAXPROCS); tests change
	// them to exercise the split on small corpora.
	minWork, workers int
}

// vecRow is the metadata of one row.
type vecRow struct {
	id                   int64
	path                 string
	seq                  int
	workspace, scope, ty int32
	zone                 int32 // interned access.ZoneOf(path), -1 for access.ZoneOpen
	invalidAt, expiresAt int64 // Unix nanoseconds, never when absent
	dead                 bool
}

// Bits of vecStore.adj: the row before (after) a row is the previous (next)
// chunk of the same file, a neighbour whose full-text score the row shares
// (memstore.Ranking.Neighbour).
const (
	adjPrev uint8 = 1 << iota
	adjNext
)

func newVecStore(dim, capacity int) *vecStore {
	s := &vecStore{
		dim:    dim,
		cols:   make([][]float32, dim),
		rows:   make([]vecRow, 0, capacity),
		adj:    make([]uint8, 0, capacity),
		byPath: make(map[string][]int),
		byZone: make(map[int32][]int32),
		names:  make(map[string]int32),
		lex:    newLexicon(capacity),

		minWork: parallelWork,
	}
	for d := range s.cols {
		s.cols[d] = make([]float32, 0, capacity)
	}
	return s
}

// loadVecStore reads every chunk's filter fields and, when dim > 0, its
// vector. The two are read concurrently on two connections, the vectors from
// their own narrow table; the caller holds off writers, so both reads see the
// same state.
func loadVecStore(ctx context.Context, db *sql.DB, dim int) (*vecStore, error) {
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM chunks").Scan(&n); err != nil {
		return nil, fmt.Errorf("load vectors: %w", err)
	}
	s := newVecStore(dim, n)
	var ids []int64 // of the vectors, in row order
	if dim > 0 {
		for d := range s.cols {
			s.cols[d] = s.cols[d][:n]
		}
		ids = make([]int64, 0, n)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	if dim > 0 {
		go func() {
			err := readVectors(ctx, db, s.cols, &ids)
			if err != nil {
				cancel()
			}
			errc <- err
		}()
	}
	err := readRows(ctx, db, s)
	if err != nil {
		cancel()
	}
	if dim > 0 {
		err = cmp.Or(<-errc, err)
	}
	if err != nil {
		return nil, fmt.Errorf("load vectors: %w", err)
	}
	if dim > 0 {
		if len(ids) != len(s.rows) {
			return nil, fmt.Errorf("load vectors: %d vectors for %d chunks: %w", len(ids), len(s.rows), ErrCorrupt)
		}
		for r := range s.rows {
			if ids[r] != s.rows[r].id {
				return nil, fmt.Errorf("load vectors: chunk %s#%d has no vector: %w", s.rows[r].path, s.rows[r].seq, ErrCorrupt)
			}
		}
	}
	return s, nil
}

// readRows appends the filter fields of every chunk to s, in id order, and
// indexes their text.
func readRows(ctx context.Context, db *sql.DB, s *vecStore) error {
	rows, err := db.QueryContext(ctx, `SELECT id, path, seq, workspace, scope, type, invalid_at, expires_at,
		heading, context, text FROM chunks ORDER BY id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			r                    vecRow
			ws, scope, ty        string
			invalidAt, expiresAt sql.NullInt64
			heading, context     string
			text                 sql.RawBytes
		)
		if err := rows.Scan(&r.id, &r.path, &r.seq, &ws, &scope, &ty, &invalidAt, &expiresAt, &heading, &context, &text); err != nil {
			return err
		}
		r.workspace, r.scope, r.ty = s.intern(ws), s.intern(scope), s.intern(ty)
		r.zone = s.zone(r.path)
		r.invalidAt, r.expiresAt = orNever(invalidAt), orNever(expiresAt)
		s.appendRow(r)
		s.lex.add(fieldsOf(heading, context, string(text)))
	}
	return rows.Err()
}

// readVectors decodes every stored vector, in id order, into row r of cols,
// whose columns are preallocated to the number of chunks, and appends its id
// to ids. Vectors are decoded row-major into a block of transposeBlock rows
// and the block is then copied column by column: writing one value into each
// of dim columns per row would touch dim cache lines and pages per row.
func readVectors(ctx context.Context, db *sql.DB, cols [][]float32, ids *[]int64) error {
	rows, err := db.QueryContext(ctx, "SELECT id, embedding FROM vectors ORDER BY id")
	if err != nil {
		return err
	}
	defer rows.Close()
	dim, n := len(cols), len(cols[0])
	block := make([]float32, transposeBlock*dim)
	r0, b := 0, 0 // first row of the block, rows in it
	flush := func() {
		for d, col := range cols {
			col := col[r0 : r0+b]
			for j := range col {
				col[j] = block[j*dim+d]
			}
		}
		r0, b = r0+b, 0
	}
	for rows.Next() {
		var (
			id   int64
			blob sql.RawBytes
		)
		if err := rows.Scan(&id, &blob); err != nil {
			return err
		}
		if r0+b == n {
			return fmt.Errorf("more vectors than chunks: %w", ErrCorrupt)
		}
		if len(blob) != 4*dim {
			return fmt.Errorf("chunk id %d has %d bytes of embedding, want %d: %w", id, len(blob), 4*dim, ErrCorrupt)
		}
		row := block[b*dim : (b+1)*dim]
		for d := range row {
			row[d] = math.Float32frombits(binary.LittleEndian.Uint32(blob[4*d:]))
		}
		*ids = append(*ids, id)
		if b++; b == transposeBlock {
			flush()
		}
	}
	flush()
	return rows.Err()
}

// transposeBlock is the number of rows readVectors transposes at a time.
const transposeBlock = 64

func orNever(n sql.NullInt64) int64 {
	if !n.Valid {
		return never
	}
	return n.Int64
}

// intern returns the number standing for name.
func (s *vecStore) intern(name string) int32 {
	if n, ok := s.names[name]; ok {
		return n
	}
	n := int32(len(s.names))
	s.names[name] = n
	return n
}

// zone returns the interned access zone of path, -1 for the open zone.
func (s *vecStore) zone(path string) int32 {
	z := access.ZoneOf(path)
	if z == access.ZoneOpen {
		return -1
	}
	return s.intern(z)
}

// find returns the index of the row of chunk id, or -1, searching from row
// from on when that row's id is not above id. Rows are in id order (ids only
// grow, and compaction keeps the order), and a full-text query visits ids in
// ascending order, so the row sought is usually a few rows past the last.
func (s *vecStore) find(id int64, from int) int {
	lo, hi := 0, len(s.rows)
	if from >= 0 && from < hi && s.rows[from].id <= id {
		// Gallop: rows[lo].id <= id, and the row is below lo+step.
		lo = from
		step := 1
		for lo+step < hi && s.rows[lo+step].id <= id {
			lo += step
			step *= 2
		}
		hi = min(hi, lo+step)
	}
	for lo < hi { // binary search for the first row with an id >= id
		m := int(uint(lo+hi) >> 1)
		if s.rows[m].id < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(s.rows) && s.rows[lo].id == id {
		return lo
	}
	return -1
}

// appendRow records r, whose vector is already in cols, and whether it
// follows the previous row in its file.
func (s *vecStore) appendRow(r vecRow) {
	var adj uint8
	if n := len(s.rows); n > 0 {
		if p := &s.rows[n-1]; p.seq == r.seq-1 && p.path == r.path {
			s.adj[n-1] |= adjNext
			adj = adjPrev
		}
	}
	s.adj = append(s.adj, adj)
	s.byPath[r.path] = append(s.byPath[r.path], len(s.rows))
	s.byZone[r.zone] = append(s.byZone[r.zone], int32(len(s.rows)))
	s.rows = append(s.rows, r)
}

// add appends chunk c stored with row id.
func (s *vecStore) add(id int64, c *memstore.Chunk) {
	for d, x := range c.Embedding {
		s.cols[d] = append(s.cols[d], x)
	}
	s.appendRow(vecRow{
		id:        id,
		path:      c.Path,
		seq:       c.Seq,
		workspace: s.intern(c.Workspace),
		scope:     s.intern(c.Scope),
		ty:        s.intern(c.Type),
		zone:      s.zone(c.Path),
		invalidAt: nanosOrNever(c.InvalidAt),
		expiresAt: nanosOrNever(c.ExpiresAt),
	})
	s.lex.add(fieldsOf(c.Heading, c.Context, c.Text))
}

// nanosOrNever is nanos for the in-memory rows.
func nanosOrNever(t time.Time) int64 {
	if t.IsZero() {
		return never
	}
	return unixNanos(t)
}

// remove tombstones the rows of every path match accepts and compacts when
// enough rows are dead. It visits every path; removePaths looks the paths
// up.
func (s *vecStore) remove(match func(path string) bool) {
	for p := range s.byPath {
		if match(p) {
			s.tombstone(p)
		}
	}
	s.compactIfSparse()
}

// removePaths tombstones the rows of paths and compacts when enough rows
// are dead.
func (s *vecStore) removePaths(paths []string) {
	for _, p := range paths {
		s.tombstone(p)
	}
	s.compactIfSparse()
}

// tombstone marks the rows of path dead.
func (s *vecStore) tombstone(path string) {
	rs := s.byPath[path]
	for _, r := range rs {
		s.rows[r].dead = true
		s.lex.remove(r)
	}
	s.dead += len(rs)
	delete(s.byPath, path)
}

// compactIfSparse compacts once dead rows are over a quarter of all rows.
func (s *vecStore) compactIfSparse() {
	if s.dead > 1024 && s.dead > len(s.rows)/4 {
		s.compact()
	}
}

// compact drops dead rows.
func (s *vecStore) compact() {
	keep := make([]int, 0, len(s.rows)-s.dead)
	for r := range s.rows {
		if !s.rows[r].dead {
			keep = append(keep, r)
		}
	}
	for d, col := range s.cols {
		for k, r := range keep {
			col[k] = col[r]
		}
		s.cols[d] = col[:len(keep)]
	}
	s.lex.compact(keep)
	rows := s.rows
	s.rows, s.adj = s.rows[:0], s.adj[:0]
	clear(s.byPath)
	clear(s.byZone)
	for _, r := range keep {
		s.appendRow(rows[r])
	}
	s.dead = 0
}

// vecFilter is a query's filters in interned form.
type vecFilter struct {
	workspace, scope int32 // -1 for any
	types            []int32
	anyType          bool
	now              int64
	includeInvalid   bool
	allZones         bool    // the access filter lets every zone through
	zones            []bool  // by interned zone: the access filter lets it through
	zoneIDs          []int32 // the interned zones it lets through, besides the open one (-1)
}

// filter translates q's filters; ok is false when no row can match.
func (s *vecStore) filter(q *memstore.Query) (f vecFilter, ok bool) {
	f = vecFilter{workspace: -1, scope: -1, anyType: len(q.Types) == 0, now: unixNanos(q.Now), includeInvalid: q.IncludeInvalid}
	zones, all := q.Filter.Zones()
	f.allZones = all
	if !all {
		f.zones = make([]bool, len(s.names))
		for _, z := range zones {
			if n, ok := s.names[z]; ok {
				f.zones[n] = true
				f.zoneIDs = append(f.zoneIDs, n)
			}
		}
	}
	if q.Workspace != "" {
		if f.workspace, ok = s.names[q.Workspace]; !ok {
			return f, false
		}
	}
	if q.Scope != "" {
		if f.scope, ok = s.names[q.Scope]; !ok {
			return f, false
		}
	}
	for _, t := range q.Types {
		if n, ok := s.names[t]; ok {
			f.types = append(f.types, n)
		}
	}
	return f, f.anyType || len(f.types) > 0
}

// readable reports whether the access filter lets row r through. Rows it
// withholds are never candidates, and count for nothing a query decides.
func (f *vecFilter) readable(r *vecRow) bool {
	return f.allZones || r.zone < 0 || int(r.zone) < len(f.zones) && f.zones[r.zone]
}

// match reports whether row r passes f.
func (f *vecFilter) match(r *vecRow) bool {
	return !r.dead && f.readable(r) &&
		(f.workspace < 0 || r.workspace == f.workspace) &&
		(f.scope < 0 || r.scope == f.scope) &&
		(f.anyType || slices.Contains(f.types, r.ty)) &&
		(f.includeInvalid || (r.invalidAt > f.now && r.expiresAt > f.now))
}

// ranked is one row of a ranking.
type ranked struct {
	id    int64
	path  string
	seq   int
	score float64 // higher is better
	// guess: a full-text hit holding stand-ins for too few of the
	// query's words (memstore.Ranking.GuessShare).
	guess bool
}

// better orders rankings: higher score, then path, then seq.
func better(a, b *ranked) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if a.path != b.path {
		return a.path < b.path
	}
	return a.seq < b.seq
}

// search returns the top k rows passing f by dot product with vec, best
// first. Only the non-zero dimensions of vec are read. When the access
// filter lets few rows through, only those are scored; otherwise the rows
// are split into ranges scanned in parallel (scanRange), each keeping its
// own top k, merged at the end. Every row's score sums the same products in
// the same order whichever way it is computed, and the order of rankings
// (better) is total, so the result does not depend on the split.
func (s *vecStore) search(f *vecFilter, vec []float32, k int) []ranked {
	if len(s.rows) == 0 || k <= 0 || s.dim == 0 {
		return nil
	}
	dims := nonZero(vec)
	if rows := s.readableRows(f); rows != nil {
		return s.searchRows(f, vec, dims, rows, k)
	}
	n := len(s.rows)
	workers := min(cmp.Or(s.workers, runtime.GOMAXPROCS(0)), n*len(dims)/max(s.minWork, 1))
	if workers <= 1 {
		h := s.scanRange(f, vec, dims, 0, n, k)
		h.sort()
		return h
	}
	heaps := make([]topHeap, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*n/workers, (w+1)*n/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			heaps[w] = s.scanRange(f, vec, dims, lo, hi, k)
		}()
	}
	wg.Wait()
	h := heaps[0]
	for _, o := range heaps[1:] {
		for _, c := range o {
			h.offer(c, k)
		}
	}
	h.sort()
	return h
}

// scanBlock is the number of rows scanRange scores at a time: their scores
// stay in the first-level cache while every dimension is added in.
const scanBlock = 2048

// parallelWork is the least work (products of a query and a row's
// dimension) per worker of the vector scan, a few milliseconds of one
// core. Below that, waiting for a second core, which on a machine shared
// with other work may be busy, costs more than it saves: the built-in
// embedder's queries of words GloVe lacks, sparse, over 100,000 chunks are
// scanned on one core, its 100 dense semantic dimensions and a dense
// model's vectors on several.
const parallelWork = 10_000_000

// scanRange returns the best k rows of [lo, hi) passing f by dot product
// with vec, whose non-zero dimensions are dims, as an unsorted heap.
func (s *vecStore) scanRange(f *vecFilter, vec []float32, dims []int, lo, hi, k int) topHeap {
	var block [scanBlock]float32
	h := make(topHeap, 0, k)
	for b := lo; b < hi; b += scanBlock {
		e := min(b+scanBlock, hi)
		scores := block[:e-b]
		clear(scores)
		ds := dims
		for ; len(ds) >= 8; ds = ds[8:] {
			var ws [8]float32
			var xs [8][]float32
			for j, d := range ds[:8] {
				ws[j], xs[j] = vec[d], s.cols[d][b:e]
			}
			axpy8(scores, &ws, &xs)
		}
		for _, d := range ds {
			axpy(scores, vec[d], s.cols[d][b:e])
		}
		for j, sc := range scores {
			score := float64(sc)
			if len(h) == k && score < h[0].score {
				continue
			}
			if row := &s.rows[b+j]; f.match(row) {
				h.offer(ranked{id: row.id, path: row.path, seq: row.seq, score: score}, k)
			}
		}
	}
	return h
}

// searchAmong is search over the rows of the chunks among holds.
func (s *vecStore) searchAmong(f *vecFilter, vec []float32, among []ranked, k int) []ranked {
	rows := make([]int32, 0, len(among))
	for _, r := range among {
		if row := s.find(r.id, -1); row >= 0 {
			rows = append(rows, int32(row))
		}
	}
	slices.Sort(rows)
	return s.searchRows(f, vec, nonZero(vec), rows, k)
}

// nonZero returns the dimensions of vec that are not zero.
func nonZero(vec []float32) []int {
	dims := make([]int, 0, len(vec))
	for d, w := range vec {
		if w != 0 {
			dims = append(dims, d)
		}
	}
	return dims
}

// searchRows is search over rows alone (ascending).
func (s *vecStore) searchRows(f *vecFilter, vec []float32, dims []int, rows []int32, k int) []ranked {
	h := make(topHeap, 0, k)
	for _, r := range rows {
		var score float32
		for _, d := range dims {
			score += vec[d] * s.cols[d][r]
		}
		if len(h) == k && float64(score) < h[0].score {
			continue
		}
		if row := &s.rows[r]; f.match(row) {
			h.offer(ranked{id: row.id, path: row.path, seq: row.seq, score: float64(score)}, k)
		}
	}
	h.sort()
	return h
}

// readableRows returns the rows f's access filter lets through, ascending,
// when they are few enough (under a quarter of all rows) that scoring them
// one by one beats scoring every row; else nil.
func (s *vecStore) readableRows(f *vecFilter) []int32 {
	if f.allZones {
		return nil
	}
	total := len(s.byZone[-1])
	for _, z := range f.zoneIDs {
		total += len(s.byZone[z])
	}
	if 4*total >= len(s.rows) {
		return nil
	}
	rows := make([]int32, 0, total)
	rows = append(rows, s.byZone[-1]...)
	for _, z := range f.zoneIDs {
		rows = append(rows, s.byZone[z]...)
	}
	slices.Sort(rows)
	return rows
}

// scratch holds a full-text search's working buffers: a score for every
// row, zero but for the rows in touched.
type scratch struct {
	scores  []float32
	touched []int32
}

// scratch returns a search's buffers with a score for each of n rows, all
// zero; release puts them back.
func (s *vecStore) scratch(n int) *scratch {
	sc, _ := s.pool.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	if cap(sc.scores) < n {
		sc.scores = make([]float32, n)
	}
	sc.scores = sc.scores[:n]
	return sc
}

// release zeroes the scores sc touched and returns it to the pool.
func (s *vecStore) release(sc *scratch) {
	for _, r := range sc.touched {
		sc.scores[r] = 0
	}
	sc.touched = sc.touched[:0]
	s.pool.Put(sc)
}

// axpy adds a*x to y.
func axpy(y []float32, a float32, x []float32) {
	x = x[:len(y)]
	i := 0
	for ; i+4 <= len(y); i += 4 {
		y[i] += a * x[i]
		y[i+1] += a * x[i+1]
		y[i+2] += a * x[i+2]
		y[i+3] += a * x[i+3]
	}
	for ; i < len(y); i++ {
		y[i] += a * x[i]
	}
}

// axpy8 adds ws[j]*xs[j] to v for j = 0..7, in that order: each value of v
// takes the same roundings as from eight calls of axpy, but is loaded and
// stored once.
func axpy8(v []float32, ws *[8]float32, xs *[8][]float32) {
	n := len(v)
	x0, x1, x2, x3, x4, x5, x6, x7 := xs[0][:n], xs[1][:n], xs[2][:n], xs[3][:n], xs[4][:n], xs[5][:n], xs[6][:n], xs[7][:n]
	a0, a1, a2, a3, a4, a5, a6, a7 := ws[0], ws[1], ws[2], ws[3], ws[4], ws[5], ws[6], ws[7]
	for i := range v {
		s := v[i]
		s += a0 * x0[i]
		s += a1 * x1[i]
		s += a2 * x2[i]
		s += a3 * x3[i]
		s += a4 * x4[i]
		s += a5 * x5[i]
		s += a6 * x6[i]
		s += a7 * x7[i]
		v[i] = s
	}
}

// topHeap keeps the best k rankings with the worst at the root.
type topHeap []ranked

// offer adds c if the heap has room or c beats the worst.
func (h *topHeap) offer(c ranked, k int) {
	if len(*h) < k {
		*h = append(*h, c)
		h.up(len(*h) - 1)
		return
	}
	if !better(&c, &(*h)[0]) {
		return
	}
	(*h)[0] = c
	h.down(0)
}

// sort orders h best first.
func (h topHeap) sort() {
	slices.SortFunc(h, func(a, b ranked) int {
		if better(&a, &b) {
			return -1
		}
		return 1
	})
}

func (h topHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !better(&h[p], &h[i]) { // the parent is already the worse
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func (h topHeap) down(i int) {
	for {
		w := i
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < len(h) && better(&h[w], &h[c]) {
				w = c
			}
		}
		if w == i {
			return
		}
		h[w], h[i] = h[i], h[w]
		i = w
	}
}

package profiler

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Composite keys of two columns are found in the rows' single pass:
// the first pairSample rows screen every pair of columns that have no
// missing value and repeat values there; the pairs unique on the sample,
// fewest combinations first, are then checked on every row with a set of
// pair hashes, and a repeated pair rules a candidate out. Past
// pairSetLimit distinct pairs the set stops growing: later rows are
// checked against it only, and the key is reported as an estimate.
//
// The screening checks pairs fewest combinations first, until it has
// pairCands or has hashed pairWork cells: a table of 1,000 columns that
// repeat values has half a million pairs, which took seconds to screen
// whole.
const (
	pairSample   = 2000
	pairCands    = 4
	pairSetLimit = 1 << 19
	pairWork     = 1 << 24
)

type pairCand struct {
	a, b    int
	set     *u64set
	dead    bool
	capped  bool // the set is full: later pairs are checked against it, not added
	product int  // distinct values of a × of b in the sample
}

type pairAcc struct {
	seen     int64
	sample   [][]uint64 // per column: cell hashes of the first rows, 0 = missing
	screened bool
	cands    []*pairCand
	isCand   []bool
	h        [][]uint64 // this batch's cell hashes of candidate columns
	setLimit int        // pairs kept per candidate; 0 means pairSetLimit
}

// store is how many rows of the current batch column ci must keep hashes
// for.
func (p *pairAcc) store(ci, n int) int {
	if !p.screened {
		return int(min(int64(n), max(pairSample-p.seen, 0)))
	}
	if ci < len(p.isCand) && p.isCand[ci] {
		return n
	}
	return 0
}

// slot returns where column ci's hashes of keep rows of this batch go
// (keep as store returned it).
func (p *pairAcc) slot(ci, keep int) []uint64 {
	for len(p.sample) <= ci {
		p.sample = append(p.sample, nil)
	}
	for len(p.h) <= ci {
		p.h = append(p.h, nil)
	}
	if cap(p.h[ci]) < keep {
		p.h[ci] = make([]uint64, 0, keep)
	}
	return p.h[ci][:0]
}

func (p *pairAcc) put(ci int, dst []uint64) {
	if !p.screened {
		p.sample[ci] = append(p.sample[ci], dst...)
	}
	p.h[ci] = dst
}

// end finishes a batch of n rows: screens once the sample is complete
// (hashing the rest of that batch's candidate columns from cols), and
// checks the candidates on the batch's rows.
func (p *pairAcc) end(cols []arrow.Array, n int) {
	from := 0
	if !p.screened {
		if p.seen+int64(n) < pairSample {
			p.seen += int64(n)
			return
		}
		from = int(pairSample - p.seen)
		p.screen(len(cols))
		for ci := range p.h {
			if ci >= len(p.isCand) || !p.isCand[ci] {
				p.h[ci] = nil // only candidates' hashes are needed from here on
				continue
			}
			h := make([]uint64, n)
			for i := from; i < n; i++ {
				h[i] = cellHash(cols[ci], i)
			}
			p.h[ci] = h
		}
	}
	p.seen += int64(n)
	defer func() {
		for ci := range p.h {
			p.h[ci] = p.h[ci][:0]
		}
	}()
	for _, c := range p.cands {
		if c.dead {
			continue
		}
		ha, hb := p.h[c.a], p.h[c.b]
		if len(ha) < n || len(hb) < n {
			c.dead = true // a column missing from this batch
			continue
		}
		for i := from; i < n; i++ {
			if ha[i] == 0 || hb[i] == 0 {
				c.dead = true
				break
			}
			dup, refused := c.set.insert(mix64(ha[i], hb[i]))
			if dup {
				c.dead = true
				break
			}
			c.capped = c.capped || refused
		}
	}
}

// cellHash is the hash of a cell as the row accumulator computes it, 0
// for a missing value.
func cellHash(a arrow.Array, i int) uint64 {
	if a == nil || a.IsNull(i) {
		return 0
	}
	if s, ok := a.(*array.String); ok {
		v := trimSpace(s.Value(i))
		if missing(v) {
			return 0
		}
		return hash64(unsafeBytes(v)) | 1
	}
	return hash64([]byte(valueString(a, i))) | 1
}

// screen picks the candidate pairs from the sample.
func (p *pairAcc) screen(ncols int) {
	p.screened = true
	p.isCand = make([]bool, ncols)
	rows := 0
	distinct := make([]int, ncols)
	var elig []int
	for _, col := range p.sample {
		rows = max(rows, len(col))
	}
	for ci := range min(ncols, len(p.sample)) {
		col := p.sample[ci]
		if len(col) < rows || rows == 0 || slices.Contains(col, 0) {
			continue
		}
		set := map[uint64]bool{}
		for _, h := range col {
			set[h] = true
		}
		distinct[ci] = len(set)
		if len(set) < len(col) {
			elig = append(elig, ci)
		}
	}
	// The pairs that could be unique on the sample, fewest combinations
	// first: the likeliest keys, and the order candidates are kept in.
	var pairs []pairCand
	for x, a := range elig {
		for _, b := range elig[x+1:] {
			if product := distinct[a] * distinct[b]; product >= rows {
				pairs = append(pairs, pairCand{a: a, b: b, product: product})
			}
		}
	}
	slices.SortStableFunc(pairs, func(x, y pairCand) int { return x.product - y.product })
	var found []*pairCand
	seen := newU64Set(pairSample * 2)
	work := 0
	for i := range pairs {
		c := &pairs[i]
		if len(found) == pairCands || work >= pairWork {
			break
		}
		seen.reset()
		unique := true
		for i := range rows {
			work++
			if dup, _ := seen.insert(mix64(p.sample[c.a][i], p.sample[c.b][i])); dup {
				unique = false
				break
			}
		}
		if unique {
			found = append(found, c)
		}
	}
	for _, c := range found {
		limit := p.setLimit
		if limit <= 0 {
			limit = pairSetLimit
		}
		c.set = newU64Set(limit)
		for i := range rows {
			c.set.insert(mix64(p.sample[c.a][i], p.sample[c.b][i]))
		}
		p.isCand[c.a], p.isCand[c.b] = true, true
	}
	p.cands = found
	p.sample = nil
}

// keys returns the surviving pairs of column indices, and whether any
// was checked only against the first pairSetLimit pairs.
func (p *pairAcc) keys(ncols int) (pairs [][2]int, approx bool) {
	if !p.screened {
		p.screen(ncols)
	}
	for _, c := range p.cands {
		if !c.dead {
			pairs = append(pairs, [2]int{c.a, c.b})
			approx = approx || c.capped
		}
	}
	return pairs, approx
}

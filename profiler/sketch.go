package profiler

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"sort"
)

// hash64 is a fast, seedless, deterministic 64-bit hash (wyhash-style mixing),
// so that sketches built from the same data are identical across runs.
func hash64(b []byte) uint64 {
	const p0, p1, p2 = 0xa0761d6478bd642f, 0xe7037ed1a0b428db, 0x8ebc6af09c88c6e3
	h := uint64(len(b)) ^ p0
	for len(b) >= 8 {
		hi, lo := bits.Mul64(binary.LittleEndian.Uint64(b)^p1, h^p2)
		h = hi ^ lo
		b = b[8:]
	}
	var t uint64
	for i, c := range b {
		t |= uint64(c) << (8 * i)
	}
	hi, lo := bits.Mul64(t^p1, h^p0)
	h = hi ^ lo
	hi, lo = bits.Mul64(h^p2, p1)
	return hi ^ lo
}

func mix64(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a^0xa0761d6478bd642f, b^0xe7037ed1a0b428db)
	return hi ^ lo
}

// hll is a HyperLogLog distinct-count sketch with 2^14 registers (~0.8% error).
type hll struct{ reg []uint8 }

const hllP = 14

func newHLL() *hll { return &hll{reg: make([]uint8, 1<<hllP)} }

func (h *hll) add(x uint64) {
	idx := x >> (64 - hllP)
	w := x<<hllP | 1<<(hllP-1)
	r := uint8(bits.LeadingZeros64(w) + 1)
	if r > h.reg[idx] {
		h.reg[idx] = r
	}
}

func (h *hll) estimate() float64 {
	m := float64(len(h.reg))
	sum, zeros := 0.0, 0
	for _, r := range h.reg {
		sum += 1 / float64(uint64(1)<<r)
		if r == 0 {
			zeros++
		}
	}
	e := 0.7213 / (1 + 1.079/m) * m * m / sum
	if e <= 2.5*m && zeros > 0 {
		e = m * math.Log(m/float64(zeros))
	}
	return e
}

// kll is a deterministic KLL-style quantile sketch: mergeable, bounded
// memory, rank error around 1% for k=400. Compaction alternates the kept
// half instead of flipping a coin, so results are reproducible.
type kll struct {
	k      int
	levels [][]float64
	caps   []int // capacity of each level, recomputed when a level is added
	n      int64
	odd    bool
}

func (s *kll) clone() *kll {
	c := *s
	c.levels = make([][]float64, len(s.levels))
	for i, lv := range s.levels {
		c.levels[i] = append(make([]float64, 0, cap(lv)), lv...)
	}
	c.caps = append([]int(nil), s.caps...)
	return &c
}

func newKLL(k int) *kll {
	s := &kll{k: k, levels: [][]float64{make([]float64, 0, k)}}
	s.setCaps()
	return s
}

func (s *kll) setCaps() {
	s.caps = s.caps[:0]
	for h := range s.levels {
		c := int(float64(s.k) * math.Pow(2.0/3.0, float64(len(s.levels)-1-h)))
		s.caps = append(s.caps, max(c, 8))
	}
}

func (s *kll) add(v float64) {
	s.levels[0] = append(s.levels[0], v)
	s.n++
	if len(s.levels[0]) >= s.caps[0] {
		s.compress()
	}
}

// addWeighted adds v with weight w: one item at each level h whose bit is
// set in w (an item at level h stands for 2^h values).
func (s *kll) addWeighted(v float64, w int64) {
	if w <= 0 {
		return
	}
	s.n += w
	for h := 0; w != 0; h, w = h+1, w>>1 {
		if w&1 == 0 {
			continue
		}
		for h >= len(s.levels) {
			s.levels = append(s.levels, nil)
		}
		s.levels[h] = append(s.levels[h], v)
	}
	if len(s.caps) != len(s.levels) {
		s.setCaps()
	}
	s.compress()
}

func (s *kll) compress() {
	for h := 0; h < len(s.levels); h++ {
		if len(s.levels[h]) < s.caps[h] {
			continue
		}
		if h+1 == len(s.levels) {
			s.levels = append(s.levels, nil)
			s.setCaps()
		}
		lv := s.levels[h]
		slices.Sort(lv)
		keep := lv[:0]
		if len(lv)%2 == 1 {
			// keep the last item at this level so the pairs are even
			keep = append(keep[:0:0], lv[len(lv)-1])
			lv = lv[:len(lv)-1]
		}
		off := 0
		if s.odd {
			off = 1
		}
		s.odd = !s.odd
		for i := off; i < len(lv); i += 2 {
			s.levels[h+1] = append(s.levels[h+1], lv[i])
		}
		s.levels[h] = append(s.levels[h][:0], keep...)
	}
}

// quantiles returns the values at the given ranks (0..1).
func (s *kll) quantiles(qs []float64) []float64 {
	type wv struct {
		v float64
		w int64
	}
	var items []wv
	var total int64
	for h, lv := range s.levels {
		for _, v := range lv {
			items = append(items, wv{v, 1 << h})
			total += 1 << h
		}
	}
	if len(items) == 0 {
		return nil
	}
	sort.Slice(items, func(i, j int) bool { return items[i].v < items[j].v })
	out := make([]float64, len(qs))
	for i, q := range qs {
		target := q * float64(total)
		var cum int64
		out[i] = items[len(items)-1].v
		for _, it := range items {
			cum += it.w
			if float64(cum) >= target {
				out[i] = it.v
				break
			}
		}
	}
	return out
}

// kmv keeps the k smallest distinct hashes of a column (a bottom-k sketch)
// for containment estimates between columns of different sources.
type kmv struct {
	k int
	h []uint64 // sorted ascending
}

func (s *kmv) add(x uint64) {
	if len(s.h) == s.k && x >= s.h[len(s.h)-1] {
		return
	}
	i, found := slices.BinarySearch(s.h, x)
	if found {
		return
	}
	s.h = slices.Insert(s.h, i, x)
	if len(s.h) > s.k {
		s.h = s.h[:s.k]
	}
}

// full reports whether the sketch dropped hashes (it holds a sample, not the set).
func (s *kmv) full() bool { return len(s.h) >= s.k }

// u64set is an open-addressing set of non-zero uint64 hashes with a hard
// cap; it grows at 3/4 load (linear probes stay within a cache line or two)
// and not at all once full, so its size is bounded by the cap.
type u64set struct {
	slots []uint64
	n     int
	limit int
}

// u64setFirst is the number of slots a set starts with.
const u64setFirst = 1024

func newU64Set(limit int) *u64set {
	return &u64set{slots: make([]uint64, u64setFirst), limit: limit}
}

// insert adds x; it reports whether x was already present and whether the
// set refused a new member because it is at its limit.
func (s *u64set) insert(x uint64) (dup, refused bool) {
	if x == 0 {
		x = 1
	}
	mask := uint64(len(s.slots) - 1)
	for i := x & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case x:
			return true, false
		case 0:
			if s.n >= s.limit {
				return false, true
			}
			s.slots[i] = x
			s.n++
			if 4*s.n > 3*len(s.slots) && s.n < s.limit {
				s.grow()
			}
			return false, false
		}
	}
}

// bytes is the memory of the set's slots.
func (s *u64set) bytes() int64 { return int64(len(s.slots)) * 8 }

// wouldGrow reports whether one more member would double the slots.
func (s *u64set) wouldGrow() bool { return 4*(s.n+1) > 3*len(s.slots) && s.n+1 < s.limit }

// freeze makes the set refuse new members; it still finds those it has.
func (s *u64set) freeze() { s.limit = s.n }

// frozen reports whether the set refuses new members.
func (s *u64set) frozen() bool { return s.n >= s.limit }

func (s *u64set) grow() {
	old := s.slots
	s.slots = make([]uint64, len(old)*2)
	mask := uint64(len(s.slots) - 1)
	for _, x := range old {
		if x == 0 {
			continue
		}
		i := x & mask
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = x
	}
}

// spaceSaving tracks approximate heavy hitters among values that arrive
// after the exact counter is full (the Space-Saving algorithm: a new value
// replaces an entry of minimum count and inherits that count as its
// error). Keys are hashes; a copy of one value per entry is kept for
// display. Entries stay in place in ent; order lists their indices sorted
// by count, so the minimum is order[0] and an increment moves an entry to
// the end of its run of equal counts (found by binary search) — O(log n)
// without touching a hash table, which pos (hash -> entry) needs only when
// an entry is replaced.
type spaceSaving struct {
	cap    int
	pos    posTable
	ent    []ssEntry
	order  []int32 // entry indices, ascending count
	counts []int64 // counts in the same order, for the binary search
	minEnd int     // last position holding the minimum count
}

type ssEntry struct {
	h     uint64
	count int64
	err   int64
	val   []byte
	at    int32 // position in order
}

func newSpaceSaving(c int) *spaceSaving {
	return &spaceSaving{cap: c, pos: newPosTable(c), ent: make([]ssEntry, 0, c),
		order: make([]int32, 0, c), counts: make([]int64, 0, c)}
}

func (s *spaceSaving) add(h uint64, v []byte) {
	if i, ok := s.pos.get(h); ok {
		s.incr(int(s.ent[i].at))
		return
	}
	if len(s.ent) < s.cap {
		// a new entry with count 1 goes to the front (counts are >= 1)
		i := int32(len(s.ent))
		s.ent = append(s.ent, ssEntry{h: h, count: 1, val: append([]byte(nil), v...)})
		s.order = append(s.order, 0)
		s.counts = append(s.counts, 0)
		copy(s.order[1:], s.order)
		copy(s.counts[1:], s.counts)
		s.order[0], s.counts[0] = i, 1
		for p, e := range s.order {
			s.ent[e].at = int32(p)
		}
		s.pos.set(h, i)
		s.minEnd = s.runEnd(0)
		return
	}
	i := s.order[0]
	e := &s.ent[i]
	s.pos.del(e.h)
	e.h, e.err = h, e.count
	e.val = append(e.val[:0], v...)
	s.pos.set(h, i)
	s.incr(0)
}

// incr adds one to the count of the entry at position p of order, moving
// it to the end of its run of equal counts first so the order stays sorted.
// A new value always increments position 0 (the minimum), so the end of
// the minimum's run is kept in minEnd and found by search only when that
// run is used up.
func (s *spaceSaving) incr(p int) {
	c := s.counts[p]
	var q int
	if p <= s.minEnd {
		q = s.minEnd
	} else {
		q = s.runEnd(p)
	}
	if q != p {
		a, b := s.order[p], s.order[q]
		s.order[p], s.order[q] = b, a
		s.ent[b].at = int32(p)
		s.ent[a].at = int32(q)
	}
	s.counts[q] = c + 1
	s.ent[s.order[q]].count = c + 1
	if p <= s.minEnd {
		if s.minEnd > 0 {
			s.minEnd--
		} else {
			s.minEnd = s.runEnd(0)
		}
	}
}

// runEnd returns the last position holding the same count as position p.
func (s *spaceSaving) runEnd(p int) int {
	c := s.counts[p]
	lo, hi := p, len(s.counts)-1
	for lo < hi {
		m := int(uint(lo+hi+1) >> 1)
		if s.counts[m] == c {
			lo = m
		} else {
			hi = m - 1
		}
	}
	return lo
}

// posTable maps 64-bit hashes to small integers: open addressing with
// linear probing, backward-shift deletion, and doubling when half full.
// Hash 0 is stored as 1.
type posTable struct {
	keys []uint64 // 0 marks an empty slot
	vals []int32
	mask uint64
	n    int
}

func newPosTable(n int) posTable {
	size := 16
	for size < 4*n {
		size *= 2
	}
	return posTable{keys: make([]uint64, size), vals: make([]int32, size), mask: uint64(size - 1)}
}

func tableKey(h uint64) uint64 {
	if h == 0 {
		return 1
	}
	return h
}

func (t *posTable) get(h uint64) (int32, bool) {
	h = tableKey(h)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		switch t.keys[i] {
		case h:
			return t.vals[i], true
		case 0:
			return 0, false
		}
	}
}

func (t *posTable) set(h uint64, v int32) {
	h = tableKey(h)
	i := h & t.mask
	for t.keys[i] != 0 && t.keys[i] != h {
		i = (i + 1) & t.mask
	}
	if t.keys[i] == 0 {
		t.n++
	}
	t.keys[i], t.vals[i] = h, v
	if 2*t.n > len(t.keys) {
		t.grow()
	}
}

func (t *posTable) grow() {
	keys, vals := t.keys, t.vals
	t.keys = make([]uint64, 2*len(keys))
	t.vals = make([]int32, 2*len(keys))
	t.mask = uint64(len(t.keys) - 1)
	for j, k := range keys {
		if k == 0 {
			continue
		}
		i := k & t.mask
		for t.keys[i] != 0 {
			i = (i + 1) & t.mask
		}
		t.keys[i], t.vals[i] = k, vals[j]
	}
}

func (t *posTable) del(h uint64) {
	h = tableKey(h)
	i := h & t.mask
	for t.keys[i] != h {
		if t.keys[i] == 0 {
			return
		}
		i = (i + 1) & t.mask
	}
	t.n--
	// shift back the following entries of the run that probed past i
	for j := (i + 1) & t.mask; t.keys[j] != 0; j = (j + 1) & t.mask {
		home := t.keys[j] & t.mask
		if (j-home)&t.mask >= (j-i)&t.mask {
			t.keys[i], t.vals[i] = t.keys[j], t.vals[j]
			i = j
		}
	}
	t.keys[i] = 0
}

// each calls fn for every key and value, in slot order.
func (t *posTable) each(fn func(h uint64, v int32)) {
	for i, k := range t.keys {
		if k != 0 {
			fn(k, t.vals[i])
		}
	}
}

// reset empties the set, keeping its slots.
func (s *u64set) reset() {
	clear(s.slots)
	s.n = 0
}

package profiler

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestPosTable(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	tab := newPosTable(64)
	want := map[uint64]int32{}
	keys := make([]uint64, 200)
	for i := range keys {
		keys[i] = r.Uint64() & 0xffff // small keys: many collisions in the table
	}
	keys[0] = 0 // zero is a valid hash too
	for op := range 200000 {
		k := keys[r.IntN(len(keys))]
		switch {
		case r.IntN(3) == 0:
			tab.del(k)
			delete(want, k)
		case len(want) < 64:
			tab.set(k, int32(op))
			want[k] = int32(op)
		}
		for _, k := range keys[:20] {
			got, ok := tab.get(k)
			w, wok := want[k]
			if ok != wok || got != w {
				t.Fatalf("op %d: get(%d) = %d, %v; want %d, %v", op, k, got, ok, w, wok)
			}
		}
	}
}

func TestSpaceSaving(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const cap, n = 64, 200000
	s := newSpaceSaving(cap)
	truth := map[uint64]int64{}
	for range n {
		// a few heavy values, a long uniform tail
		var v uint64
		if r.IntN(4) == 0 {
			v = uint64(r.IntN(5))
		} else {
			v = 100 + uint64(r.IntN(50000))
		}
		truth[v]++
		s.add(hash64([]byte(strconv.FormatUint(v, 10))), []byte(strconv.FormatUint(v, 10)))
	}
	var sum int64
	for p, e := range s.order {
		ent := s.ent[e]
		if int(ent.at) != p || s.counts[p] != ent.count {
			t.Fatalf("position %d: entry says at=%d count=%d, order says count %d", p, ent.at, ent.count, s.counts[p])
		}
		if p > 0 && s.counts[p] < s.counts[p-1] {
			t.Fatalf("counts not sorted at %d", p)
		}
		v, _ := strconv.ParseUint(string(ent.val), 10, 64)
		if tc := truth[v]; ent.count < tc || ent.count-ent.err > tc {
			t.Errorf("value %d: count %d err %d, true count %d", v, ent.count, ent.err, tc)
		}
		sum += ent.count
	}
	if sum != n {
		t.Errorf("counts sum to %d, want %d", sum, n)
	}
	if got, want := s.minEnd, s.runEnd(0); got != want {
		t.Errorf("minEnd = %d, want %d", got, want)
	}
	for v := range uint64(5) {
		if _, ok := s.pos.get(hash64([]byte(strconv.FormatUint(v, 10)))); !ok {
			t.Errorf("heavy value %d (count %d of %d) not tracked", v, truth[v], n)
		}
	}
}

func TestKLL_Weighted(t *testing.T) {
	// the same multiset, added one by one or with weights, gives
	// quantiles within the sketch's rank error
	a, b := newKLL(kllK), newKLL(kllK)
	for v := range 1000 {
		w := int64(1 + v%37)
		for range w {
			a.add(float64(v))
		}
		b.addWeighted(float64(v), w)
	}
	if a.n != b.n {
		t.Fatalf("n = %d and %d", a.n, b.n)
	}
	qa, qb := a.quantiles(QuantileRanks), b.quantiles(QuantileRanks)
	for i := range qa {
		if d := qa[i] - qb[i]; d > 20 || d < -20 {
			t.Errorf("q%v: %v one by one, %v weighted", QuantileRanks[i], qa[i], qb[i])
		}
	}
}

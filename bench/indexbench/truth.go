package main

import (
	"cmp"
	"runtime"
	"slices"
	"sync"

	"github.com/selmem/selmem/memstore"
)

// key identifies a chunk.
type key struct {
	path string
	seq  int
}

// scored is a chunk of a ranking with its score, higher first.
type scored struct {
	key
	score float64
}

// byScore orders best first, ties by path then seq (the backends' order).
func byScore(a, b scored) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	if c := cmp.Compare(a.path, b.path); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// exactVector returns, for every query, the depth chunks with the highest
// cosine similarity to its vector among those passing its workspace
// filter. Vectors are unit length, so cosine is the dot product, computed
// in float64 over the query's nonzero dimensions only (builtin query
// vectors are sparse).
func exactVector(cs []memstore.Chunk, qs []memstore.Query, depth int) [][]key {
	out := make([][]key, len(qs))
	var next sync.Mutex
	qi := 0
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				next.Lock()
				i := qi
				qi++
				next.Unlock()
				if i >= len(qs) {
					return
				}
				out[i] = exactVectorOne(cs, qs[i], depth)
			}
		})
	}
	wg.Wait()
	return out
}

func exactVectorOne(cs []memstore.Chunk, q memstore.Query, depth int) []key {
	var dims []int
	var vals []float64
	for d, x := range q.Vector {
		if x != 0 {
			dims = append(dims, d)
			vals = append(vals, float64(x))
		}
	}
	top := make([]scored, 0, depth+1)
	for i := range cs {
		c := &cs[i]
		if q.Workspace != "" && c.Workspace != q.Workspace {
			continue
		}
		var dot float64
		for k, d := range dims {
			dot += vals[k] * float64(c.Embedding[d])
		}
		s := scored{key{c.Path, c.Seq}, dot}
		if len(top) == depth && byScore(s, top[depth-1]) >= 0 {
			continue
		}
		j, _ := slices.BinarySearchFunc(top, s, byScore)
		top = slices.Insert(top, j, s)
		if len(top) > depth {
			top = top[:depth]
		}
	}
	return keys(top)
}

func keys(ss []scored) []key {
	ks := make([]key, len(ss))
	for i, s := range ss {
		ks[i] = s.key
	}
	return ks
}

// recall is the fraction of want[:k] found in got[:k]; 1 when want is
// empty (nothing to find).
func recall(got, want []key, k int) float64 {
	want = want[:min(k, len(want))]
	if len(want) == 0 {
		return 1
	}
	in := map[key]bool{}
	for _, g := range got[:min(k, len(got))] {
		in[g] = true
	}
	n := 0
	for _, w := range want {
		if in[w] {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

// hitKeys returns the keys of hits, in order.
func hitKeys(hits []memstore.Hit) []key {
	ks := make([]key, len(hits))
	for i, h := range hits {
		ks[i] = key{h.Path, h.Seq}
	}
	return ks
}

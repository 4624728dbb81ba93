package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/embedder"
)

// Corpus shape: files of chunksPerFile chunks of about chunkWords words,
// spread over workspaces (the -workspaces flag).
const (
	chunksPerFile = 5
	chunkWords    = 60
	vocabSize     = 4000
	zipfS         = 1.07
)

// workspaces is the number of workspaces the files are spread over, round
// robin.
var workspaces = 10

// stopWords lead the vocabulary, so the most frequent words are English
// function words, as in real notes.
var stopWords = strings.Fields(`the of and to a in is that for it as with be on by this are or
	from at an not have which but all can has was will their more when if one been should
	use each only per must after before never any other into than then also these may`)

// vocab is a vocabulary of vocabSize words, stop words first, the rest made
// of syllables; words are drawn with a Zipf distribution over it.
type vocab struct {
	words []string
	stop  map[string]bool
}

func newVocab(seed uint64) *vocab {
	r := rand.New(rand.NewPCG(seed, 0xc0))
	syll := strings.Fields("ba re ti on ca lo mi ne su ta ver pol in dex ret en sto rage cus tom qua ter ly for mat ion al gro win shi pe")
	v := &vocab{stop: map[string]bool{}}
	seen := map[string]bool{}
	for _, w := range stopWords {
		v.words = append(v.words, w)
		v.stop[w], seen[w] = true, true
	}
	for len(v.words) < vocabSize {
		var sb strings.Builder
		for range 2 + r.IntN(3) {
			sb.WriteString(syll[r.IntN(len(syll))])
		}
		if w := sb.String(); !seen[w] {
			seen[w] = true
			v.words = append(v.words, w)
		}
	}
	return v
}

// zipf returns a Zipf sampler over v's words driven by r.
func (v *vocab) zipf(r *rand.Rand) *rand.Zipf {
	return rand.NewZipf(r, zipfS, 2, uint64(len(v.words)-1))
}

// chunk returns chunk i of the corpus, without its embedding. It depends
// only on seed and i, so chunks can be generated in parallel.
func (v *vocab) chunk(seed uint64, i int) memstore.Chunk {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	z := v.zipf(r)
	f, seq := i/chunksPerFile, i%chunksPerFile
	ws := fmt.Sprintf("ws%d", f%workspaces)
	name := fmt.Sprintf("n%07d.md", f)
	var heading []string
	for range 2 + r.IntN(3) {
		heading = append(heading, v.words[z.Uint64()])
	}
	// Markdown: a sentence or two, then bullets.
	var sb strings.Builder
	n := chunkWords - 10 + r.IntN(21)
	for k := range n {
		w := v.words[z.Uint64()]
		switch {
		case k == 0:
			sb.WriteString(strings.ToUpper(w[:1]) + w[1:])
		case k > n/2 && k%8 == 0:
			sb.WriteString(".\n- " + w)
		default:
			sb.WriteString(" " + w)
		}
	}
	sb.WriteString(".")
	h := strings.Join(heading, " ")
	return memstore.Chunk{
		Path: "/memories/workspaces/" + ws + "/notes/" + name, Seq: seq,
		Workspace: ws, Scope: memstore.ScopeWorkspace,
		Type:    []string{"note", "task", "schema", "output"}[f%4],
		Heading: h, Context: ws + " › " + name + " › " + h, Text: sb.String(),
		StartLine: 1 + 12*seq, EndLine: 12 + 12*seq, Source: "inferred", Confidence: 0.8,
		Commit: "bench",
	}
}

// corpus generates and embeds chunks [0, n) with every CPU.
func corpus(v *vocab, seed uint64, n int, emb *embedder.Builtin) []memstore.Chunk {
	cs := make([]memstore.Chunk, n)
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				cs[i] = v.chunk(seed, i)
				vs, _ := emb.Embed(context.Background(), []string{cs[i].Context + "\n" + cs[i].Text})
				cs[i].Embedding = vs[0]
			}
		})
	}
	wg.Wait()
	return cs
}

// queries returns n queries of 2-4 content words drawn from the same
// distribution as the corpus (stop words redrawn), one in ten with a typo
// in one word, one in four restricted to a workspace.
func (v *vocab) queries(seed uint64, n int, emb *embedder.Builtin) []memstore.Query {
	qs := make([]memstore.Query, n)
	for i := range qs {
		r := rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, uint64(i)))
		z := v.zipf(r)
		var ws []string
		for len(ws) < 2+r.IntN(3) {
			if w := v.words[z.Uint64()]; !v.stop[w] {
				ws = append(ws, w)
			}
		}
		if i%10 == 9 {
			k := r.IntN(len(ws))
			ws[k] = typo(r, ws[k])
		}
		q := memstore.Query{Filter: access.Filter{All: true}, Text: strings.Join(ws, " "), Limit: 10}
		if i%4 == 3 {
			q.Workspace = fmt.Sprintf("ws%d", r.IntN(workspaces))
		}
		vs, _ := emb.Embed(context.Background(), []string{q.Text})
		q.Vector = vs[0]
		qs[i] = q
	}
	return qs
}

// typo swaps two adjacent letters of w, or drops one.
func typo(r *rand.Rand, w string) string {
	b := []byte(w)
	k := r.IntN(len(b) - 1)
	if r.IntN(2) == 0 {
		b[k], b[k+1] = b[k+1], b[k]
		return string(b)
	}
	return string(append(b[:k], b[k+1:]...))
}

package pgindex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/selmem/selmem/internal/pgtest"
	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/indextest"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

// parityCorpus returns n chunks shaped like bench/indexbench's corpus:
// files of five chunks over four workspaces, headings of 2-4 words and
// texts of 40-60 words drawn with a Zipf distribution from a 1,500-word
// vocabulary of made-up words, so that common words are in hundreds of
// chunks and rare ones in a few. It also returns the vocabulary.
func parityCorpus(n int) ([]memstore.Chunk, []string) {
	r := rand.New(rand.NewPCG(12, 0))
	syll := strings.Fields("ba re ti on ca lo mi ne su ta ver pol in dex ret en sto cus tom qua ter ly mat al gro win shi pe")
	vocab := indextest.MadeUpWords(r, nil, syll, 1500)
	z := rand.NewZipf(r, 1.07, 2, uint64(len(vocab)-1))
	draw := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = vocab[z.Uint64()]
		}
		return strings.Join(ws, " ")
	}
	cs := make([]memstore.Chunk, n)
	for i := range cs {
		f, seq := i/5, i%5
		ws := fmt.Sprintf("ws%d", f%4)
		name := fmt.Sprintf("n%05d.md", f)
		h := draw(2 + r.IntN(3))
		cs[i] = memstore.Chunk{Path: "/memories/workspaces/" + ws + "/" + name, Seq: seq, Workspace: ws,
			Scope: memstore.ScopeWorkspace, Type: "note", Heading: h, Context: ws + " › " + name + " › " + h,
			Text: draw(40 + r.IntN(21)), StartLine: 1 + 10*seq, EndLine: 10 + 10*seq}
	}
	return cs, vocab
}

// TestSearch_ParityOnCorpus checks that on a corpus of thousands of chunks,
// where the full-text ranking reads only part of a common term's postings,
// Postgres returns the embedded index's top 10 (the exact ranking) for
// nearly every query: full text and hybrid, with typos, words no chunk
// holds, and workspace filters. TextPool is 60 for 4,000 chunks (1.5%), the
// proportion the default pool has at about 400,000 chunks.
//
// The two cannot agree on every query at that proportion: a chunk holding
// several common words, none of them high enough in its term's postings to
// be read, is never a candidate. Ties add to it: the embedded index sums
// scores in float32 and Postgres in float64, so two chunks whose scores
// differ in the seventh digit can swap at the tenth place. With the
// default ranking of this commit (neighbour share 0.5, vectors reordering
// the full-text ranking, which makes its deeper ranks count; eight times
// the candidates scored exactly), 42 of the 240 searches differ, mostly by
// one or two chunks at the bottom of the top 10 (overlap 0.977; 0.968
// with twice the candidates scored); before candidates were ranked by an
// upper bound and the rarest term read deeper, 75 differed at the older
// defaults. The overlap must stay at least minParityOverlap.
//
// minParityOverlap is the least top-10 overlap TestSearch_ParityOnCorpus
// accepts.
const minParityOverlap = 0.95

func TestSearch_ParityOnCorpus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	emb := embedder.NewBuiltin()
	pool := newPool(t, pgtest.DSN(t))
	ix, err := New(pool, &Options{Dim: emb.Dim(), TextPool: 60})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := sqliteindex.Open(filepath.Join(t.TempDir(), "index.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	cs, vocab := parityCorpus(4000)
	texts := make([]string, len(cs))
	for i := range cs {
		texts[i] = cs[i].Context + "\n" + cs[i].Text
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]memstore.Chunk{}
	for i := range cs {
		cs[i].Embedding = vecs[i]
		files[cs[i].Path] = append(files[cs[i].Path], cs[i])
	}
	st := memstore.IndexState{Embedder: emb.ID(), Dim: emb.Dim()}
	for _, x := range []memstore.BatchIndex{ix, ref} {
		if err := x.Reset(ctx, st); err != nil {
			t.Fatal(err)
		}
		if err := x.ReplaceMany(ctx, files); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.BuildSearchIndexes(ctx); err != nil {
		t.Fatal(err)
	}

	// Queries of 2-4 words, common ones included (the vocabulary's head
	// is in a fifth of the chunks); every seventh with a typo, every
	// fifth restricted to a workspace, every eleventh with a word no chunk
	// holds.
	r := rand.New(rand.NewPCG(99, 0))
	z := rand.NewZipf(r, 1.07, 2, uint64(len(vocab)-1))
	type miss struct {
		q         string
		emb, pg   []string
		mode, ws  string
		different int
	}
	var misses []miss
	const nq = 120
	total := 0
	for i := range nq {
		ws := make([]string, 2+r.IntN(3))
		for k := range ws {
			ws[k] = vocab[z.Uint64()]
		}
		if i%7 == 6 {
			k := r.IntN(len(ws))
			b := []byte(ws[k])
			j := r.IntN(len(b) - 1)
			b[j], b[j+1] = b[j+1], b[j]
			ws[k] = string(b)
		}
		if i%11 == 10 {
			ws = append(ws, "zyxwvut")
		}
		q := memstore.Query{Filter: access.Filter{All: true}, Text: strings.Join(ws, " "), Limit: 10}
		if i%5 == 4 {
			q.Workspace = fmt.Sprintf("ws%d", r.IntN(4))
		}
		v, err := emb.Embed(ctx, []string{q.Text})
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []string{"full-text", "hybrid"} {
			if mode == "hybrid" {
				q.Vector = v[0]
			}
			want, err := ref.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ix.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			total++
			a, b := hitKeys(want), hitKeys(got)
			if d := setDifference(a, b); d > 0 || len(a) != len(b) {
				misses = append(misses, miss{q: q.Text, emb: a, pg: b, mode: mode, ws: q.Workspace, different: d})
			}
		}
	}
	// The measure: the share of the embedded index's top 10 that
	// Postgres returns, averaged over the searches.
	missing := 0
	for _, m := range misses {
		missing += m.different
	}
	overlap := 1 - float64(missing)/float64(10*total)
	if overlap < minParityOverlap {
		for _, m := range misses {
			t.Errorf("%s %q (workspace %q): %d of the embedded index's top 10 missing\nembedded: %v\npostgres: %v",
				m.mode, m.q, m.ws, m.different, m.emb, m.pg)
		}
		t.Fatalf("top-10 overlap with the embedded index %.3f (%d of %d searches differ), want at least %.2f", overlap, len(misses), total, minParityOverlap)
	}
	t.Logf("top-10 overlap %.3f: %d of %d searches differ from the embedded index's top 10", overlap, len(misses), total)
	for _, m := range misses {
		t.Logf("%s %q (workspace %q): %d of the top 10 differ", m.mode, m.q, m.ws, m.different)
	}
}

// hitKeys returns "path#seq" of every hit, in order.
func hitKeys(hs []memstore.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = fmt.Sprintf("%s#%d", h.Path, h.Seq)
	}
	return out
}

// setDifference returns how many of want are not in got.
func setDifference(want, got []string) int {
	n := 0
	for _, w := range want {
		if !slices.Contains(got, w) {
			n++
		}
	}
	return n
}

// TestIndex_StatisticsFollowWrites checks that after files are written,
// rewritten and deleted, every term's document frequency is the number of
// chunks holding it and the chunk count and field lengths are those of
// the chunks stored: the statistics every score is computed with; and
// that no posting outlives its chunk (postings have no foreign key).
func TestIndex_StatisticsFollowWrites(t *testing.T) {
	t.Parallel()
	const dim = 4
	ix, pool := newIndex(t, dim)
	ctx := context.Background()
	cs, _ := parityCorpus(60)
	files := map[string][]memstore.Chunk{}
	for i := range cs {
		cs[i].Embedding = randVec(uint64(i), dim)
		files[cs[i].Path] = append(files[cs[i].Path], cs[i])
	}
	if err := ix.ReplaceMany(ctx, files); err != nil {
		t.Fatal(err)
	}
	// Rewrite one file with other text and fewer chunks, delete another,
	// empty a third.
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	rewritten := files[paths[0]][:2]
	rewritten[0].Text, rewritten[1].Heading = cs[len(cs)-1].Text, "a new heading"
	if err := ix.Replace(ctx, paths[0], rewritten); err != nil {
		t.Fatal(err)
	}
	if err := ix.DeletePath(ctx, paths[1]); err != nil {
		t.Fatal(err)
	}
	if err := ix.Replace(ctx, paths[2], nil); err != nil {
		t.Fatal(err)
	}
	var wrongDF int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM selmem_terms t
		FULL JOIN (SELECT term, count(*) AS n FROM selmem_postings GROUP BY term) p ON p.term = t.term
		WHERE coalesce(t.df, 0) <> coalesce(p.n, 0)`).Scan(&wrongDF); err != nil {
		t.Fatal(err)
	}
	if wrongDF != 0 {
		t.Errorf("%d terms have a document frequency other than their number of postings", wrongDF)
	}
	var same bool
	if err := pool.QueryRow(ctx, `SELECT s.n = c.n AND s.sum_heading = c.h AND s.sum_path = c.p AND s.sum_text = c.t
		FROM selmem_lex_stats s, (SELECT count(*) AS n, coalesce(sum(len_heading), 0) AS h,
			coalesce(sum(len_path), 0) AS p, coalesce(sum(len_text), 0) AS t FROM selmem_chunks) c
		WHERE s.id = 1`).Scan(&same); err != nil {
		t.Fatal(err)
	}
	if !same {
		t.Error("the chunk count and field lengths in selmem_lex_stats differ from the chunks stored")
	}
	var orphans int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM selmem_postings p
		WHERE NOT EXISTS (SELECT 1 FROM selmem_chunks c WHERE c.id = p.chunk_id)`).Scan(&orphans); err != nil {
		t.Fatal(err)
	}
	if orphans != 0 {
		t.Errorf("%d postings of deleted chunks remain", orphans)
	}
	if n := count(t, pool, "true"); n != len(cs)-5-5-3 {
		t.Errorf("%d chunks stored, want %d", n, len(cs)-5-5-3)
	}
}

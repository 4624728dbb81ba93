package sqliteindex_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

func TestSearch_BothWordsFirst(t *testing.T) {
	ctx := context.Background()
	idx := indexTexts(t, map[string]string{
		"/memories/org/a.md": "Invoices invoices invoices: the invoice rules.",
		"/memories/org/b.md": "Invoices are archived after ten years.",
		"/memories/org/c.md": "Archived records are read-only.",
	})
	hits, err := idx.Search(ctx, memstore.Query{Filter: access.Filter{All: true}, Text: "archived invoices"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h.Path)
	}
	// b holds both words; a and c one each, equally rare, and a holds
	// its word three times.
	if want := []string{"/memories/org/b.md", "/memories/org/a.md", "/memories/org/c.md"}; !slices.Equal(got, want) {
		t.Errorf("hits %v, want %v", got, want)
	}
}

// TestSearch_TextRanking checks the full-text ranking against its
// definition (memstore.Ranking): BM25F over heading, path and text, plus the
// neighbour share, then path and seq.
func TestSearch_TextRanking(t *testing.T) {
	ctx := context.Background()
	idx := openTemp(t)
	defer idx.Close()
	if err := idx.Reset(ctx, memstore.IndexState{Embedder: "none"}); err != nil {
		t.Fatal(err)
	}
	// Words the stemmer leaves alone.
	words := strings.Fields("kilo lima oscar tango delta zulu echo golf hotel india")
	r := rand.New(rand.NewPCG(5, 6))
	text := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[r.IntN(len(words))]
		}
		return strings.Join(ws, " ")
	}
	var all []memstore.Chunk
	for f := range 60 {
		p := fmt.Sprintf("/memories/workspaces/ws%d/f%02d.md", f%3, f)
		var chunks []memstore.Chunk
		ty := []string{"note", "task"}[f%2] // only notes take the neighbour share
		for seq := range 3 {
			c := memstore.Chunk{Path: p, Seq: seq, Workspace: fmt.Sprintf("ws%d", f%3),
				Scope: memstore.ScopeWorkspace, Type: ty, Heading: text(1), Text: text(2 + r.IntN(8))}
			c.Context = c.Workspace + " › " + path.Base(p) + " › " + c.Heading
			chunks = append(chunks, c)
		}
		if err := idx.Replace(ctx, p, chunks); err != nil {
			t.Fatal(err)
		}
		all = append(all, chunks...)
	}
	for range 40 {
		query := text(1 + r.IntN(5))
		q := memstore.Query{Filter: access.Filter{All: true}, Text: query, Limit: 200, Candidates: 200}
		if r.IntN(2) == 0 {
			q.Workspace = "ws1"
		}
		hits, err := idx.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		want := wantTextScores(all, strings.Fields(query), memstore.DefaultRanking())
		var got []string
		for k, h := range hits {
			key := fmt.Sprintf("%s#%d", h.Path, h.Seq)
			got = append(got, key)
			if k > 0 {
				prev := hits[k-1]
				a, b := want[fmt.Sprintf("%s#%d", prev.Path, prev.Seq)], want[key]
				// Scores are summed in float32: within rounding, either
				// order is right (DeterministicTies checks exact ties).
				if b > a*(1+1e-5) {
					t.Errorf("Search(%q): %s (%v) after %s#%d (%v)", query, key, b, prev.Path, prev.Seq, a)
				}
			}
		}
		var wantKeys []string
		for key := range want {
			if q.Workspace == "" || strings.Contains(key, "/"+q.Workspace+"/") {
				wantKeys = append(wantKeys, key)
			}
		}
		slices.Sort(wantKeys)
		slices.Sort(got)
		if diff := gocmp.Diff(wantKeys, got); diff != "" {
			t.Errorf("Search(%q, workspace %q) hits (-want +got):\n%s", query, q.Workspace, diff)
		}
	}
}

// wantTextScores scores every chunk holding a query word by the
// definition of memstore.Ranking, computed from scratch: BM25F with the
// corpus's document frequencies and average field lengths, plus the
// neighbour share. The test's words are their own terms.
func wantTextScores(chunks []memstore.Chunk, query []string, rk memstore.Ranking) map[string]float64 {
	type doc struct {
		fields [3][]string
	}
	docs := make([]doc, len(chunks))
	var avg [3]float64
	df := map[string]int{}
	for i, c := range chunks {
		pathField := strings.TrimSuffix(c.Context, " › "+c.Heading)
		for f, text := range []string{c.Heading, pathField, c.Text} {
			memstore.Terms(text, func(term string) { docs[i].fields[f] = append(docs[i].fields[f], term) })
			avg[f] += float64(len(docs[i].fields[f])) / float64(len(chunks))
		}
		seen := map[string]bool{}
		for _, fs := range docs[i].fields {
			for _, w := range fs {
				if !seen[w] {
					seen[w] = true
					df[w]++
				}
			}
		}
	}
	var terms []string
	for _, w := range query {
		if !slices.Contains(terms, w) && df[w] > 0 {
			terms = append(terms, w)
		}
	}
	weights := [3]float64{rk.HeadingWeight, rk.PathWeight, 1}
	own := make([]float64, len(chunks))
	for i, d := range docs {
		for _, w := range terms {
			var tf float64
			for f, fs := range d.fields {
				n := 0
				for _, x := range fs {
					if x == w {
						n++
					}
				}
				if n > 0 {
					tf += weights[f] * float64(n) / (1 - rk.B + rk.B*float64(len(fs))/avg[f])
				}
			}
			if tf > 0 {
				idf := math.Log(1 + (float64(len(chunks))-float64(df[w])+0.5)/(float64(df[w])+0.5))
				own[i] += idf * tf / (rk.K1 + tf)
			}
		}
	}
	out := map[string]float64{}
	for i, c := range chunks {
		if own[i] == 0 {
			continue
		}
		var nb float64
		for _, j := range []int{i - 1, i + 1} {
			if j >= 0 && j < len(chunks) && chunks[j].Path == c.Path &&
				(len(rk.NeighbourTypes) == 0 || slices.Contains(rk.NeighbourTypes, c.Type)) {
				nb = max(nb, own[j])
			}
		}
		out[fmt.Sprintf("%s#%d", c.Path, c.Seq)] = own[i] + rk.Neighbour*nb
	}
	return out
}

// indexTexts opens an index holding one org note per path of texts.
func indexTexts(t *testing.T, texts map[string]string) *sqliteindex.Index {
	t.Helper()
	ctx := context.Background()
	idx := openTemp(t)
	t.Cleanup(func() { idx.Close() })
	if err := idx.Reset(ctx, memstore.IndexState{Embedder: "none"}); err != nil {
		t.Fatal(err)
	}
	for p, text := range texts {
		if err := idx.Replace(ctx, p, []memstore.Chunk{{Path: p, Scope: memstore.ScopeOrg, Type: "note", Text: text}}); err != nil {
			t.Fatal(err)
		}
	}
	return idx
}

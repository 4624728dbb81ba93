package sqliteindex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/indextest"
)

// TestSearch_SameAsBaseline checks that Search returns exactly the hits of
// the reference rankers (baseline_test.go) — same chunks, order, scores and
// ranks — on a generated corpus: files of one to six chunks across
// workspaces, user areas and the org, some replaced or deleted (dead rows,
// then a compaction), some expired; queries of frequent and rare words,
// typos and unknown words, with every filter, in three modes and under both
// rankings, with the vector scan split between workers.
func TestSearch_SameAsBaseline(t *testing.T) {
	ctx := context.Background()
	idx, err := Open(filepath.Join(t.TempDir(), "index.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	e := embedder.NewBuiltin()
	if err := idx.Reset(ctx, memstore.IndexState{Embedder: e.ID(), Dim: e.Dim()}); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	words := indextest.MadeUpWords(r, strings.Fields("the of and to a in is that for it"),
		strings.Fields("ba re ti on ca lo mi ne su ta ver pol in dex ret"), 2000)
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(words)-1))
	text := func(n int) string {
		ws := make([]string, n)
		for k := range ws {
			ws[k] = words[zipf.Uint64()]
		}
		return strings.Join(ws, " ")
	}
	const workspaces = 12
	types := []string{"note", "task", "schema", "output"}
	file := func(f int) (string, []memstore.Chunk) {
		var path, ws, scope string
		switch f % 7 {
		case 0:
			path, scope = fmt.Sprintf("/memories/org/o%04d.md", f), memstore.ScopeOrg
		case 1:
			path, scope = fmt.Sprintf("/memories/users/u%d/n%04d.md", f%3, f), memstore.ScopeUser
		default:
			ws = fmt.Sprintf("ws%d", f%workspaces)
			path, scope = fmt.Sprintf("/memories/workspaces/%s/notes/n%04d.md", ws, f), memstore.ScopeWorkspace
		}
		chunks := make([]memstore.Chunk, 1+r.IntN(6))
		texts := make([]string, len(chunks))
		for seq := range chunks {
			c := memstore.Chunk{Path: path, Seq: seq, Workspace: ws, Scope: scope, Type: types[f%len(types)],
				Heading: text(2), Context: ws + " › " + filepath.Base(path), Text: text(5 + r.IntN(40)),
				StartLine: 1 + 10*seq, EndLine: 10 + 10*seq}
			if r.IntN(15) == 0 {
				c.InvalidAt = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
			}
			chunks[seq], texts[seq] = c, c.Context+"\n"+c.Heading+"\n"+c.Text
		}
		vecs, err := e.Embed(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		for k := range chunks {
			chunks[k].Embedding = vecs[k]
		}
		return path, chunks
	}
	const files = 1200
	for f := range files {
		path, chunks := file(f)
		if err := idx.Replace(ctx, path, chunks); err != nil {
			t.Fatal(err)
		}
	}

	queries := make([]memstore.Query, 150)
	for k := range queries {
		ws := make([]string, 1+r.IntN(4))
		for j := range ws {
			ws[j] = words[10+zipf.Uint64()%400] // past the stop words
		}
		switch k % 10 {
		case 3: // a typo: two letters swapped
			if w := ws[0]; len(w) > 4 {
				ws[0] = w[:2] + string(w[3]) + string(w[2]) + w[4:]
			}
		case 7: // a word no chunk holds
			ws = append(ws, "zzqx")
		}
		q := memstore.Query{Text: strings.Join(ws, " "), Filter: access.Filter{All: true}, Limit: 10 + k%3*20,
			Candidates: 50 + k%2*150, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		vecs, err := e.Embed(ctx, []string{q.Text})
		if err != nil {
			t.Fatal(err)
		}
		q.Vector = vecs[0]
		switch k % 6 {
		case 1:
			q.Workspace = fmt.Sprintf("ws%d", k%workspaces)
		case 2: // few zones readable: the vector ranking scores only theirs
			q.Filter = access.Filter{Workspaces: []string{"ws2"}, User: "u1"}
		case 3: // most zones readable: every row is scanned
			q.Filter = access.Filter{Workspaces: []string{"ws2", "ws3", "ws4", "ws5", "ws6", "ws8", "ws9", "ws10"}, User: "u0"}
		case 4:
			q.Scope, q.Types = memstore.ScopeWorkspace, []string{"note", "schema"}
		case 5:
			q.IncludeInvalid = true
		}
		queries[k] = q
	}
	// Each mode keeps the query's text, its vector, or both.
	modes := map[string][2]bool{"hybrid": {true, true}, "text": {true, false}, "vector": {false, true}}
	compare := func(t *testing.T) {
		t.Helper()
		if _, err := idx.Search(ctx, queries[0]); err != nil {
			t.Fatal(err)
		}
		idx.vecs.minWork, idx.vecs.workers = 20_000, 3
		for _, rank := range []memstore.Ranking{memstore.DefaultRanking(), memstore.ModelRanking()} {
			idx.rank = rank
			for name, keep := range modes {
				for _, q := range queries {
					if !keep[0] {
						q.Text = ""
					}
					if !keep[1] {
						q.Vector = nil
					}
					got, err := idx.Search(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					want, err := idx.SearchBaseline(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					if len(want) == 0 && q.Workspace == "" && q.Filter.All {
						t.Errorf("%s %q: no hits from the baseline", name, q.Text)
					}
					if diff := gocmp.Diff(want, got); diff != "" {
						t.Errorf("vector weight %v, %s search %q (workspace %q, filter %+v): hits differ from the baseline (-want +got):\n%s",
							rank.VectorWeight, name, q.Text, q.Workspace, q.Filter, diff)
					}
				}
			}
		}
	}
	// Replaced files leave dead rows behind, and chunks of other lengths.
	for f := 0; f < files; f += 5 {
		path, chunks := file(f)
		if err := idx.Replace(ctx, path, chunks); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("with dead rows", compare)
	if idx.vecs.dead == 0 {
		t.Fatal("no dead rows: the corpus does not exercise them")
	}
	before := len(idx.vecs.rows)
	for ws := range 8 {
		if err := idx.DeletePath(ctx, fmt.Sprintf("/memories/workspaces/ws%d", ws)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := idx.Search(ctx, queries[0]); err != nil {
		t.Fatal(err)
	}
	if len(idx.vecs.rows) >= before {
		t.Fatalf("%d rows before the deletions, %d after: they did not compact", before, len(idx.vecs.rows))
	}
	t.Run("compacted", compare)
}

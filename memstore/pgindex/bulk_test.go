package pgindex

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
)

func TestIndex_ReplaceMany(t *testing.T) {
	t.Parallel()
	const dim = 8
	ix, pool := newIndex(t, dim)
	ctx := context.Background()
	if err := ix.Replace(ctx, "/memories/a.md", fileChunks("/memories/a.md", 3, 1, dim)); err != nil {
		t.Fatal(err)
	}
	if err := ix.Replace(ctx, "/memories/keep.md", fileChunks("/memories/keep.md", 2, 1, dim)); err != nil {
		t.Fatal(err)
	}
	dup := fileChunks("/memories/c.md", 2, 1, dim)
	dup = append(dup, dup[0])
	dup[2].Text = "last one wins"
	err := ix.ReplaceMany(ctx, map[string][]memstore.Chunk{
		"/memories/a.md": fileChunks("/memories/a.md", 1, 2, dim), // shrinks
		"/memories/b.md": fileChunks("/memories/b.md", 4, 1, dim), // new
		"/memories/c.md": dup,                                     // repeated seq
		"/memories/d.md": nil,                                     // absent: no-op
	})
	if err != nil {
		t.Fatalf("ReplaceMany: %v", err)
	}
	for _, tt := range []struct {
		path string
		want int
	}{{"/memories/a.md", 1}, {"/memories/b.md", 4}, {"/memories/c.md", 2}, {"/memories/keep.md", 2}} {
		if got := count(t, pool, "path = $1", tt.path); got != tt.want {
			t.Errorf("%s: %d rows, want %d", tt.path, got, tt.want)
		}
	}
	if got := count(t, pool, "path = '/memories/c.md' AND seq = 0 AND body = 'last one wins'"); got != 1 {
		t.Errorf("repeated seq: the last chunk did not win")
	}
	hits, err := ix.Search(ctx, memstore.Query{Filter: access.Filter{All: true}, Text: "last one wins"})
	if err != nil || len(hits) == 0 || hits[0].Path != "/memories/c.md" {
		t.Errorf("Search after ReplaceMany = %v, %v", paths(hits), err)
	}

	err = ix.ReplaceMany(ctx, map[string][]memstore.Chunk{"/memories/x.md": fileChunks("/memories/y.md", 1, 1, dim)})
	if !errors.Is(err, memstore.ErrInvalid) {
		t.Errorf("ReplaceMany with a chunk of another path: %v, want ErrInvalid", err)
	}
	if err := ix.ReplaceMany(ctx, nil); err != nil {
		t.Errorf("ReplaceMany(nil): %v", err)
	}
}

func TestIndex_DropAndBuildSearchIndexes(t *testing.T) {
	t.Parallel()
	const dim = 8
	ix, pool := newIndex(t, dim)
	ix.opts.BuildMemory = "64MB"
	ctx := context.Background()
	indexes := func() string {
		t.Helper()
		var s string
		err := pool.QueryRow(ctx, `SELECT coalesce(string_agg(indexname, ',' ORDER BY indexname), '')
			FROM pg_indexes WHERE tablename IN ('selmem_chunks', 'selmem_postings') AND indexname IN ($1, $2)`,
			textIndexName, vectorIndexName).Scan(&s)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for range 2 { // idempotent
		if err := ix.DropSearchIndexes(ctx); err != nil {
			t.Fatalf("DropSearchIndexes: %v", err)
		}
	}
	if got := indexes(); got != "" {
		t.Errorf("after drop: %q", got)
	}
	files := map[string][]memstore.Chunk{}
	for _, p := range []string{"/memories/a.md", "/memories/b.md"} {
		files[p] = fileChunks(p, 3, 1, dim)
	}
	if err := ix.ReplaceMany(ctx, files); err != nil {
		t.Fatal(err)
	}
	// Searching without the indexes still works.
	q := memstore.Query{Filter: access.Filter{All: true}, Text: files["/memories/a.md"][0].Text, Vector: files["/memories/a.md"][0].Embedding}
	if hits, err := ix.Search(ctx, q); err != nil || len(hits) == 0 {
		t.Errorf("Search without indexes = %d hits, %v", len(hits), err)
	}
	for range 2 {
		if err := ix.BuildSearchIndexes(ctx); err != nil {
			t.Fatalf("BuildSearchIndexes: %v", err)
		}
	}
	if got, want := indexes(), vectorIndexName+","+textIndexName; got != want {
		t.Errorf("after build: %q, want %q", got, want)
	}
	plan, err := ix.ExplainSearch(ctx, q)
	if err != nil {
		t.Fatalf("ExplainSearch: %v", err)
	}
	if !strings.Contains(plan, "Execution Time") {
		t.Errorf("ExplainSearch returned no ANALYZE output:\n%s", plan)
	}
}

func TestOptions_HNSWParams(t *testing.T) {
	ix := &Index{opts: Options{HNSWM: 12, HNSWEfConstruction: 40}}
	if got := ix.createVectorIndexSQL(); !strings.HasSuffix(got, "WITH (m = 12, ef_construction = 40)") {
		t.Errorf("createVectorIndexSQL() = %q", got)
	}
	ix, _ = newIndex(t, 8)
	if got := ix.createVectorIndexSQL(); !strings.HasSuffix(got, "WITH (m = 12, ef_construction = 32)") {
		t.Errorf("createVectorIndexSQL() with New's defaults = %q", got)
	}
}

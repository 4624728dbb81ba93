package sqliteindex_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

// TestIndex_SharedFile checks that a search sees what another handle on the
// same file (another selmem process on the same home) wrote after the
// searching handle had loaded its in-memory rows, and that the searching
// handle's own writes neither hide nor undo the other's.
func TestIndex_SharedFile(t *testing.T) {
	ctx := context.Background()
	chunk := func(path, text string, vec ...float32) memstore.Chunk {
		if len(vec) == 0 {
			vec = []float32{1, 0}
		}
		return memstore.Chunk{Path: path, Scope: memstore.ScopeOrg, Type: "note", Text: text, Embedding: vec}
	}
	put := func(t *testing.T, idx *sqliteindex.Index, c memstore.Chunk) {
		t.Helper()
		if err := idx.Replace(ctx, c.Path, []memstore.Chunk{c}); err != nil {
			t.Fatalf("Replace %s: %v", c.Path, err)
		}
	}
	const a, b, c = "/memories/org/a.md", "/memories/org/b.md", "/memories/org/c.md"
	tests := []struct {
		name string
		// write changes the file through this handle (mine) and the other.
		write func(t *testing.T, mine, other *sqliteindex.Index)
		// want maps a query word to the paths this handle must find.
		want map[string][]string
		// vector is a query vector and the paths it must find.
		vector []float32
		wantV  []string
	}{
		{"other replaces a file", func(t *testing.T, _, other *sqliteindex.Index) {
			put(t, other, chunk(a, "bravo"))
		}, map[string][]string{"alpha": nil, "bravo": {a}}, nil, nil},
		{"other adds a file", func(t *testing.T, _, other *sqliteindex.Index) {
			put(t, other, chunk(b, "charlie", 0, 1))
		}, map[string][]string{"alpha": {a}, "charlie": {b}}, []float32{0, 1}, []string{b, a}},
		{"other deletes a file", func(t *testing.T, _, other *sqliteindex.Index) {
			if err := other.DeletePath(ctx, a); err != nil {
				t.Fatal(err)
			}
		}, map[string][]string{"alpha": nil}, []float32{1, 0}, nil},
		{"other resets", func(t *testing.T, _, other *sqliteindex.Index) {
			if err := other.Reset(ctx, memstore.IndexState{Embedder: "e", Dim: 2}); err != nil {
				t.Fatal(err)
			}
		}, map[string][]string{"alpha": nil}, []float32{1, 0}, nil},
		{"other writes, then this one", func(t *testing.T, mine, other *sqliteindex.Index) {
			put(t, other, chunk(b, "charlie"))
			put(t, mine, chunk(c, "delta"))
		}, map[string][]string{"alpha": {a}, "charlie": {b}, "delta": {c}}, nil, nil},
		{"this one writes, then the other", func(t *testing.T, mine, other *sqliteindex.Index) {
			put(t, mine, chunk(c, "delta"))
			put(t, other, chunk(b, "charlie"))
		}, map[string][]string{"alpha": {a}, "charlie": {b}, "delta": {c}}, nil, nil},
		{"other changes the dimension", func(t *testing.T, mine, other *sqliteindex.Index) {
			if err := other.Reset(ctx, memstore.IndexState{Embedder: "f", Dim: 3}); err != nil {
				t.Fatal(err)
			}
			put(t, other, chunk(b, "charlie", 0, 0, 1))
			// This handle checks the dimension the file records, not the
			// one it last saw.
			if err := mine.Replace(ctx, c, []memstore.Chunk{chunk(c, "delta")}); !errors.Is(err, memstore.ErrInvalid) {
				t.Errorf("Replace with the old dimension = %v, want ErrInvalid", err)
			}
		}, map[string][]string{"alpha": nil, "charlie": {b}}, []float32{0, 0, 1}, []string{b}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "index.db")
			mine, err := sqliteindex.Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer mine.Close()
			other, err := sqliteindex.Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			if err := mine.Reset(ctx, memstore.IndexState{Embedder: "e", Dim: 2}); err != nil {
				t.Fatal(err)
			}
			put(t, mine, chunk(a, "alpha"))
			// Both handles hold their rows in memory before the writes.
			for _, idx := range []*sqliteindex.Index{mine, other} {
				if got := searchPaths(t, idx, memstore.Query{Text: "alpha"}); !slices.Equal(got, []string{a}) {
					t.Fatalf("before the writes: alpha finds %v", got)
				}
			}
			tt.write(t, mine, other)
			for word, want := range tt.want {
				if got := searchPaths(t, mine, memstore.Query{Text: word}); !slices.Equal(got, want) {
					t.Errorf("%q finds %v, want %v", word, got, want)
				}
			}
			if tt.vector != nil {
				if got := searchPaths(t, mine, memstore.Query{Vector: tt.vector}); !slices.Equal(got, tt.wantV) {
					t.Errorf("vector %v finds %v, want %v", tt.vector, got, tt.wantV)
				}
			}
		})
	}
}

// searchPaths returns the paths of idx's hits for q, unfiltered.
func searchPaths(t *testing.T, idx *sqliteindex.Index, q memstore.Query) []string {
	t.Helper()
	q.Filter = access.Filter{All: true}
	hits, err := idx.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("Search(%q): %v", q.Text, err)
	}
	var paths []string
	for _, h := range hits {
		paths = append(paths, h.Path)
	}
	return paths
}

// TestOpen_AddsGeneration checks that a file written before the generation
// table existed opens, gains it and keeps its chunks.
func TestOpen_AddsGeneration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	idx, err := sqliteindex.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.Reset(ctx, memstore.IndexState{Embedder: "e"}); err != nil {
		t.Fatal(err)
	}
	c := memstore.Chunk{Path: "/memories/org/a.md", Text: "kept rule"}
	if err := idx.Replace(ctx, c.Path, []memstore.Chunk{c}); err != nil {
		t.Fatal(err)
	}
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("DROP TABLE generation"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	idx, err = sqliteindex.Open(path, nil)
	if err != nil {
		t.Fatalf("Open without the generation table: %v", err)
	}
	defer idx.Close()
	if got := searchPaths(t, idx, memstore.Query{Text: "rule"}); !slices.Equal(got, []string{c.Path}) {
		t.Errorf("rule finds %v, want %v", got, []string{c.Path})
	}
	d := memstore.Chunk{Path: "/memories/org/b.md", Text: "new rule"}
	if err := idx.Replace(ctx, d.Path, []memstore.Chunk{d}); err != nil {
		t.Fatal(err)
	}
	if got := searchPaths(t, idx, memstore.Query{Text: "new"}); !slices.Equal(got, []string{d.Path}) {
		t.Errorf("new finds %v, want %v", got, []string{d.Path})
	}
}

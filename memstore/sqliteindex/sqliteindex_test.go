package sqliteindex_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/indextest"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

// openTemp opens a fresh index in t's temporary directory.
func openTemp(t *testing.T) *sqliteindex.Index {
	t.Helper()
	idx, err := sqliteindex.Open(filepath.Join(t.TempDir(), "index.db"), nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return idx
}

func TestIndex_Contract(t *testing.T) {
	indextest.Run(t, func(t *testing.T) memstore.Index { return openTemp(t) })
}

func TestIndex_StoreContract(t *testing.T) {
	indextest.RunStore(t, func(t *testing.T) memstore.Index { return openTemp(t) })
}

func TestOpen_Corrupt(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
	}{
		{"not a database", func(t *testing.T, path string) {
			writeFile(t, path, []byte("# just some markdown, not SQLite\n"+string(make([]byte, 4096))))
		}},
		{"damaged header", func(t *testing.T, path string) {
			createIndex(t, path)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			copy(b[16:24], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) // page size etc.
			writeFile(t, path, b)
		}},
		{"newer schema version", func(t *testing.T, path string) {
			createIndex(t, path)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b[63] = 99 // PRAGMA user_version, big-endian at offset 60
			writeFile(t, path, b)
		}},
		{"foreign database", func(t *testing.T, path string) {
			createIndex(t, path)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b[63] = 0 // version 0 but tables present
			writeFile(t, path, b)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "index.db")
			tt.setup(t, path)
			idx, err := sqliteindex.Open(path, nil)
			if err == nil {
				idx.Close()
			}
			if !errors.Is(err, sqliteindex.ErrCorrupt) {
				t.Fatalf("Open = %v, want an error wrapping ErrCorrupt", err)
			}
			// The caller's recovery: delete and rebuild.
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
					t.Fatal(err)
				}
			}
			idx, err = sqliteindex.Open(path, nil)
			if err != nil {
				t.Fatalf("Open after delete: %v", err)
			}
			idx.Close()
		})
	}
}

// createIndex creates an index file at path and closes it, leaving no WAL.
func createIndex(t *testing.T, path string) {
	t.Helper()
	idx, err := sqliteindex.Open(path, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := idx.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestOpen_InvalidPath(t *testing.T) {
	for _, p := range []string{"", "a?b.db"} {
		if _, err := sqliteindex.Open(p, nil); !errors.Is(err, memstore.ErrInvalid) {
			t.Errorf("Open(%q) = %v, want ErrInvalid", p, err)
		}
	}
}

func TestOpen_Reopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	idx, err := sqliteindex.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := memstore.IndexState{Commit: "abc", Embedder: "e", Dim: 2}
	if err := idx.Reset(ctx, st); err != nil {
		t.Fatal(err)
	}
	c := memstore.Chunk{Path: "/memories/org/a.md", Text: "persisted rule", Embedding: []float32{1, 0}}
	if err := idx.Replace(ctx, c.Path, []memstore.Chunk{c}); err != nil {
		t.Fatal(err)
	}
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	idx, err = sqliteindex.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reopen took %v", time.Since(start))
	defer idx.Close()
	got, err := idx.State(ctx)
	if err != nil || got != st {
		t.Errorf("State() = %+v, %v; want %+v", got, err, st)
	}
	for _, q := range []memstore.Query{{Text: "rule"}, {Vector: []float32{1, 0}}} {
		q.Filter = access.Filter{All: true}
		hits, err := idx.Search(ctx, q)
		if err != nil || len(hits) != 1 || hits[0].Path != c.Path {
			t.Errorf("Search(%q, %v) after reopen = %+v, %v; want the chunk", q.Text, q.Vector, hits, err)
		}
	}
}

func TestIndex_InvalidArguments(t *testing.T) {
	ctx := context.Background()
	idx := openTemp(t)
	defer idx.Close()
	if err := idx.Reset(ctx, memstore.IndexState{Embedder: "e", Dim: 2}); err != nil {
		t.Fatal(err)
	}
	ok := memstore.Chunk{Path: "/memories/org/a.md", Text: "x", Embedding: []float32{1, 0}}
	if err := idx.Replace(ctx, ok.Path, []memstore.Chunk{ok}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		call func() error
	}{
		{"embedding of the wrong dimension", func() error {
			c := ok
			c.Embedding = []float32{1, 0, 0}
			return idx.Replace(ctx, c.Path, []memstore.Chunk{c})
		}},
		{"chunk of another path", func() error {
			return idx.Replace(ctx, "/memories/org/b.md", []memstore.Chunk{ok})
		}},
		{"query vector of the wrong dimension", func() error {
			_, err := idx.Search(ctx, memstore.Query{Filter: access.Filter{All: true}, Vector: []float32{1, 0, 0}})
			return err
		}},
		{"dimension change without Reset", func() error {
			return idx.SetState(ctx, memstore.IndexState{Embedder: "f", Dim: 3})
		}},
		{"negative dimension", func() error {
			return idx.Reset(ctx, memstore.IndexState{Dim: -1})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, memstore.ErrInvalid) {
				t.Errorf("error = %v, want ErrInvalid", err)
			}
		})
	}
	hits, err := idx.Search(ctx, memstore.Query{Filter: access.Filter{All: true}, Text: "x"})
	if err != nil || len(hits) != 1 {
		t.Errorf("after rejected calls: Search = %d hits, %v; want the original chunk", len(hits), err)
	}
}

// TestInspect opens index files read-only: it reads the state of an index,
// and fails, creating nothing, on a missing file, a file that is not an
// index and one of another schema version.
func TestInspect(t *testing.T) {
	ctx := context.Background()
	want := memstore.IndexState{Commit: "0123456789abcdef0123456789abcdef01234567", Embedder: "builtin", Dim: 256}
	tests := []struct {
		name    string
		setup   func(t *testing.T, path string)
		corrupt bool // the error wraps ErrCorrupt
		ok      bool
	}{
		{"index", func(t *testing.T, path string) {
			idx, err := sqliteindex.Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := idx.SetState(ctx, want); err != nil {
				t.Fatal(err)
			}
			idx.Close()
		}, false, true},
		{"missing", func(t *testing.T, path string) {}, false, false},
		{"not a database", func(t *testing.T, path string) {
			writeFile(t, path, []byte("# just some markdown, not SQLite\n"+string(make([]byte, 4096))))
		}, true, false},
		{"newer schema version", func(t *testing.T, path string) {
			createIndex(t, path)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b[63] = 99
			writeFile(t, path, b)
		}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "index.db")
			tt.setup(t, path)
			in, err := sqliteindex.Inspect(ctx, path)
			if !tt.ok {
				if err == nil {
					in.Close()
					t.Fatal("Inspect succeeded")
				}
				if tt.corrupt != errors.Is(err, sqliteindex.ErrCorrupt) {
					t.Errorf("Inspect = %v; wraps ErrCorrupt: %v, want %v", err, errors.Is(err, sqliteindex.ErrCorrupt), tt.corrupt)
				}
				if tt.name == "missing" {
					if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("Inspect created the missing file (%v)", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if got, err := in.State(ctx); err != nil || got != want {
				t.Errorf("State = %+v, %v; want %+v", got, err, want)
			}
		})
	}
	if _, err := sqliteindex.Inspect(ctx, "a?b.db"); !errors.Is(err, memstore.ErrInvalid) {
		t.Errorf("Inspect of a path with '?' = %v, want ErrInvalid", err)
	}
}

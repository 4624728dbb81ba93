package memstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

// behind commits n files with a store opened without an index, so the
// index at home lags n commits behind HEAD.
func behind(t *testing.T, home string, n int) {
	t.Helper()
	ctx := context.Background()
	s, err := memstore.Open(ctx, home, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	for i := range n {
		if _, err := s.Create(ctx, "/memories/notes/behind"+string(rune('a'+i))+".md", "# Behind\n\n- a fact\n", nil); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCheckRepository(t *testing.T) {
	ctx := context.Background()
	if _, err := memstore.CheckRepository(ctx, t.TempDir()); !errors.Is(err, memstore.ErrNotFound) {
		t.Errorf("no repository: err = %v, want ErrNotFound", err)
	}
	s := newStore(t)
	mustCreate(t, s, "/memories/workspaces/a/task.md", "# Task\n\n- rule\n")
	home := filepath.Dir(s.Dir())
	h, err := memstore.CheckRepository(ctx, home)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := s.Head()
	if h.Head != head || len(h.Problems) != 0 || h.Commits != 2 || h.Objects < 4 {
		t.Errorf("CheckRepository = %+v, want HEAD %s, 2 commits, no problem", h, head)
	}
}

func TestCheckIndex(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	s := openStore(t, home, nil)
	mustCreate(t, s, "/memories/workspaces/a/task.md", "# Task\n\n- rule\n")
	s.Close(ctx)
	behind(t, home, 3)
	head, err := memstore.CheckRepository(ctx, home)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := sqliteindex.Open(filepath.Join(home, "index.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()

	h, err := memstore.CheckIndex(ctx, home, idx, embedder.NewBuiltin(), head.Head)
	if err != nil {
		t.Fatal(err)
	}
	if h.Behind != 3 || len(h.Problems) != 1 || !strings.Contains(h.Problems[0], "3 commit(s) behind") {
		t.Errorf("stale index: %+v, want 3 commits behind", h)
	}
	// CheckIndex only looks: the index is as stale as before.
	if again, _ := memstore.CheckIndex(ctx, home, idx, embedder.NewBuiltin(), head.Head); again.Behind != 3 {
		t.Errorf("second check: %+v", again)
	}

	// Opening the store catches the index up, telling Options.Progress
	// about the three files.
	var done, total int
	s2, err := memstore.Open(ctx, home, &memstore.Options{Index: idx, Embedder: embedder.NewBuiltin(),
		Progress: func(d, n int) { done, total = d, n }})
	if err != nil {
		t.Fatal(err)
	}
	s2.Close(ctx)
	if done != 3 || total != 3 {
		t.Errorf("catch-up progress = %d/%d, want 3/3", done, total)
	}
	h, err = memstore.CheckIndex(ctx, home, idx, embedder.NewBuiltin(), head.Head)
	if err != nil || h.Behind != 0 || len(h.Problems) != 0 {
		t.Errorf("after the catch-up: %+v, %v", h, err)
	}
}

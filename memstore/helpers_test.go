package memstore_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// fixedNow is the clock of every test store, so commits and validity are
// reproducible.
var fixedNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// newStore opens a store with the embedded index in a fresh directory.
func newStore(t testing.TB) *memstore.Store {
	t.Helper()
	home := t.TempDir()
	return openStore(t, home, nil)
}

// openStore opens (or reopens) the store at home. wrap, when set, wraps the
// real index, e.g. to inject failures.
func openStore(t testing.TB, home string, wrap func(memstore.Index) memstore.Index) *memstore.Store {
	t.Helper()
	return openStoreWith(t, home, wrap, nil)
}

// openStoreWith is openStore with set, when not nil, changing the options
// before the store opens.
func openStoreWith(t testing.TB, home string, wrap func(memstore.Index) memstore.Index, set func(*memstore.Options)) *memstore.Store {
	t.Helper()
	idx, err := sqliteindex.Open(filepath.Join(home, "index.db"), nil)
	if err != nil {
		t.Fatalf("open index: %v", err)
	}
	t.Cleanup(func() { idx.Close() })
	var i memstore.Index = idx
	if wrap != nil {
		i = wrap(idx)
	}
	opts := &memstore.Options{
		Index: i, Embedder: embedder.NewBuiltin(), Now: func() time.Time { return fixedNow },
	}
	if set != nil {
		set(opts)
	}
	s, err := memstore.Open(context.Background(), home, opts)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// mustCreate creates a file or fails the test.
func mustCreate(t testing.TB, s *memstore.Store, p, text string) memstore.WriteResult {
	t.Helper()
	res, err := s.Create(context.Background(), p, text, nil)
	if err != nil {
		t.Fatalf("Create(%s): %v", p, err)
	}
	return res
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

// gitCmd runs the git CLI in the store's repository, after flushing the
// store's pending .git/index updates.
func gitCmd(t testing.TB, s *memstore.Store, args ...string) string {
	t.Helper()
	if err := s.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	cmd := exec.Command("git", append([]string{"-C", s.Dir()}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// commitCount returns the number of commits on main.
func commitCount(t testing.TB, s *memstore.Store) int {
	t.Helper()
	return strings.Count(gitCmd(t, s, "rev-list", "main"), "\n")
}

package memstore_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/selmem/selmem/memstore"
)

// uuidRE matches a random (version 4) UUID.
var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestStore_ID checks the memory identity: a new memory gets a random
// UUID recorded in its first commit, which survives reopening and
// cloning; two memories created apart differ.
func TestStore_ID(t *testing.T) {
	t.Parallel()
	homeA, homeB := t.TempDir(), t.TempDir()
	a := openStore(t, homeA, nil)
	b := openStore(t, homeB, nil)
	if !uuidRE.MatchString(a.ID()) || !uuidRE.MatchString(b.ID()) {
		t.Fatalf("ids %q and %q are not random UUIDs", a.ID(), b.ID())
	}
	if a.ID() == b.ID() {
		t.Fatalf("two fresh memories share the id %s", a.ID())
	}
	root := gitIn(t, a.Dir(), "rev-list", "--max-parents=0", "main")
	if got := gitIn(t, a.Dir(), "log", "-1", "--format=%(trailers:key=Memory-Id,valueonly)", root); got != a.ID() {
		t.Errorf("first commit's Memory-Id trailer %q, want %q", got, a.ID())
	}
	mustCreate(t, a, "/memories/notes/a.md", "# A\n\n- one fact\n")
	id := a.ID()
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := openStore(t, homeA, nil).ID(); got != id {
		t.Errorf("after reopening: id %q, want %q", got, id)
	}

	// A clone made by git itself is the same memory.
	homeC := t.TempDir()
	if out, err := exec.Command("git", "clone", "--quiet", a.Dir(), filepath.Join(homeC, "memory")).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	// Open remembers the id beside the repository; a clone finds it in
	// its history.
	cache := func(home string) string {
		b, _ := os.ReadFile(filepath.Join(home, "memory", ".git", "selmem-memory-id"))
		return string(b)
	}
	if got := cache(homeA); got != id+"\n" {
		t.Errorf("remembered id %q, want %q", got, id)
	}
	if got := cache(homeC); got != "" {
		t.Errorf("git clone copied the remembered id %q", got)
	}
	c := openStore(t, homeC, nil)
	if c.ID() != id {
		t.Errorf("clone: id %q, want %q", c.ID(), id)
	}
	mustCreate(t, c, "/memories/notes/c.md", "# C\n\n- another fact\n")
	if c.ID() != id {
		t.Errorf("clone after a write: id %q, want %q", c.ID(), id)
	}
}

// TestStore_IDLegacy checks that a repository made before selmem recorded
// an identity (no Memory-Id trailer) is identified by its root commit.
func TestStore_IDLegacy(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := filepath.Join(home, "memory")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "init", "--quiet", "--initial-branch=main")
	gitIn(t, dir, "-c", "user.name=old", "-c", "user.email=old@selmem.local", "commit", "--quiet", "--allow-empty", "-m", "Initialise selmem memory")
	root := gitIn(t, dir, "rev-parse", "main")
	gitIn(t, dir, "-c", "user.name=old", "-c", "user.email=old@selmem.local", "commit", "--quiet", "--allow-empty", "-m", "second")
	s := openStore(t, home, nil)
	if s.ID() != root {
		t.Errorf("legacy id %q, want the root commit %s", s.ID(), root)
	}
}

// binderIndex is an Index recording whether it was used before BindMemory.
type binderIndex struct {
	memstore.Index
	mu          sync.Mutex
	bound       string
	usedUnbound bool
}

func (b *binderIndex) BindMemory(id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.bound = id
	return nil
}

func (b *binderIndex) State(ctx context.Context) (memstore.IndexState, error) {
	b.mu.Lock()
	if b.bound == "" {
		b.usedUnbound = true
	}
	b.mu.Unlock()
	return b.Index.State(ctx)
}

// TestStore_BindsIndexBeforeUse checks that Open hands the memory's id to
// an index implementing memstore.MemoryBinder before reading its state.
func TestStore_BindsIndexBeforeUse(t *testing.T) {
	t.Parallel()
	var bi *binderIndex
	s := openStore(t, t.TempDir(), func(idx memstore.Index) memstore.Index {
		bi = &binderIndex{Index: idx}
		return bi
	})
	bi.mu.Lock()
	defer bi.mu.Unlock()
	if bi.bound != s.ID() || bi.usedUnbound {
		t.Errorf("bound to %q (store id %q), used before binding: %v", bi.bound, s.ID(), bi.usedUnbound)
	}
}

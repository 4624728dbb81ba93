package memstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestStore_SettleKeepsAnotherWritesJournal checks that settling a write
// removes the journal only while it is that write's: once another
// process has repaired the files and written its own journal, that one
// stays for its writer.
func TestStore_SettleKeepsAnotherWritesJournal(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	res, err := s.Create(ctx, "/memories/notes/a.md", "a\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	head := plumbing.NewHash(res.Commit)
	mine := unsettledWrite{commit: head, paths: []string{filepath.Join(s.Dir(), "notes", "a.md")}}
	for _, c := range []struct {
		name        string
		journalOf   plumbing.Hash
		wantJournal bool
	}{
		{"another write's journal stays", plumbing.NewHash("0123456789abcdef0123456789abcdef01234567"), true},
		{"its own journal goes", head, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s.mu.Lock()
			defer s.mu.Unlock()
			if err := s.lock.acquire(ctx); err != nil {
				t.Fatal(err)
			}
			defer s.lock.release()
			if err := os.WriteFile(s.journalPath(), []byte("commit "+c.journalOf.String()+"\nnotes/a.md\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s.unsettled = mine
			s.settle()
			_, err := os.Stat(s.journalPath())
			if got := err == nil; got != c.wantJournal {
				t.Errorf("journal present after settle: %v, want %v", got, c.wantJournal)
			}
			if !s.unsettled.commit.IsZero() {
				t.Error("the write is still unsettled after settle")
			}
			_ = os.Remove(s.journalPath())
		})
	}
}

package memstore

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestStore_ReadsWhileWorkingFilesLag has a write's working file go
// missing as when its update failed on a full disk, and another process
// hold the repository lock so the repair cannot run: reads of the file
// and its directory come from HEAD. Once the lock is free, the next read
// repairs the working file.
func TestStore_ReadsWhileWorkingFilesLag(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	s, err := Open(ctx, home, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	res, err := s.Create(ctx, "/memories/notes/a.md", "alpha\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	other, err := Open(ctx, home, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)

	// The write's update of its working file failed: the file is missing
	// and the journal names it.
	working := filepath.Join(s.Dir(), "notes", "a.md")
	if err := os.Remove(working); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.journalPath(), []byte("commit "+res.Commit+"\nnotes/a.md\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.workingStale.Store(true)
	if err := other.lock.acquire(ctx); err != nil {
		t.Fatal(err)
	}

	check := func(when string) {
		t.Helper()
		if got, _, err := s.Read(ctx, "/memories/notes/a.md"); err != nil || string(got) != "alpha\n" {
			t.Errorf("%s: Read = %q, %v; want alpha", when, got, err)
		}
		if got, err := s.View(ctx, "/memories/notes/a.md", nil); err != nil || !strings.Contains(got, "alpha") {
			t.Errorf("%s: View of the file = %q, %v", when, got, err)
		}
		if got, err := s.View(ctx, "/memories/notes", nil); err != nil || !strings.Contains(got, "a.md") {
			t.Errorf("%s: View of its directory = %q, %v", when, got, err)
		}
		entries, err := s.List(ctx, "/memories/notes")
		if err != nil || !slices.ContainsFunc(entries, func(e Entry) bool { return e.Name == "a.md" && e.Size == 6 }) {
			t.Errorf("%s: List = %+v, %v", when, entries, err)
		}
	}
	check("lock held elsewhere")
	if _, err := os.Stat(working); err == nil {
		t.Fatal("the working file came back while another process held the lock")
	}

	other.lock.release()
	check("lock free")
	if got, err := os.ReadFile(working); err != nil || string(got) != "alpha\n" {
		t.Errorf("working file after a read with the lock free: %q, %v; want it repaired", got, err)
	}
	if s.workingStale.Load() {
		t.Error("the store still reads from HEAD after the repair")
	}
}

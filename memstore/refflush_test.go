package memstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/selmem/selmem/memstore"
)

// TestWrite_RefFlushFails fails the flush of the branch's directory after
// a write's branch moved, as a disk error does. The write fails, saying
// whether it was taken back; either way the repository stays whole (HEAD
// names a commit whose objects are there), reads agree with HEAD, and the
// next write, once the disk works, leaves the working files in line.
func TestWrite_RefFlushFails(t *testing.T) {
	const p = "/memories/notes/b.md"
	tests := []struct {
		name string
		// block, when set, keeps the branch from being put back.
		block bool
		want  string // in the write's error
	}{
		{"taken back", false, "nothing was written"},
		{"cannot be taken back", true, "may be kept"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			home := t.TempDir()
			dir := filepath.Join(home, "memory")
			lock := filepath.Join(dir, ".git", "refs", "heads", "main.lock")
			var failing atomic.Bool
			fail := func(d string) error {
				if !failing.Load() || !strings.HasSuffix(d, filepath.Join("refs", "heads")) {
					return nil
				}
				failing.Store(false)
				if tt.block {
					if err := os.MkdirAll(filepath.Join(lock, "x"), 0o755); err != nil {
						t.Error(err)
					}
				}
				return syscall.EIO
			}
			s, err := openOnDisk(t, home, &fullDisk{}, &logBuffer{}, func(o *memstore.Options) { memstore.FailRefFlushes(o, fail) })
			if err != nil {
				t.Fatal(err)
			}
			mustCreate(t, s, "/memories/notes/a.md", "alpha\n")
			before := gitIn(t, dir, "rev-parse", "HEAD")

			failing.Store(true)
			_, err = s.Create(ctx, p, "bravo\n", nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Create with the flush failing: %v; want an error saying %q", err, tt.want)
			}
			after := gitIn(t, dir, "rev-parse", "HEAD")
			if moved := after != before; moved != tt.block {
				t.Errorf("HEAD %s -> %s; want moved: %v", before, after, tt.block)
			}
			if h, err := memstore.CheckRepository(ctx, home); err != nil || len(h.Problems) != 0 {
				t.Errorf("CheckRepository after the failed flush = %+v, %v; want no problem", h, err)
			}
			got, _, err := s.Read(ctx, p)
			switch {
			case tt.block && (err != nil || string(got) != "bravo\n"):
				t.Errorf("Read of the kept write = %q, %v; want bravo", got, err)
			case !tt.block && !errors.Is(err, memstore.ErrNotFound):
				t.Errorf("Read of the write taken back = %q, %v; want ErrNotFound", got, err)
			}

			if err := os.RemoveAll(lock); err != nil {
				t.Fatal(err)
			}
			mustCreate(t, s, "/memories/notes/c.md", "charlie\n")
			waitSettled(t, dir)
			if st := gitCmd(t, s, "status", "--porcelain", "--untracked-files=all"); st != "" {
				t.Errorf("working files differ from HEAD after the next write:\n%s", st)
			}
			if _, err := os.Stat(filepath.Join(dir, "notes", "b.md")); (err == nil) != tt.block {
				t.Errorf("working file b.md: %v; want present: %v", err, tt.block)
			}
		})
	}
}

package memstore_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/selmem/selmem/internal/gittest"
	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

// fullDisk fails the writes of a store's working files with ENOSPC while
// it is full.
type fullDisk struct{ full atomic.Bool }

func (d *fullDisk) fail(string) error {
	if d.full.Load() {
		return syscall.ENOSPC
	}
	return nil
}

// logBuffer collects a store's log; stores log from their own goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// openOnDisk opens the store at home, with the embedded index, writing its
// working files to disk and its log to logs; set, when not nil, changes
// the options first.
func openOnDisk(t *testing.T, home string, disk *fullDisk, logs *logBuffer, set func(*memstore.Options)) (*memstore.Store, error) {
	t.Helper()
	idx, err := sqliteindex.Open(filepath.Join(home, "index.db"), nil)
	if err != nil {
		t.Fatalf("open index: %v", err)
	}
	t.Cleanup(func() { idx.Close() })
	opts := &memstore.Options{Index: idx, Embedder: embedder.NewBuiltin(), Now: func() time.Time { return fixedNow },
		Logger: slog.New(slog.NewTextHandler(logs, nil))}
	memstore.FailWorkingWrites(opts, disk.fail)
	if set != nil {
		set(opts)
	}
	s, err := memstore.Open(context.Background(), home, opts)
	if err == nil {
		t.Cleanup(func() { s.Close(context.Background()) })
	}
	return s, err
}

// strand puts the working files of the memory at dir back to files and
// leaves the journal of the last commit, which changed paths: the state a
// process leaves that died, or found the disk full, after its commit and
// before the working files were updated.
func strand(t *testing.T, dir string, files map[string]string, paths []string) {
	t.Helper()
	for rel := range workingFiles(t, dir) {
		if _, ok := files[rel]; !ok {
			if err := os.Remove(filepath.Join(dir, rel)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	journal := "commit " + gitIn(t, dir, "rev-parse", "HEAD") + "\n" + strings.Join(paths, "\n") + "\n"
	if err := os.WriteFile(journalOf(dir), []byte(journal), 0o644); err != nil {
		t.Fatal(err)
	}
}

func journalOf(dir string) string { return filepath.Join(dir, ".git", "selmem-pending") }

// TestOpen_PendingRepairOnAFullDisk leaves a write committed but its
// working files not updated, and opens the memory while the disk is full:
// Open succeeds, reads and searches answer from HEAD, a write fails
// leaving nothing, doctor reports the pending repair, and once the disk
// has room the next read or write repairs the files.
func TestOpen_PendingRepairOnAFullDisk(t *testing.T) {
	const (
		a     = "/memories/workspaces/w/notes/a.md"
		notes = "/memories/workspaces/w/notes"
	)
	create := func(p, text string) func(*testing.T, *memstore.Store) {
		return func(t *testing.T, s *memstore.Store) { mustCreate(t, s, p, text) }
	}
	tests := []struct {
		name    string
		before  func(*testing.T, *memstore.Store) // writes whose working files are in place; nil for none
		last    func(*testing.T, *memstore.Store) // the write whose working files are not
		files   map[string]string                 // virtual path -> content at HEAD; "" for absent
		dir     string                            // a directory to list
		entries []string                          // what it lists
		query   string                            // a search that finds hit
		hit     string
	}{
		{
			name:  "new file",
			last:  create(a, "# Alpha\n\n- the alpha fact\n"),
			files: map[string]string{a: "# Alpha\n\n- the alpha fact\n"},
			dir:   notes, entries: []string{"a.md"},
			query: "alpha fact", hit: a,
		},
		{
			name:   "edited file",
			before: create(a, "# Alpha\n\n- the old fact\n"),
			last: func(t *testing.T, s *memstore.Store) {
				if _, err := s.StrReplace(context.Background(), a, "old fact", "bravo fact", nil); err != nil {
					t.Fatal(err)
				}
			},
			files: map[string]string{a: "# Alpha\n\n- the bravo fact\n"},
			dir:   notes, entries: []string{"a.md"},
			query: "bravo fact", hit: a,
		},
		{
			name:  "file at the top of the memory",
			last:  create("/memories/top.md", "# Top\n\n- the charlie fact\n"),
			files: map[string]string{"/memories/top.md": "# Top\n\n- the charlie fact\n"},
			dir:   "/memories", entries: []string{"top.md"},
			query: "charlie fact", hit: "/memories/top.md",
		},
		{
			name:   "renamed directory",
			before: create(notes+"/d/x.md", "# Delta\n\n- the delta fact\n"),
			last: func(t *testing.T, s *memstore.Store) {
				if _, err := s.Rename(context.Background(), notes+"/d", notes+"/e", nil); err != nil {
					t.Fatal(err)
				}
			},
			files: map[string]string{notes + "/e/x.md": "# Delta\n\n- the delta fact\n", notes + "/d/x.md": ""},
			dir:   notes, entries: []string{"e"},
			query: "delta fact", hit: notes + "/e/x.md",
		},
	}
	for _, tt := range tests {
		for _, repairBy := range []string{"read", "write"} {
			t.Run(tt.name+"/repaired by a "+repairBy, func(t *testing.T) {
				ctx := context.Background()
				home := t.TempDir()
				s, err := openPlain(t, home, nil)
				if err != nil {
					t.Fatal(err)
				}
				if tt.before != nil {
					tt.before(t, s)
				}
				waitSettled(t, s.Dir())
				old := workingFiles(t, s.Dir())
				tt.last(t, s)
				head, _ := s.Head()
				if err := s.Close(ctx); err != nil {
					t.Fatal(err)
				}
				dir := filepath.Join(home, "memory")
				paths := strings.Fields(gitIn(t, dir, "diff", "--name-only", "--no-renames", "HEAD~1", "HEAD"))
				strand(t, dir, old, paths)

				disk := &fullDisk{}
				disk.full.Store(true)
				var logs logBuffer
				s, err = openOnDisk(t, home, disk, &logs, nil)
				if err != nil {
					t.Fatalf("Open with a pending repair on a full disk: %v", err)
				}
				if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "reads come from HEAD") {
					t.Errorf("Open did not warn that reads come from HEAD; log:\n%s", logs.String())
				}
				journal, err := os.ReadFile(journalOf(dir))
				if err != nil {
					t.Fatalf("the journal is gone although the repair failed: %v", err)
				}
				checkReads := func(when string) {
					t.Helper()
					for p, want := range tt.files {
						got, _, err := s.Read(ctx, p)
						if want == "" {
							if !errors.Is(err, memstore.ErrNotFound) {
								t.Errorf("%s: Read(%s) = %q, %v; want ErrNotFound", when, p, got, err)
							}
							continue
						}
						if err != nil || string(got) != want {
							t.Errorf("%s: Read(%s) = %q, %v; want %q", when, p, got, err, want)
						}
						if v, err := s.View(ctx, p, nil); err != nil || !strings.Contains(v, strings.Split(want, "\n")[2]) {
							t.Errorf("%s: View(%s) = %q, %v", when, p, v, err)
						}
					}
					entries, err := s.List(ctx, tt.dir)
					names := []string{}
					for _, e := range entries {
						if e.Name != "after.md" { // the write that repaired
							names = append(names, e.Name)
						}
					}
					if err != nil || !slices.Equal(names, tt.entries) {
						t.Errorf("%s: List(%s) = %v, %v; want %v", when, tt.dir, names, err, tt.entries)
					}
					if v, err := s.View(ctx, tt.dir, nil); err != nil || !strings.Contains(v, tt.entries[0]) {
						t.Errorf("%s: View(%s) = %q, %v", when, tt.dir, v, err)
					}
					res, err := s.Search(ctx, memstore.SearchRequest{Query: tt.query})
					if err != nil || len(res.Hits) == 0 || res.Hits[0].Path != tt.hit {
						t.Errorf("%s: Search(%q) = %+v, %v; want %s first", when, tt.query, res.Hits, err, tt.hit)
					}
				}
				checkReads("disk full")
				if h, _ := s.Head(); h != head {
					t.Errorf("HEAD = %s, want the last write's %s", h, head)
				}

				// A write while the disk is full fails and leaves nothing.
				objects := gitIn(t, dir, "count-objects", "-v")
				const refused = "/memories/workspaces/w/notes/refused.md"
				if _, err := s.Create(ctx, refused, "# Refused\n\n- the echo fact\n", nil); !errors.Is(err, memstore.ErrUnavailable) {
					t.Errorf("Create on a full disk = %v, want ErrUnavailable", err)
				} else if msg := err.Error(); strings.Contains(msg, home) || !strings.Contains(msg, "nothing was written") {
					t.Errorf("Create on a full disk: error %q names a host path or does not say nothing was written", msg)
				}
				if h, _ := s.Head(); h != head {
					t.Errorf("HEAD moved to %s after a refused write", h)
				}
				if got := gitIn(t, dir, "count-objects", "-v"); got != objects {
					t.Errorf("objects changed after a refused write:\nbefore %s\nafter  %s", objects, got)
				}
				if got, err := os.ReadFile(journalOf(dir)); err != nil || !bytes.Equal(got, journal) {
					t.Errorf("journal after a refused write = %q, %v; want it kept as %q", got, err, journal)
				}
				if _, _, err := s.Read(ctx, refused); !errors.Is(err, memstore.ErrNotFound) {
					t.Errorf("Read of the refused file: %v, want ErrNotFound", err)
				}
				if res, _ := s.Search(ctx, memstore.SearchRequest{Query: "echo fact"}); slices.ContainsFunc(res.Hits, func(h memstore.Hit) bool { return h.Path == refused }) {
					t.Error("search finds the refused write")
				}

				h, err := memstore.CheckRepository(ctx, home)
				if err != nil || !h.Pending || len(h.Problems) != 0 || len(h.Unrepaired) == 0 ||
					!slices.ContainsFunc(paths, func(p string) bool { return slices.Contains(h.Unrepaired, "/memories/"+p) }) {
					t.Errorf("CheckRepository with the repair pending = %+v, %v; want unrepaired files among %v", h, err, paths)
				}

				// The disk has room again: the next read or write repairs.
				disk.full.Store(false)
				switch repairBy {
				case "read":
					if _, err := s.View(ctx, tt.dir, nil); err != nil {
						t.Fatal(err)
					}
					if _, err := os.Stat(journalOf(dir)); !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("the journal is left after a read with room on the disk: %v", err)
					}
				case "write":
					mustCreate(t, s, "/memories/after.md", "# After\n\n- the foxtrot fact\n")
					waitSettled(t, dir)
				}
				checkReads("repaired")
				if st := gitCmd(t, s, "status", "--porcelain", "--untracked-files=all"); st != "" {
					t.Errorf("working files differ from HEAD after the repair:\n%s", st)
				}
				for p, want := range tt.files {
					got, err := os.ReadFile(filepath.Join(dir, strings.TrimPrefix(p, "/memories/")))
					if want == "" && !errors.Is(err, fs.ErrNotExist) || want != "" && string(got) != want {
						t.Errorf("working file %s after the repair = %q, %v; want %q", p, got, err, want)
					}
				}
				if h, err := memstore.CheckRepository(ctx, home); err != nil || h.Pending || len(h.Problems) != 0 || len(h.Unrepaired) != 0 {
					t.Errorf("CheckRepository after the repair = %+v, %v; want no problem", h, err)
				}
			})
		}
	}
}

// TestOpen_PendingRepairOnAFullDiskWithDamagedBranch damages the branch
// of a memory whose last write awaits its working files' repair, on a full
// disk: a branch the journal recovers opens, reading from HEAD; one that
// cannot be trusted still fails Open, changing nothing.
func TestOpen_PendingRepairOnAFullDiskWithDamagedBranch(t *testing.T) {
	const a = "/memories/workspaces/w/notes/a.md"
	tests := []struct {
		name    string
		damage  func(t *testing.T, dir string)
		wantErr bool
	}{
		{"branch emptied", func(t *testing.T, dir string) {}, false},
		{"branch emptied and the last write's file gone", func(t *testing.T, dir string) {
			blob := gitIn(t, dir, "rev-parse", "HEAD:workspaces/w/notes/a.md")
			if err := os.Remove(filepath.Join(dir, ".git", "objects", blob[:2], blob[2:])); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			home := t.TempDir()
			s, err := openPlain(t, home, nil)
			if err != nil {
				t.Fatal(err)
			}
			mustCreate(t, s, "/memories/workspaces/w/notes/first.md", "first\n")
			waitSettled(t, s.Dir())
			old := workingFiles(t, s.Dir())
			mustCreate(t, s, a, "alpha\n")
			head, _ := s.Head()
			if err := s.Close(ctx); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(home, "memory")
			strand(t, dir, old, []string{"workspaces/w/notes/a.md"})
			tt.damage(t, dir)
			ref := filepath.Join(dir, ".git", "refs", "heads", "main")
			if err := os.WriteFile(ref, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			journal, _ := os.ReadFile(journalOf(dir))

			disk := &fullDisk{}
			disk.full.Store(true)
			var logs logBuffer
			s, err = openOnDisk(t, home, disk, &logs, nil)
			if tt.wantErr {
				if err == nil {
					t.Fatal("Open succeeded on a branch whose newest commit is incomplete")
				}
				if !strings.Contains(err.Error(), "Nothing was changed") {
					t.Errorf("Open error %q does not say that nothing was changed", err)
				}
				if data, _ := os.ReadFile(ref); len(data) != 0 {
					t.Errorf("refused Open rewrote the ref: %q", data)
				}
				if got, _ := os.ReadFile(journalOf(dir)); !bytes.Equal(got, journal) {
					t.Errorf("refused Open changed the journal to %q", got)
				}
				if got := workingFiles(t, dir); !maps.Equal(got, old) {
					t.Errorf("refused Open changed the working files to %v, want %v", got, old)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if got, _ := s.Head(); got != head {
				t.Errorf("HEAD after recovery = %s, want the journal's %s\nlog: %s", got, head, logs.String())
			}
			if got, _, err := s.Read(ctx, a); err != nil || string(got) != "alpha\n" {
				t.Errorf("Read(%s) = %q, %v; want alpha from HEAD", a, got, err)
			}
			disk.full.Store(false)
			mustCreate(t, s, "/memories/workspaces/w/notes/after.md", "after\n")
			waitSettled(t, dir)
			if got := workingFiles(t, dir)["workspaces/w/notes/a.md"]; got != "alpha\n" {
				t.Errorf("working file after the repair = %q, want alpha", got)
			}
		})
	}
}

// TestOpen_PendingRepairOnAFullDiskWithRemote opens a replica whose last
// write awaits its working files' repair, on a full disk, while the remote
// has moved on: Open serves the local copy, and the catch-up waits for the
// repair, so that the journal keeps naming the files to repair.
func TestOpen_PendingRepairOnAFullDiskWithRemote(t *testing.T) {
	ctx := context.Background()
	srv := gittest.NewServer(t)
	url := "file://" + srv.Dir
	homeA, homeB := t.TempDir(), t.TempDir()
	b := mustReplica(t, homeB, url, replicaOpts{})
	old := workingFiles(t, b.Dir())
	mustCreate(t, b, "/memories/notes/a.md", "alpha\n")
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	dirB := filepath.Join(homeB, "memory")
	strand(t, dirB, old, []string{"notes/a.md"})
	a := mustReplica(t, homeA, url, replicaOpts{})
	mustCreate(t, a, "/memories/notes/z.md", "zulu\n")

	disk := &fullDisk{}
	disk.full.Store(true)
	var logs logBuffer
	b, err := openOnDisk(t, homeB, disk, &logs, func(o *memstore.Options) {
		o.Durability = memstore.DurabilityOS
		o.Remote = &memstore.Remote{URL: url}
	})
	if err != nil {
		t.Fatalf("Open with a pending repair on a full disk: %v", err)
	}
	if got, _, err := b.Read(ctx, "/memories/notes/a.md"); err != nil || string(got) != "alpha\n" {
		t.Errorf("Read(a.md) on a full disk = %q, %v; want alpha from HEAD", got, err)
	}
	disk.full.Store(false)
	if _, err := b.Sync(ctx); err != nil {
		t.Fatalf("Sync once the disk has room: %v", err)
	}
	for p, want := range map[string]string{"notes/a.md": "alpha\n", "notes/z.md": "zulu\n"} {
		if got, _, err := b.Read(ctx, "/memories/"+p); err != nil || string(got) != want {
			t.Errorf("Read(%s) after Sync = %q, %v; want %q", p, got, err, want)
		}
		if got, err := os.ReadFile(filepath.Join(dirB, p)); err != nil || string(got) != want {
			t.Errorf("working file %s after Sync = %q, %v; want %q", p, got, err, want)
		}
	}
	if _, err := os.Stat(journalOf(dirB)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the journal is left after the repair: %v", err)
	}
}

// TestOpen_CachesThatCannotBeWritten makes a file Open rewrites from HEAD
// impossible to write (a directory where it goes, as in
// TestStore_FailedWriteLeavesNothing): Open succeeds, logging it, and a
// later call writes it once it can.
func TestOpen_CachesThatCannotBeWritten(t *testing.T) {
	tests := []struct {
		name string
		file string // in .git: where a directory stands in the way
		prep func(t *testing.T, gitDir string)
		// after checks the file is written once nothing is in the way.
		after func(t *testing.T, s *memstore.Store, id string)
	}{
		{
			name: ".git/index", file: "selmem-index.tmp",
			prep: func(t *testing.T, gitDir string) {
				// .git/index is marked stale, as by a process that died
				// before it flushed.
				if err := os.WriteFile(filepath.Join(gitDir, "selmem-unstaged"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			after: func(t *testing.T, s *memstore.Store, _ string) {
				if err := s.Flush(); err != nil {
					t.Fatalf("Flush: %v", err)
				}
				if _, err := os.Stat(filepath.Join(s.Dir(), ".git", "selmem-unstaged")); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf(".git/index is still marked stale after Flush: %v", err)
				}
			},
		},
		{
			name: "identity cache", file: "selmem-memory-id",
			after: func(t *testing.T, s *memstore.Store, id string) {
				home := filepath.Dir(s.Dir())
				if err := s.Close(context.Background()); err != nil {
					t.Fatal(err)
				}
				s2, err := openPlain(t, home, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got, err := os.ReadFile(filepath.Join(s2.Dir(), ".git", "selmem-memory-id")); err != nil || strings.TrimSpace(string(got)) != id {
					t.Errorf("identity cache after reopening = %q, %v; want %s", got, err, id)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			home := t.TempDir()
			s, err := openPlain(t, home, nil)
			if err != nil {
				t.Fatal(err)
			}
			mustCreate(t, s, "/memories/notes/a.md", "alpha\n")
			id := s.ID()
			if err := s.Close(ctx); err != nil {
				t.Fatal(err)
			}
			gitDir := filepath.Join(home, "memory", ".git")
			if tt.prep != nil {
				tt.prep(t, gitDir)
			}
			block := filepath.Join(gitDir, tt.file)
			if err := os.RemoveAll(block); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(block, "x"), 0o755); err != nil {
				t.Fatal(err)
			}
			var logs logBuffer
			s, err = openOnDisk(t, home, &fullDisk{}, &logs, nil)
			if err != nil {
				t.Fatalf("Open with %s unwritable: %v", tt.name, err)
			}
			if !strings.Contains(logs.String(), "level=WARN") {
				t.Errorf("Open did not warn; log:\n%s", logs.String())
			}
			if s.ID() != id {
				t.Errorf("ID = %q, want %q", s.ID(), id)
			}
			if got, _, err := s.Read(ctx, "/memories/notes/a.md"); err != nil || string(got) != "alpha\n" {
				t.Errorf("Read = %q, %v", got, err)
			}
			mustCreate(t, s, "/memories/notes/b.md", "bravo\n")
			if err := os.RemoveAll(block); err != nil {
				t.Fatal(err)
			}
			tt.after(t, s, id)
		})
	}
}

// TestCheckRepository_PendingRepair checks that doctor names the files of
// a write journal whose working copies differ from HEAD, and none while
// they match (a write settling).
func TestCheckRepository_PendingRepair(t *testing.T) {
	const rel = "notes/a.md"
	tests := []struct {
		name       string
		working    string // the working file's content; "" removes it
		unrepaired bool
	}{
		{"files match HEAD (a write settling)", "alpha\n", false},
		{"file missing", "", true},
		{"file out of date", "older\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			home := t.TempDir()
			s, err := openPlain(t, home, nil)
			if err != nil {
				t.Fatal(err)
			}
			mustCreate(t, s, "/memories/"+rel, "alpha\n")
			if err := s.Close(ctx); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(home, "memory")
			files := workingFiles(t, dir)
			delete(files, rel)
			if tt.working != "" {
				files[rel] = tt.working
			}
			strand(t, dir, files, []string{rel})
			h, err := memstore.CheckRepository(ctx, home)
			if err != nil {
				t.Fatal(err)
			}
			if !h.Pending {
				t.Error("Pending = false with a journal left")
			}
			if len(h.Problems) != 0 {
				t.Errorf("Problems = %q, want none", h.Problems)
			}
			want := []string(nil)
			if tt.unrepaired {
				want = []string{path.Join("/memories", rel)}
			}
			if !slices.Equal(h.Unrepaired, want) {
				t.Errorf("Unrepaired = %q, want %q", h.Unrepaired, want)
			}
		})
	}
}

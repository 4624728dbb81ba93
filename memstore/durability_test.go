package memstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

// openPlain opens the store at home without an index.
func openPlain(t testing.TB, home string, opts *memstore.Options) (*memstore.Store, error) {
	t.Helper()
	o := memstore.Options{Now: func() time.Time { return fixedNow }}
	if opts != nil {
		o = *opts
	}
	s, err := memstore.Open(context.Background(), home, &o)
	if err == nil {
		t.Cleanup(func() { s.Close(context.Background()) })
	}
	return s, err
}

// gitIn runs git in dir and returns its trimmed output.
func gitIn(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestStore_ProcessesShareOneHome opens one home several times, as several
// processes do (each Store has its own repository lock descriptor, object
// cache and index connection), and writes through all of them at once:
// every acknowledged write is in HEAD, nothing else is, and the repository
// and work tree are consistent.
func TestStore_ProcessesShareOneHome(t *testing.T) {
	home := t.TempDir()
	const stores, writes = 3, 25
	var all []*memstore.Store
	for range stores {
		all = append(all, openStore(t, home, nil))
	}
	ctx := context.Background()
	var (
		mu    sync.Mutex
		acked = map[string]string{} // path -> content
	)
	var wg sync.WaitGroup
	for i, s := range all {
		wg.Go(func() {
			for w := range writes {
				p := fmt.Sprintf("/memories/workspaces/multi/notes/s%d-%02d.md", i, w)
				text := fmt.Sprintf("# Note\n\n- store %d write %d token%dx%d\n", i, w, i, w)
				if _, err := s.Create(ctx, p, text, nil); err != nil {
					t.Errorf("create %s: %v", p, err)
					continue
				}
				mu.Lock()
				acked[p] = text
				mu.Unlock()
				if w%5 == 4 { // an edit of a file another store wrote
					other := fmt.Sprintf("/memories/workspaces/multi/notes/s%d-%02d.md", (i+1)%stores, w-1)
					if _, err := s.StrReplace(ctx, other, "# Note", "# Edited", nil); err == nil {
						mu.Lock()
						acked[other] = strings.Replace(acked[other], "# Note", "# Edited", 1)
						mu.Unlock()
					} else if !errors.Is(err, memstore.ErrNotFound) {
						t.Errorf("str_replace %s: %v", other, err)
					}
				}
			}
		})
	}
	wg.Wait()
	for _, s := range all {
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	dir := all[0].Dir()
	files := gitIn(t, dir, "ls-tree", "-r", "--name-only", "HEAD")
	if got, want := len(strings.Fields(files)), len(acked); got != want {
		t.Errorf("HEAD holds %d files, %d writes were acknowledged", got, want)
	}
	for p, text := range acked {
		rel := strings.TrimPrefix(p, "/memories/")
		if got := gitIn(t, dir, "show", "HEAD:"+rel) + "\n"; got != text {
			t.Errorf("HEAD:%s = %q, want %q", rel, got, text)
		}
	}
	if out, err := exec.Command("git", "-C", dir, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
	if status := gitIn(t, dir, "status", "--porcelain"); status != "" {
		t.Errorf("work tree differs from HEAD:\n%s", status)
	}
	// A store opened afterwards finds the last write of every store.
	fresh := openStore(t, home, nil)
	for i := range stores {
		if got := searchPaths(t, fresh, fmt.Sprintf("token%dx%d", i, writes-1)); len(got) == 0 {
			t.Errorf("search does not find store %d's last write", i)
		}
	}
}

// damage describes a broken branch and how Open must answer it.
type damage struct {
	name    string
	break_  func(t *testing.T, gitDir string)
	recover bool // Open recovers the last commit; false: Open refuses
}

// TestOpen_RecoversDamagedBranch breaks the branch of a repository with
// history in the ways a crash or an older selmem could, and checks that Open
// never starts over with a new root commit: it recovers the newest commit,
// or refuses and changes nothing.
func TestOpen_RecoversDamagedBranch(t *testing.T) {
	ref := func(gitDir string) string { return filepath.Join(gitDir, "refs", "heads", "main") }
	write := func(p, data string) func(*testing.T, string) {
		return func(t *testing.T, gitDir string) {
			if err := os.WriteFile(filepath.Join(gitDir, p), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	both := func(fs ...func(*testing.T, string)) func(*testing.T, string) {
		return func(t *testing.T, gitDir string) {
			for _, f := range fs {
				f(t, gitDir)
			}
		}
	}
	noReflog := func(t *testing.T, gitDir string) {
		if err := os.RemoveAll(filepath.Join(gitDir, "logs")); err != nil {
			t.Fatal(err)
		}
	}
	tests := []damage{
		{"empty ref", write("refs/heads/main", ""), true},
		{"garbage ref", write("refs/heads/main", "not a hash\n"), true},
		{"missing ref", func(t *testing.T, gitDir string) { os.Remove(ref(gitDir)) }, true},
		{"ref names a missing commit", write("refs/heads/main", strings.Repeat("ab", 20)+"\n"), true},
		{"empty ref and no reflog (older selmem)", both(write("refs/heads/main", ""), noReflog), true},
		{"empty HEAD", write("HEAD", ""), true},
		{"stale ref lock", write("refs/heads/main.lock", strings.Repeat("cd", 20)+"\n"), true},
		{"newest commit's file gone", both(func(t *testing.T, gitDir string) {
			// Remove the blob only the last commit names.
			blob := gitIn(t, filepath.Dir(gitDir), "rev-parse", "HEAD:workspaces/w/notes/n4.md")
			if err := os.Remove(filepath.Join(gitDir, "objects", blob[:2], blob[2:])); err != nil {
				t.Fatal(err)
			}
		}, write("refs/heads/main", "")), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			s, err := openPlain(t, home, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 5 {
				mustCreate(t, s, fmt.Sprintf("/memories/workspaces/w/notes/n%d.md", i), fmt.Sprintf("note %d\n", i))
			}
			head, _ := s.Head()
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			gitDir := filepath.Join(home, "memory", ".git")
			tt.break_(t, gitDir)
			var logs bytes.Buffer
			s2, err := openPlain(t, home, &memstore.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if !tt.recover {
				if err == nil {
					t.Fatal("Open succeeded on a repository whose newest commit is incomplete")
				}
				if !strings.Contains(err.Error(), "Nothing was changed") {
					t.Errorf("Open error %q does not say that nothing was changed", err)
				}
				if data, _ := os.ReadFile(ref(gitDir)); len(data) != 0 {
					t.Errorf("refused Open rewrote the ref: %q", data)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			got, _ := s2.Head()
			if got != head {
				t.Errorf("HEAD after recovery = %s, want the last acknowledged commit %s\nlog: %s", got, head, logs.String())
			}
			if n := gitIn(t, s2.Dir(), "rev-list", "--count", "HEAD"); n != "6" {
				t.Errorf("history has %s commits, want 6", n)
			}
			if _, err := s2.Create(context.Background(), "/memories/workspaces/w/notes/after.md", "after\n", nil); err != nil {
				t.Errorf("write after recovery: %v", err)
			}
			if out, err := exec.Command("git", "-C", s2.Dir(), "fsck", "--strict").CombinedOutput(); err != nil {
				t.Errorf("git fsck: %v\n%s", err, out)
			}
		})
	}
}

// TestStore_RefFileIsNeverPartial checks the branch is moved by git's
// lockfile protocol: no .lock is left, the ref holds exactly one hash and a
// newline, and every move is in the reflog git reads.
func TestStore_RefFileIsNeverPartial(t *testing.T) {
	s, err := openPlain(t, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		mustCreate(t, s, fmt.Sprintf("/memories/notes/n%d.md", i), "x\n")
	}
	refs := filepath.Join(s.Dir(), ".git", "refs", "heads")
	data, err := os.ReadFile(filepath.Join(refs, "main"))
	if err != nil {
		t.Fatal(err)
	}
	head, _ := s.Head()
	if got, want := string(data), head+"\n"; got != want {
		t.Errorf("ref file = %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(refs, "main.lock")); !os.IsNotExist(err) {
		t.Errorf("main.lock left behind: %v", err)
	}
	if got := gitIn(t, s.Dir(), "reflog", "--format=%H", "main"); len(strings.Fields(got)) != 4 {
		t.Errorf("git reflog lists %d moves, want 4:\n%s", len(strings.Fields(got)), got)
	}
}

// TestStore_FailedWriteLeavesNothing makes the branch impossible to move
// and checks the write fails leaving no commit, object, journal or file.
func TestStore_FailedWriteLeavesNothing(t *testing.T) {
	s, err := openPlain(t, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "/memories/notes/a.md", "a\n")
	objects := gitIn(t, s.Dir(), "count-objects", "-v")
	// A directory where the ref's lock file goes cannot be replaced.
	lock := filepath.Join(s.Dir(), ".git", "refs", "heads", "main.lock")
	if err := os.MkdirAll(filepath.Join(lock, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The temporary file of an object whose writing failed (a full disk).
	tmp := filepath.Join(s.Dir(), ".git", "objects", "pack", "tmp_obj_1643959642")
	if err := os.WriteFile(tmp, []byte("part of an object"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(context.Background(), "/memories/notes/b.md", "uniquefailedmarker\n", nil); err == nil {
		t.Fatal("write succeeded although the branch cannot be moved")
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Error("an unfinished object's temporary file is left after a failed write")
	}
	if err := os.RemoveAll(lock); err != nil {
		t.Fatal(err)
	}
	if got := gitIn(t, s.Dir(), "count-objects", "-v"); got != objects {
		t.Errorf("objects changed after a failed write:\nbefore %s\nafter  %s", objects, got)
	}
	for _, p := range []string{"notes/b.md", ".git/selmem-pending"} {
		if _, err := os.Stat(filepath.Join(s.Dir(), p)); !os.IsNotExist(err) {
			t.Errorf("%s exists after a failed write", p)
		}
	}
	if _, err := s.Create(context.Background(), "/memories/notes/b.md", "b\n", nil); err != nil {
		t.Errorf("write after the failure: %v", err)
	}
}

// TestOpen_RemovesUnfinishedObjects leaves the temporary file of an object
// as a writer killed while writing it would: the next Open removes it.
func TestOpen_RemovesUnfinishedObjects(t *testing.T) {
	home := t.TempDir()
	s, err := openPlain(t, home, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "/memories/notes/a.md", "a\n")
	tmp := filepath.Join(s.Dir(), ".git", "objects", "pack", "tmp_obj_657170517")
	if err := os.WriteFile(tmp, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := openPlain(t, home, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Error("Open left an unfinished object's temporary file")
	}
}

// TestStore_InterruptedWriteIsRepairedByTheNextWriter leaves a journal as a
// writer killed between moving the branch and writing its files would, and
// checks the next writer (not only Open) brings the work tree back to HEAD.
func TestStore_InterruptedWriteIsRepairedByTheNextWriter(t *testing.T) {
	home := t.TempDir()
	a, err := openPlain(t, home, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := openPlain(t, home, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, a, "/memories/notes/a.md", "a\n")
	// a's own write settles first: a live store removes its journal once
	// the files are flushed, which must not race the leftovers below.
	waitSettled(t, a.Dir())
	// The process "dies" after its commit: the file is missing, the
	// journal names it.
	if err := os.Remove(filepath.Join(a.Dir(), "notes", "a.md")); err != nil {
		t.Fatal(err)
	}
	head, _ := a.Head()
	journal := "commit " + head + "\nnotes/a.md\n"
	if err := os.WriteFile(filepath.Join(a.Dir(), ".git", "selmem-pending"), []byte(journal), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(a.Dir(), "notes", ".selmem-tmp-12345")
	if err := os.WriteFile(tmp, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, b, "/memories/notes/b.md", "b\n")
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the dying writer's temporary file is left: %v", err)
	}
	if got, _, err := b.Read(context.Background(), "/memories/notes/a.md"); err != nil || string(got) != "a\n" {
		t.Errorf("after the next write, a.md = %q, %v; want it restored", got, err)
	}
	waitSettled(t, a.Dir())
}

// waitSettled waits until the memory at dir has no write journal: the
// last write's working files are flushed and nothing is left to repair.
func waitSettled(t *testing.T, dir string) {
	t.Helper()
	journal := filepath.Join(dir, ".git", "selmem-pending")
	deadline := time.Now().Add(10 * time.Second)
	for _, err := os.Stat(journal); err == nil; _, err = os.Stat(journal) {
		if time.Now().After(deadline) {
			t.Fatal("a write journal is left behind: the last write's working files were never settled")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStore_CaseCollisions refuses names that differ only in case from an
// existing name in the same directory.
func TestStore_CaseCollisions(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		op   func(s *memstore.Store) error
		ok   bool
	}{
		{"same file name in other case", func(s *memstore.Store) error {
			_, err := s.Create(ctx, "/memories/workspaces/w/notes/X.MD", "x\n", nil)
			return err
		}, false},
		{"directory in other case", func(s *memstore.Store) error {
			_, err := s.Create(ctx, "/memories/workspaces/W/notes/y.md", "y\n", nil)
			return err
		}, false},
		{"rename onto other case of another file", func(s *memstore.Store) error {
			_, err := s.Rename(ctx, "/memories/workspaces/w/notes/z.md", "/memories/workspaces/w/notes/X.md", nil)
			return err
		}, false},
		{"put two names differing in case", func(s *memstore.Store) error {
			_, err := s.Put(ctx, map[string]string{"/memories/workspaces/v/a.md": "a\n", "/memories/workspaces/v/A.md": "A\n"}, nil)
			return err
		}, false},
		{"rename changing only the case", func(s *memstore.Store) error {
			_, err := s.Rename(ctx, "/memories/workspaces/w/notes/x.md", "/memories/workspaces/w/notes/X.md", nil)
			return err
		}, true},
		{"distinct name", func(s *memstore.Store) error {
			_, err := s.Create(ctx, "/memories/workspaces/w/notes/x2.md", "x\n", nil)
			return err
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := openPlain(t, t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			mustCreate(t, s, "/memories/workspaces/w/notes/x.md", "x\n")
			mustCreate(t, s, "/memories/workspaces/w/notes/z.md", "z\n")
			before, _ := s.Head()
			err = tt.op(s)
			if tt.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, memstore.ErrRejected) || !strings.Contains(err.Error(), "only in letter case") {
				t.Fatalf("got %v, want a case-collision rejection", err)
			}
			if after, _ := s.Head(); after != before {
				t.Error("a refused write made a commit")
			}
		})
	}
}

// TestStore_LookAlikeCollisions refuses a new name that reads as an
// existing sibling, or as another new name of the same write, in letter
// case, fullwidth or Cyrillic and Greek look-alike letters, and keeps
// names written in those scripts creatable.
func TestStore_LookAlikeCollisions(t *testing.T) {
	ctx := context.Background()
	create := func(p string) func(s *memstore.Store) error {
		return func(s *memstore.Store) error {
			_, err := s.Create(ctx, p, "# T\n", nil)
			return err
		}
	}
	put := func(ps ...string) func(s *memstore.Store) error {
		return func(s *memstore.Store) error {
			files := map[string]string{}
			for _, p := range ps {
				files[p] = "# T\n"
			}
			_, err := s.Put(ctx, files, nil)
			return err
		}
	}
	rename := func(from, to string) func(s *memstore.Store) error {
		return func(s *memstore.Store) error {
			_, err := s.Rename(ctx, from, to, nil)
			return err
		}
	}
	const ws = "/memories/workspaces/"
	tests := []struct {
		name  string
		op    func(s *memstore.Store) error
		other string // the existing path a refusal names; "" when accepted
	}{
		{"case only", create(ws + "SALES/task.md"), ws + "sales"},
		{"fullwidth", create(ws + "\uff53\uff41\uff4c\uff45\uff53/task.md"), ws + "sales"},
		{"fullwidth capitals", create(ws + "\uff33\uff21\uff2c\uff25\uff33/task.md"), ws + "sales"},
		{"mathematical bold", create(ws + "\U0001d42c\U0001d41a\U0001d425\U0001d41e\U0001d42c/task.md"), ws + "sales"},
		{"cyrillic", create(ws + "\u0455\u0430l\u0435\u0455/task.md"), ws + "sales"},                                                                               // ѕ а е ѕ, Latin l
		{"cyrillic only", create(ws + "\u0455\u0430\u04cf\u0435\u0455/task.md"), ws + "sales"},                                                                     // with palochka for l
		{"cyrillic capitals", create(ws + "\u0405\u0410L\u0415\u0405/task.md"), ws + "sales"},                                                                      // Ѕ А Е Ѕ
		{"greek", create(ws + "s\u03b1l\u03b5s/task.md"), ws + "sales"},                                                                                            // α ε
		{"greek capitals", create(ws + "\u039d\u039f\u03a4\u0395S/task.md"), ws + "notes"},                                                                         // Ν Ο Τ Ε
		{"mixed case and scripts", create(ws + "S\u0430\uff4c\u03b5s/task.md"), ws + "sales"},                                                                      // Cyrillic а, fullwidth l, Greek ε
		{"file name", create(ws + "sales/t\u0430sk.md"), ws + "sales/task.md"},                                                                                     // Cyrillic а
		{"latin letter in a cyrillic name", create(ws + "\u043f\u0440o\u0434\u0430\u0436\u0438/task.md"), ws + "\u043f\u0440\u043e\u0434\u0430\u0436\u0438"},       // прoдажи, Latin o
		{"case of a cyrillic name", create(ws + "\u041f\u0420\u041e\u0414\u0410\u0416\u0418/task.md"), ws + "\u043f\u0440\u043e\u0434\u0430\u0436\u0438"},          // ПРОДАЖИ
		{"case of a greek name", create(ws + "\u03a0\u03a9\u039b\u0389\u03a3\u0395\u0399\u03a3/task.md"), ws + "\u03c0\u03c9\u03bb\u03ae\u03c3\u03b5\u03b9\u03c2"}, // ΠΩΛΉΣΕΙΣ, final sigma
		{"two new names in one write", put(ws+"team/a.md", ws+"\uff54\uff45\uff41\uff4d/b.md"), "-"},
		{"two new file names in one write", put(ws+"sales/a.md", ws+"sales/\u0430.md"), "-"}, // Cyrillic а
		{"rename onto a look-alike of another file", rename(ws+"sales/notes.md", ws+"sales/t\u0430sk.md"), ws + "sales/task.md"},
		{"rename a directory onto a look-alike", rename(ws+"\u043f\u0440\u043e\u0434\u0430\u0436\u0438", ws+"\u0455\u0430l\u0435\u0455"), ws + "sales"},

		{"cyrillic name", create(ws + "\u043c\u0430\u0440\u043a\u0435\u0442\u0438\u043d\u0433/task.md"), ""},                             // маркетинг
		{"greek name", create(ws + "\u03bb\u03bf\u03b3\u03b9\u03c3\u03c4\u03b9\u03ba\u03ae/task.md"), ""},                                // λογιστική
		{"two cyrillic names in one write", put(ws+"\u0441\u043a\u043b\u0430\u0434/a.md", ws+"\u043a\u0430\u0434\u0440\u044b/b.md"), ""}, // склад, кадры
		{"cyrillic look-alikes of nothing", create(ws + "\u0441\u043e\u0440/task.md"), ""},                                               // сор
		{"fullwidth with no look-alike sibling", create(ws + "\uff4d\uff41\uff52\uff4b\uff45\uff54/task.md"), ""},
		{"fullwidth digits", create(ws + "sales/\uff12\uff10\uff12\uff14\u5e74.md"), ""}, // ２０２４年
		{"accent", create(ws + "s\u00e1les/task.md"), ""},
		{"rename onto a look-alike of itself", rename(ws+"sales/notes.md", ws+"sales/n\u043etes.md"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := openPlain(t, t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Put(ctx, map[string]string{
				ws + "sales/task.md":  "# T\n",
				ws + "sales/notes.md": "# N\n",
				ws + "notes/task.md":  "# T\n",
				ws + "\u043f\u0440\u043e\u0434\u0430\u0436\u0438/task.md":       "# T\n", // продажи
				ws + "\u03c0\u03c9\u03bb\u03ae\u03c3\u03b5\u03b9\u03c2/task.md": "# T\n", // πωλήσεις
			}, nil); err != nil {
				t.Fatal(err)
			}
			before, _ := s.Head()
			err = tt.op(s)
			if tt.other == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, memstore.ErrRejected) || !strings.Contains(err.Error(), "only in letter case or look-alike characters") {
				t.Fatalf("got %v, want a look-alike rejection", err)
			}
			if tt.other != "-" && !strings.Contains(err.Error(), "the existing "+tt.other+" ") {
				t.Errorf("got %v, want it to name %s", err, tt.other)
			}
			if after, _ := s.Head(); after != before {
				t.Error("a refused write made a commit")
			}
		})
	}
}

// TestStore_LookAlikePairFromBefore keeps both names of a look-alike pair
// that predates the check writable: only a new name is refused.
func TestStore_LookAlikePairFromBefore(t *testing.T) {
	s, err := openPlain(t, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "/memories/workspaces/sales/task.md", "# T\n")
	full := "\uff53\uff41\uff4c\uff45\uff53" // ｓａｌｅｓ
	if err := os.MkdirAll(filepath.Join(s.Dir(), "workspaces", full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir(), "workspaces", full, "task.md"), []byte("# T\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, s, "add", "-A")
	gitCmd(t, s, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "-m", "a pair from before the check")
	for _, p := range []string{"/memories/workspaces/sales/more.md", "/memories/workspaces/" + full + "/more.md"} {
		if _, err := s.Create(context.Background(), p, "# More\n", nil); err != nil {
			t.Errorf("Create(%s): %v", p, err)
		}
	}
	_, err = s.Create(context.Background(), "/memories/workspaces/SALES/task.md", "# T\n", nil)
	if !errors.Is(err, memstore.ErrRejected) {
		t.Errorf("a third name of the pair: %v, want ErrRejected", err)
	}
}

// TestStore_PathBelowAFile answers a path that continues below a file with
// what is wrong, not a retry, and logs no host path.
func TestStore_PathBelowAFile(t *testing.T) {
	home := t.TempDir()
	var logs bytes.Buffer
	s, err := openPlain(t, home, &memstore.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "/memories/workspaces/w/task.md", "# Task\n")
	ops := map[string]func() error{
		"create": func() error {
			_, err := s.Create(context.Background(), "/memories/workspaces/w/task.md/x.md", "x\n", nil)
			return err
		},
		"view": func() error {
			_, err := s.View(context.Background(), "/memories/workspaces/w/task.md/sub/y.md", nil)
			return err
		},
	}
	for name, op := range ops {
		err := op()
		if err == nil || !strings.Contains(err.Error(), "is below /memories/workspaces/w/task.md, which is a file") {
			t.Errorf("%s: got %v, want the path-below-a-file error", name, err)
		}
		if strings.Contains(err.Error(), "Retry") {
			t.Errorf("%s: error asks to retry: %v", name, err)
		}
	}
	if strings.Contains(logs.String(), home) {
		t.Errorf("log names the host path:\n%s", logs.String())
	}
}

// BenchmarkStore_WriteDurability reports the latency of one create in a
// memory of 10,000 files with each durability level, in the same process.
func BenchmarkStore_WriteDurability(b *testing.B) {
	for _, d := range []memstore.Durability{memstore.DurabilityOS, memstore.DurabilityFsync} {
		b.Run(string(d), func(b *testing.B) {
			home := b.TempDir()
			seedFiles(b, home, 10_000)
			s, err := memstore.Open(context.Background(), home, &memstore.Options{Durability: d})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close(context.Background())
			var lat latencies
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				if _, err := s.Create(context.Background(), fmt.Sprintf("/memories/workspaces/ws042/notes/new-%06d.md", i), noteText(i), nil); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			lat.report(b)
		})
	}
}

// TestStore_WorkingFilesSettle writes through one store, and through two
// stores on one home in turns, each write's working files flushed after
// the write returns: the journal goes once they are, and the work tree
// ends equal to HEAD, with no journal left.
func TestStore_WorkingFilesSettle(t *testing.T) {
	for _, stores := range []int{1, 2} {
		t.Run(fmt.Sprintf("stores=%d", stores), func(t *testing.T) {
			home := t.TempDir()
			var all []*memstore.Store
			for range stores {
				s, err := openPlain(t, home, nil)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, s)
			}
			ctx := context.Background()
			for i := range 12 {
				s := all[i%stores]
				p := fmt.Sprintf("/memories/notes/n%02d.md", i%5)
				if i < 5 {
					mustCreate(t, s, p, fmt.Sprintf("v%d\n", i))
				} else if i%4 == 3 {
					if _, err := s.Delete(ctx, p, nil); err != nil && !errors.Is(err, memstore.ErrNotFound) {
						t.Fatal(err)
					}
				} else if _, err := s.Put(ctx, map[string]string{p: fmt.Sprintf("v%d\n", i)}, nil); err != nil {
					t.Fatal(err)
				}
			}
			waitSettled(t, all[0].Dir())
			for _, s := range all {
				if err := s.Close(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if got := gitIn(t, all[0].Dir(), "status", "--porcelain"); got != "" {
				t.Errorf("the work tree differs from HEAD:\n%s", got)
			}
		})
	}
}

// TestStore_IndexEmptiedByAnotherProcess has another process start
// rebuilding the index a store uses (a reindex, killed once it emptied the
// index) and checks that the store notices on its next search or write:
// it rebuilds instead of taking the index for current, so every file at
// HEAD is found again, from it and from a store opened afterwards.
func TestStore_IndexEmptiedByAnotherProcess(t *testing.T) {
	for _, next := range []string{"search", "write"} {
		t.Run(next, func(t *testing.T) {
			ctx := context.Background()
			home := t.TempDir()
			s := openStore(t, home, nil)
			for i := range 3 {
				mustCreate(t, s, fmt.Sprintf("/memories/workspaces/w/notes/n%d.md", i), fmt.Sprintf("# Note\n\n- marker%d\n", i))
			}
			if got := searchPaths(t, s, "marker0"); !slices.Contains(got, "/memories/workspaces/w/notes/n0.md") {
				t.Fatalf("before the interruption, search finds %v", got)
			}

			// The other process's rebuild: it empties the index, then dies.
			other, err := sqliteindex.Open(filepath.Join(home, "index.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			emb := embedder.NewBuiltin()
			if err := other.Reset(ctx, memstore.IndexState{Embedder: emb.ID(), Dim: emb.Dim()}); err != nil {
				t.Fatal(err)
			}
			other.Close()

			files := 3
			if next == "write" {
				mustCreate(t, s, "/memories/workspaces/w/notes/n3.md", "# Note\n\n- marker3\n")
				files++
			}
			// The store first, then one opened afterwards (Open reconciles).
			for _, open := range []func() *memstore.Store{
				func() *memstore.Store { return s },
				func() *memstore.Store { return openStore(t, home, nil) },
			} {
				st := open()
				for i := range files {
					p := fmt.Sprintf("/memories/workspaces/w/notes/n%d.md", i)
					if got := searchPaths(t, st, fmt.Sprintf("marker%d", i)); !slices.Contains(got, p) {
						t.Errorf("after the %s, search finds %v, not %s", next, got, p)
					}
				}
			}
		})
	}
}

package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/selmem/selmem/internal/gittest"
	"github.com/selmem/selmem/memstore"
)

// ack is an acknowledged write: the commit that recorded it, the path and
// a word its content carries.
type ack struct {
	commit, path, word string
}

// TestRemote_ReplicasRace runs three replicas of one memory (two with an
// embedded index, one without) and many writers on each, writing to
// distinct and overlapping paths at once. Every acknowledged write must be
// in the remote's history with its content, the overlapping operations
// must fail honestly when their precondition is gone after a re-apply, and
// after a Sync the replicas agree on HEAD, files and what their indexes find.
func TestRemote_ReplicasRace(t *testing.T) {
	ctx := context.Background()
	srv := gittest.NewServer(t)
	homes := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	stores := []*memstore.Store{
		mustReplica(t, homes[0], srv.URL, replicaOpts{index: true}),
		mustReplica(t, homes[1], srv.URL, replicaOpts{index: true}),
		mustReplica(t, homes[2], srv.URL, replicaOpts{}),
	}
	mustCreate(t, stores[0], "/memories/notes/counter.md", "value: 0\n")
	mustCreate(t, stores[0], "/memories/notes/log.md", "# Log\n")
	for _, s := range stores[1:] {
		if _, err := s.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}

	const writers, opsEach = 9, 8
	deadline := time.Now().Add(8 * time.Second)
	var (
		mu         sync.Mutex
		acks       []ack
		increments int
		created    = map[string]int{} // race path -> successful creates
	)
	var wg sync.WaitGroup
	for w := range writers {
		s := stores[w%len(stores)]
		wg.Go(func() {
			for n := 0; n < opsEach && time.Now().Before(deadline); n++ {
				word := fmt.Sprintf("marker%dx%d", w, n)
				switch (w + n) % 4 {
				case 0: // a distinct path
					p := fmt.Sprintf("/memories/notes/w%d/n%d.md", w, n)
					res, err := s.Create(ctx, p, "# Note\n\n"+word+" distinct\n", nil)
					if err != nil {
						t.Errorf("create %s: %v", p, err)
						continue
					}
					mu.Lock()
					acks = append(acks, ack{res.Commit, p, word})
					mu.Unlock()
				case 1: // the same file, always applicable
					res, err := s.Insert(ctx, "/memories/notes/log.md", 1, word+" logged", nil)
					if err != nil {
						t.Errorf("insert: %v", err)
						continue
					}
					mu.Lock()
					acks = append(acks, ack{res.Commit, "/memories/notes/log.md", word})
					mu.Unlock()
				case 2: // the same new path: one create wins
					p := fmt.Sprintf("/memories/notes/race%d.md", n)
					res, err := s.Create(ctx, p, "# Race\n\n"+word+" won\n", nil)
					switch {
					case errors.Is(err, memstore.ErrExists):
					case err != nil:
						t.Errorf("create %s: %v", p, err)
					default:
						mu.Lock()
						created[p]++
						acks = append(acks, ack{res.Commit, p, word})
						mu.Unlock()
					}
				case 3: // a read-modify-write whose old_str may vanish
					content, _, err := s.Read(ctx, "/memories/notes/counter.md")
					if err != nil {
						t.Errorf("read counter: %v", err)
						continue
					}
					old := strings.TrimSpace(string(content))
					v, _ := strconv.Atoi(strings.TrimPrefix(old, "value: "))
					_, err = s.StrReplace(ctx, "/memories/notes/counter.md", old, fmt.Sprintf("value: %d", v+1), nil)
					switch {
					case err == nil:
						mu.Lock()
						increments++
						mu.Unlock()
					case !strings.Contains(err.Error(), "did not appear verbatim"):
						t.Errorf("str_replace counter: %v", err)
					}
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	// Every acknowledged write is in the remote's history, with its content.
	history := map[string]bool{}
	for _, h := range strings.Fields(srv.Git(t, "rev-list", "main")) {
		history[h] = true
	}
	for _, a := range acks {
		if !history[a.commit] {
			t.Errorf("acknowledged commit %s (%s) is not in the remote's history", a.commit, a.path)
			continue
		}
		rel := strings.TrimPrefix(a.path, memstore.Root+"/")
		if got := srv.Git(t, "show", a.commit+":"+rel); !strings.Contains(got, a.word) {
			t.Errorf("commit %s: %s lacks %q", a.commit, rel, a.word)
		}
	}
	for p, n := range created {
		if n != 1 {
			t.Errorf("%s created %d times", p, n)
		}
	}
	final := srv.Git(t, "show", "main:notes/log.md")
	for _, a := range acks {
		if a.path == "/memories/notes/log.md" && !strings.Contains(final, a.word) {
			t.Errorf("the insert of %q was lost from the final log", a.word)
		}
	}
	if got, want := srv.Git(t, "show", "main:notes/counter.md"), fmt.Sprintf("value: %d", increments); got != want {
		t.Errorf("counter = %q, want %q (one per acknowledged str_replace)", got, want)
	}
	// Every push carried the commit it was prepared on as its condition.
	for i, u := range srv.Updates() {
		if u.Ref != "refs/heads/main" || i > 0 && strings.Trim(u.Old, "0") == "" {
			t.Errorf("push %d %+v: not a compare-and-swap on refs/heads/main", i, u)
		}
	}

	// After a Sync every replica has the remote's head and the same files,
	// and each index finds every acknowledged write.
	remote := srv.Head(t, "main")
	var want map[string]string
	for i, s := range stores {
		if _, err := s.Sync(ctx); err != nil {
			t.Fatalf("Sync replica %d: %v", i, err)
		}
		if got := mustHead(t, s); got != remote {
			t.Errorf("replica %d at %s, remote at %s", i, got, remote)
		}
		files := workingFiles(t, filepath.Join(homes[i], "memory"))
		if want == nil {
			want = files
		} else if diff := cmp.Diff(want, files); diff != "" {
			t.Errorf("replica %d's files differ from replica 0's (-0 +%d):\n%s", i, i, diff)
		}
	}
	for i, s := range stores[:2] {
		for _, a := range acks {
			if a.path != "/memories/notes/log.md" && !found(t, s, a.word, a.path) {
				t.Errorf("replica %d's search does not find %q in %s", i, a.word, a.path)
			}
		}
	}
	t.Logf("%d acknowledged writes, %d increments, %d push attempts", len(acks), increments, len(srv.Updates()))
}

// found reports whether a search for word on s returns path.
func found(t *testing.T, s *memstore.Store, word, path string) bool {
	t.Helper()
	res, err := s.Search(context.Background(), memstore.SearchRequest{Query: word, Limit: 20})
	if err != nil {
		t.Fatalf("search %q: %v", word, err)
	}
	for _, h := range res.Hits {
		if h.Path == path {
			return true
		}
	}
	return false
}

// workingFiles returns every file below dir outside .git with its content.
func workingFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

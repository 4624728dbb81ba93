package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/gate"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

// TestStore_RefusedWritesLeaveNoTrace checks that a refused write makes no
// commit, no file, and that its bytes reach no git object.
func TestStore_RefusedWritesLeaveNoTrace(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	mustCreate(t, s, "/memories/workspaces/w/task.md", "# Task\n\n- rule one\n")
	secret := "AKIA" + "Q3EXAMPLEZZTESTK"
	pem := "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEowIBAAKCAQEAzzzzzzzzzzzzzzzz\n-----END RSA PRIVATE KEY-----\n"
	transcript := strings.Repeat("User: what next?\nAssistant: let me check the logs.\n", 6)
	big := strings.Repeat("x", 300<<10)
	ghToken := "ghp_" + "R8xTq2LmZ7vK4pW9sYb3NcH6jD1fG5aE0uQw"
	tests := []struct {
		name  string
		op    func() error
		marks []string // byte strings that must appear in no object
	}{
		{"create-secret", func() error {
			_, err := s.Create(ctx, "/memories/workspaces/w/tools/aws.yaml", "kind: s3\naccess_key_id: "+secret+"\n", nil)
			return err
		}, []string{secret}},
		{"replace-secret", func() error {
			_, err := s.StrReplace(ctx, "/memories/workspaces/w/task.md", "rule one", "key "+secret, nil)
			return err
		}, []string{secret}},
		{"insert-private-key", func() error {
			_, err := s.Insert(ctx, "/memories/workspaces/w/task.md", 1, pem, nil)
			return err
		}, []string{"MIIEowIBAAKCAQEAzzzzzzzzzzzzzzzz"}},
		{"create-transcript", func() error {
			_, err := s.Create(ctx, "/memories/workspaces/w/notes/session.md", transcript, nil)
			return err
		}, []string{"let me check the logs"}},
		{"create-oversize", func() error {
			_, err := s.Create(ctx, "/memories/workspaces/w/notes/big.md", big, nil)
			return err
		}, []string{strings.Repeat("x", 1000)}},
		{"create-traversal", func() error {
			_, err := s.Create(ctx, "/memories/%2e%2e/escape.md", "uniquetraversalmarker", nil)
			return err
		}, []string{"uniquetraversalmarker"}},
		{"create-secret-in-path", func() error {
			_, err := s.Create(ctx, "/memories/workspaces/w/notes/"+ghToken+".md", "harmless\n", nil)
			return err
		}, []string{ghToken}},
		{"create-secret-in-author", func() error {
			_, err := s.Create(ctx, "/memories/workspaces/w/notes/ok.md", "harmless\n", &memstore.WriteOptions{Author: secret})
			return err
		}, []string{secret}},
		{"create-git-dir", func() error {
			_, err := s.Create(ctx, "/memories/.git/hooks/x.md", "uniquegitmarker", nil)
			return err
		}, []string{"uniquegitmarker"}},
	}
	before := commitCount(t, s)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.op()
			if !errors.Is(err, memstore.ErrRejected) {
				t.Fatalf("got %v, want a rejection", err)
			}
			for _, m := range tt.marks {
				if strings.Contains(err.Error(), m) {
					t.Errorf("error echoes the refused content: %q", err)
				}
			}
			objects := gitCmd(t, s, "cat-file", "--batch-all-objects", "--batch")
			for _, m := range tt.marks {
				if strings.Contains(objects, m) {
					t.Errorf("refused bytes %.20q reached a git object", m)
				}
			}
		})
	}
	if got := commitCount(t, s); got != before {
		t.Errorf("refused writes made %d commits", got-before)
	}
	for _, p := range []string{"workspaces/w/tools", "workspaces/w/notes", "escape.md", "../escape.md"} {
		if _, err := os.Stat(filepath.Join(s.Dir(), p)); !os.IsNotExist(err) {
			t.Errorf("%s exists after refused writes", p)
		}
	}
	if status := gitCmd(t, s, "status", "--porcelain"); status != "" {
		t.Errorf("worktree changed:\n%s", status)
	}
}

// TestStore_ConcurrentWriters runs 32 writers on distinct and shared files:
// every acknowledged write is in history, conflicts are reported and lose
// nothing, and the repository is sound.
func TestStore_ConcurrentWriters(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	shared := "/memories/workspaces/w/shared.md"
	mustCreate(t, s, shared, "# Shared\n")
	const writers, rounds = 32, 6
	var (
		mu        sync.Mutex
		acked     []string // commits acknowledged to a writer
		inserted  int      // lines acknowledged into the shared file
		conflicts int
	)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			own := fmt.Sprintf("/memories/workspaces/w/notes/writer-%02d.md", w)
			res, err := s.Create(ctx, own, "# Writer\n", nil)
			if err != nil {
				t.Errorf("create %s: %v", own, err)
				return
			}
			mu.Lock()
			acked = append(acked, res.Commit)
			mu.Unlock()
			for r := range rounds {
				if w%2 == 0 {
					res, err = s.Insert(ctx, own, r+1, fmt.Sprintf("line %d", r), nil)
				} else {
					_, sha, rerr := s.Read(ctx, shared)
					if rerr != nil {
						t.Errorf("read shared: %v", rerr)
						return
					}
					res, err = s.Insert(ctx, shared, 1, fmt.Sprintf("writer %d round %d", w, r), &memstore.WriteOptions{ExpectedSHA: sha})
					if errors.Is(err, memstore.ErrConflict) {
						mu.Lock()
						conflicts++
						mu.Unlock()
						continue
					}
				}
				if err != nil {
					t.Errorf("writer %d round %d: %v", w, r, err)
					continue
				}
				mu.Lock()
				acked = append(acked, res.Commit)
				if w%2 == 1 {
					inserted++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()

	history := gitCmd(t, s, "rev-list", "main")
	for _, c := range acked {
		if !strings.Contains(history, c) {
			t.Errorf("acknowledged commit %s is not in history", c)
		}
	}
	if got, want := commitCount(t, s), len(acked)+2; got != want {
		t.Errorf("%d commits, want %d (acknowledged writes + initial + shared create)", got, want)
	}
	content, _, err := s.Read(ctx, shared)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(content), "\n") - 1; got != inserted {
		t.Errorf("shared file has %d inserted lines, %d were acknowledged", got, inserted)
	}
	t.Logf("%d acknowledged writes, %d conflicts reported", len(acked), conflicts)
	out, err := exec.Command("git", "-C", s.Dir(), "fsck", "--strict").CombinedOutput()
	if err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
	if status := gitCmd(t, s, "status", "--porcelain"); status != "" {
		t.Errorf("worktree differs from HEAD:\n%s", status)
	}
}

// failingIndex injects failures into a real index.
type failingIndex struct {
	memstore.Index
	replace func(path string) error // called before each Replace; an error fails it
}

func (f *failingIndex) Replace(ctx context.Context, path string, chunks []memstore.Chunk) error {
	if f.replace != nil {
		if err := f.replace(path); err != nil {
			return err
		}
	}
	return f.Index.Replace(ctx, path, chunks)
}

func searchPaths(t *testing.T, s *memstore.Store, q string) []string {
	t.Helper()
	res, err := s.Search(context.Background(), memstore.SearchRequest{Query: q, Limit: 5})
	if err != nil {
		t.Fatalf("Search(%q): %v", q, err)
	}
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.Path)
	}
	return out
}

func TestStore_IndexFailureIsReconciled(t *testing.T) {
	fail := true
	s := openStore(t, t.TempDir(), func(i memstore.Index) memstore.Index {
		return &failingIndex{Index: i, replace: func(string) error {
			if fail {
				return errors.New("injected index failure")
			}
			return nil
		}}
	})
	ctx := context.Background()
	p := "/memories/workspaces/w/task.md"
	if _, err := s.Create(ctx, p, "# Task\n\n- Invoices are rounded to whole cents.\n", nil); err != nil {
		t.Fatalf("a failed index update must not fail the write: %v", err)
	}
	if got := searchPaths(t, s, "invoices rounded cents"); len(got) != 0 {
		t.Fatalf("index should have missed the write, found %v", got)
	}
	fail = false
	if err := s.Reconcile(ctx); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	if got := searchPaths(t, s, "invoices rounded cents"); len(got) == 0 || got[0] != p {
		t.Errorf("after reconcile: %v, want %s first", got, p)
	}

	// A later write also repairs what an earlier failed update missed.
	fail = true
	mustCreate(t, s, "/memories/workspaces/w/a.md", "# A\n\n- Shipping is free above 50 EUR.\n")
	fail = false
	mustCreate(t, s, "/memories/workspaces/w/b.md", "# B\n\n- Returns within 30 days.\n")
	if got := searchPaths(t, s, "shipping free above"); len(got) == 0 || got[0] != "/memories/workspaces/w/a.md" {
		t.Errorf("after the next write: %v, want a.md first", got)
	}
}

// TestStore_CrashBetweenCommitAndIndex kills a process after its commit and
// before its index update; the next open is consistent.
func TestStore_CrashBetweenCommitAndIndex(t *testing.T) {
	const envHome = "SELMEM_TEST_CRASH_HOME"
	p := "/memories/workspaces/w/task.md"
	if home := os.Getenv(envHome); home != "" {
		s := openStore(t, home, func(i memstore.Index) memstore.Index {
			return &failingIndex{Index: i, replace: func(string) error { os.Exit(3); return nil }}
		})
		_, err := s.Create(context.Background(), p, "# Task\n\n- Quarterly reports close on the fifth working day.\n", nil)
		t.Fatalf("the process should have died, Create returned %v", err)
	}
	home := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStore_CrashBetweenCommitAndIndex$")
	cmd.Env = append(os.Environ(), envHome+"="+home)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("child: %v, want exit status 3\n%s", err, out)
	}
	s := openStore(t, home, nil)
	if got, want := commitCount(t, s), 2; got != want {
		t.Fatalf("%d commits, want %d", got, want)
	}
	if _, err := s.View(context.Background(), p, nil); err != nil {
		t.Errorf("View after crash: %v", err)
	}
	if got := searchPaths(t, s, "quarterly reports fifth working day"); len(got) == 0 || got[0] != p {
		t.Errorf("search after reopen: %v, want %s first", got, p)
	}
	if status := gitCmd(t, s, "status", "--porcelain"); status != "" {
		t.Errorf("worktree differs from HEAD:\n%s", status)
	}
}

// outageIndex is a real index that can be switched off, like a database
// going away.
type outageIndex struct {
	memstore.Index
	down bool
}

var errDown = errors.New("injected outage: connection refused")

func (o *outageIndex) Replace(ctx context.Context, path string, chunks []memstore.Chunk) error {
	if o.down {
		return errDown
	}
	return o.Index.Replace(ctx, path, chunks)
}

func (o *outageIndex) Search(ctx context.Context, q memstore.Query) ([]memstore.Hit, error) {
	if o.down {
		return nil, errDown
	}
	return o.Index.Search(ctx, q)
}

func (o *outageIndex) State(ctx context.Context) (memstore.IndexState, error) {
	if o.down {
		return memstore.IndexState{}, errDown
	}
	return o.Index.State(ctx)
}

// TestStore_FallbackDuringOutage: while the primary index is down, writes
// still commit, searches come from the fallback and say so, and the primary
// catches up when it returns.
func TestStore_FallbackDuringOutage(t *testing.T) {
	home := t.TempDir()
	primary, err := sqliteindex.Open(filepath.Join(home, "primary.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { primary.Close() })
	fallback, err := sqliteindex.Open(filepath.Join(home, "fallback.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fallback.Close() })
	out := &outageIndex{Index: primary}
	s, err := memstore.Open(context.Background(), home, &memstore.Options{
		Index: out, Fallback: fallback, Embedder: embedder.NewBuiltin(), Now: func() time.Time { return fixedNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p := "/memories/workspaces/w/task.md"
	mustCreate(t, s, p, "# Task\n\n- Refunds are approved by finance within 5 days.\n")

	out.down = true
	if _, err := s.StrReplace(ctx, p, "5 days", "3 days", nil); err != nil {
		t.Fatalf("write during the outage: %v", err)
	}
	res, err := s.Search(ctx, memstore.SearchRequest{Query: "refunds approved 3 days"})
	if err != nil {
		t.Fatalf("search during the outage: %v", err)
	}
	if res.Degraded == "" || len(res.Hits) == 0 || !strings.Contains(res.Hits[0].Text, "3 days") {
		t.Fatalf("during the outage: degraded %q, hits %+v; want fallback hits with the new text", res.Degraded, res.Hits)
	}

	out.down = false
	res, err = s.Search(ctx, memstore.SearchRequest{Query: "refunds approved 3 days"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Degraded != "" || len(res.Hits) == 0 || !strings.Contains(res.Hits[0].Text, "3 days") {
		t.Fatalf("after the outage: degraded %q, hits %+v; want primary hits with the new text", res.Degraded, res.Hits)
	}
	if st, _ := primary.State(ctx); st.Commit != mustHead(t, s) {
		t.Errorf("primary at %s, HEAD at %s", st.Commit, mustHead(t, s))
	}
}

func mustHead(t *testing.T, s *memstore.Store) string {
	t.Helper()
	h, err := s.Head()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestStore_WorkspaceCap refuses a write that would take a workspace over
// its size cap, and counts replaced content only once.
func TestStore_WorkspaceCap(t *testing.T) {
	lim := gate.DefaultLimits()
	lim.MaxFileBytes, lim.MaxWorkspaceBytes = 100, 200
	s, err := memstore.Open(context.Background(), t.TempDir(), &memstore.Options{Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	line := strings.Repeat("x", 79) + "\n" // 80 bytes
	mustCreate(t, s, "/memories/workspaces/w/a.md", line)
	mustCreate(t, s, "/memories/workspaces/w/b.md", line)
	mustCreate(t, s, "/memories/workspaces/other/c.md", line)
	// Replacing a file with one of the same size keeps the total at 160.
	if _, err := s.StrReplace(ctx, "/memories/workspaces/w/a.md", line, strings.Repeat("y", 79)+"\n", nil); err != nil {
		t.Fatalf("same-size edit: %v", err)
	}
	_, err = s.Create(ctx, "/memories/workspaces/w/d.md", line+"z\n", nil)
	if !errors.Is(err, memstore.ErrRejected) || !strings.Contains(err.Error(), "cap of 200 bytes") {
		t.Fatalf("write over the workspace cap: %v", err)
	}
	if _, _, err := s.Read(ctx, "/memories/workspaces/w/d.md"); !errors.Is(err, memstore.ErrNotFound) {
		t.Errorf("refused write left a file: %v", err)
	}
	// Deleting makes room again.
	if _, err := s.Delete(ctx, "/memories/workspaces/w/b.md", nil); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "/memories/workspaces/w/d.md", line+"z\n")
}

// bulkIndex is a real index with the optional batch and bulk methods, which
// records the order of their calls and can fail ReplaceMany.
type bulkIndex struct {
	memstore.Index
	calls     []string
	failBatch bool
}

func (b *bulkIndex) ReplaceMany(ctx context.Context, files map[string][]memstore.Chunk) error {
	b.calls = append(b.calls, "ReplaceMany")
	if b.failBatch {
		return errors.New("injected batch failure")
	}
	for p, cs := range files {
		if err := b.Index.Replace(ctx, p, cs); err != nil {
			return err
		}
	}
	return nil
}

func (b *bulkIndex) DropSearchIndexes(context.Context) error {
	b.calls = append(b.calls, "Drop")
	return nil
}

func (b *bulkIndex) BuildSearchIndexes(context.Context) error {
	b.calls = append(b.calls, "Build")
	return nil
}

// TestStore_BulkRebuild checks how the mirror drives an index with the
// optional methods: writes go through ReplaceMany, and a full rebuild drops
// the search indexes before loading and builds them after, also when the
// load fails.
func TestStore_BulkRebuild(t *testing.T) {
	var bulk *bulkIndex
	s := openStore(t, t.TempDir(), func(i memstore.Index) memstore.Index {
		bulk = &bulkIndex{Index: i}
		return bulk
	})
	ctx := context.Background()
	for i := range 3 {
		mustCreate(t, s, fmt.Sprintf("/memories/workspaces/w/n%d.md", i), fmt.Sprintf("# N%d\n\n- Rotate keys every %d days.\n", i, 30+i))
	}
	tests := []struct {
		name      string
		failBatch bool
		wantErr   bool
	}{
		{name: "load succeeds"},
		{name: "load fails", failBatch: true, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bulk.calls, bulk.failBatch = nil, tt.failBatch
			err := s.Reindex(ctx, nil)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Reindex: %v, want error %v", err, tt.wantErr)
			}
			want := []string{"Drop", "ReplaceMany", "Build"}
			if diff := cmp.Diff(want, bulk.calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
	bulk.failBatch = false
	if err := s.Reindex(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := searchPaths(t, s, "rotate keys 31 days"); len(got) == 0 || got[0] != "/memories/workspaces/w/n1.md" {
		t.Errorf("after rebuild: %v, want n1.md first", got)
	}
	bulk.calls = nil
	mustCreate(t, s, "/memories/workspaces/w/n9.md", "# N9\n\n- Archive logs weekly.\n")
	if diff := cmp.Diff([]string{"ReplaceMany"}, bulk.calls); diff != "" {
		t.Errorf("a write's calls (-want +got):\n%s", diff)
	}
}

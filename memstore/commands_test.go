package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/selmem/selmem/memstore"
)

const taskMD = `---
type: task
source: user_confirmed
confidence: 0.9
---
# Task

## Dates
- Dates are ISO 8601 (YYYY-MM-DD).
- Weeks start on Monday.

## Currency
- Amounts in EUR with two decimals.
`

// seed fills a store with a small workspace.
func seed(t *testing.T, s *memstore.Store) {
	t.Helper()
	mustCreate(t, s, "/memories/workspaces/sales/task.md", taskMD)
	mustCreate(t, s, "/memories/workspaces/sales/output.md", "# Output\n\n- One HTML file.\n")
	mustCreate(t, s, "/memories/workspaces/sales/tools/warehouse.yaml", "kind: postgres\nauth:\n  password_env: WAREHOUSE_PASSWORD\n")
	mustCreate(t, s, "/memories/workspaces/sales/schemas/deep/nested/orders.md", "# orders\n")
	mustCreate(t, s, "/memories/org/style.md", "# Style\n\n- Be brief.\n")
}

func TestStore_View(t *testing.T) {
	s := newStore(t)
	seed(t, s)
	// Hidden files are not listed.
	if err := os.WriteFile(filepath.Join(s.Dir(), "workspaces", ".hidden.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		path      string
		viewRange []int
	}{
		{"root", "/memories", nil},
		{"workspace", "/memories/workspaces/sales", nil},
		{"file", "/memories/workspaces/sales/task.md", nil},
		{"range", "/memories/workspaces/sales/task.md", []int{7, 9}},
		{"range-to-end", "/memories/workspaces/sales/task.md", []int{11, -1}},
		{"single-line", "/memories/workspaces/sales/task.md", []int{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.View(context.Background(), tt.path, tt.viewRange)
			if err != nil {
				t.Fatalf("View: %v", err)
			}
			golden(t, filepath.Join("view", tt.name+".golden"), got)
		})
	}
}

// TestStore_ErrorTexts pins every error text a memory command can return:
// they are what a model reads, and what memory-tool handlers pass through.
func TestStore_ErrorTexts(t *testing.T) {
	s := newStore(t)
	seed(t, s)
	mustCreate(t, s, "/memories/notes/dup.md", "a\nb\na\nc a\n")
	ctx := context.Background()
	task := "/memories/workspaces/sales/task.md"
	tests := []struct {
		name string
		kind error
		op   func() error
	}{
		{"view-missing", memstore.ErrNotFound, func() error { _, err := s.View(ctx, "/memories/nope.md", nil); return err }},
		{"view-outside", memstore.ErrRejected, func() error { _, err := s.View(ctx, "/etc/passwd", nil); return err }},
		{"view-range-bad-start", memstore.ErrInvalid, func() error { _, err := s.View(ctx, task, []int{0, 3}); return err }},
		{"view-range-past-end", memstore.ErrInvalid, func() error { _, err := s.View(ctx, task, []int{2, 99}); return err }},
		{"view-range-reversed", memstore.ErrInvalid, func() error { _, err := s.View(ctx, task, []int{5, 2}); return err }},
		{"view-range-shape", memstore.ErrInvalid, func() error { _, err := s.View(ctx, task, []int{5}); return err }},
		{"view-range-dir", memstore.ErrInvalid, func() error { _, err := s.View(ctx, "/memories/org", []int{1, 2}); return err }},
		{"create-exists", memstore.ErrExists, func() error { _, err := s.Create(ctx, task, "x", nil); return err }},
		{"create-dir-exists", memstore.ErrExists, func() error { _, err := s.Create(ctx, "/memories/org", "x", nil); return err }},
		{"create-bad-extension", memstore.ErrRejected, func() error { _, err := s.Create(ctx, "/memories/a.exe", "x", nil); return err }},
		{"create-traversal", memstore.ErrRejected, func() error { _, err := s.Create(ctx, "/memories/../x.md", "x", nil); return err }},
		{"create-bad-source", memstore.ErrInvalid, func() error {
			_, err := s.Create(ctx, "/memories/n.md", "x", &memstore.WriteOptions{Source: "gossip"})
			return err
		}},
		{"create-bad-confidence", memstore.ErrInvalid, func() error {
			c := 1.5
			_, err := s.Create(ctx, "/memories/n.md", "x", &memstore.WriteOptions{Confidence: &c})
			return err
		}},
		{"replace-missing-file", memstore.ErrNotFound, func() error { _, err := s.StrReplace(ctx, "/memories/nope.md", "a", "b", nil); return err }},
		{"replace-directory", memstore.ErrInvalid, func() error { _, err := s.StrReplace(ctx, "/memories/org", "a", "b", nil); return err }},
		{"replace-no-match", memstore.ErrNotFound, func() error { _, err := s.StrReplace(ctx, task, "Fridays", "x", nil); return err }},
		{"replace-multiple", memstore.ErrConflict, func() error { _, err := s.StrReplace(ctx, "/memories/notes/dup.md", "a", "z", nil); return err }},
		{"replace-empty-old", memstore.ErrInvalid, func() error { _, err := s.StrReplace(ctx, task, "", "z", nil); return err }},
		{"replace-stale-sha", memstore.ErrConflict, func() error {
			_, err := s.StrReplace(ctx, task, "Monday", "Sunday", &memstore.WriteOptions{ExpectedSHA: "0123456789abcdef0123456789abcdef01234567"})
			return err
		}},
		{"insert-missing-file", memstore.ErrNotFound, func() error { _, err := s.Insert(ctx, "/memories/nope.md", 0, "x", nil); return err }},
		{"insert-line-negative", memstore.ErrInvalid, func() error { _, err := s.Insert(ctx, task, -1, "x", nil); return err }},
		{"insert-line-past-end", memstore.ErrInvalid, func() error { _, err := s.Insert(ctx, task, 99, "x", nil); return err }},
		{"delete-missing", memstore.ErrNotFound, func() error { _, err := s.Delete(ctx, "/memories/nope.md", nil); return err }},
		{"delete-root", memstore.ErrInvalid, func() error { _, err := s.Delete(ctx, "/memories", nil); return err }},
		{"rename-missing", memstore.ErrNotFound, func() error { _, err := s.Rename(ctx, "/memories/nope.md", "/memories/x.md", nil); return err }},
		{"rename-onto-existing", memstore.ErrExists, func() error {
			_, err := s.Rename(ctx, task, "/memories/workspaces/sales/output.md", nil)
			return err
		}},
		{"rename-into-itself", memstore.ErrInvalid, func() error {
			_, err := s.Rename(ctx, "/memories/workspaces", "/memories/workspaces/inner", nil)
			return err
		}},
		{"rename-root", memstore.ErrInvalid, func() error { _, err := s.Rename(ctx, "/memories", "/memories/x", nil); return err }},
		{"history-missing", memstore.ErrNotFound, func() error {
			_, err := s.History(ctx, "/memories/nope.md", &memstore.HistoryOptions{Limit: 5})
			return err
		}},
		{"revert-bad-commit", memstore.ErrNotFound, func() error { _, err := s.Revert(ctx, task, "zzzz", nil); return err }},
		{"revert-unknown-commit", memstore.ErrNotFound, func() error { _, err := s.Revert(ctx, task, "deadbeef", nil); return err }},
		{"search-empty", memstore.ErrInvalid, func() error {
			_, err := s.Search(ctx, memstore.SearchRequest{Query: "  "})
			return err
		}},
		{"search-limit", memstore.ErrInvalid, func() error {
			_, err := s.Search(ctx, memstore.SearchRequest{Query: "x", Limit: 1000})
			return err
		}},
		{"search-scope", memstore.ErrInvalid, func() error {
			_, err := s.Search(ctx, memstore.SearchRequest{Query: "x", Scope: "galaxy"})
			return err
		}},
	}
	before := commitCount(t, s)
	var b strings.Builder
	for _, tt := range tests {
		err := tt.op()
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if !errors.Is(err, tt.kind) {
			t.Errorf("%s: error %q is not %v", tt.name, err, tt.kind)
		}
		fmt.Fprintf(&b, "## %s\n%s\n\n", tt.name, err)
	}
	golden(t, "errors.golden", b.String())
	if got := commitCount(t, s); got != before {
		t.Errorf("failed operations made %d commits", got-before)
	}
}

func TestStore_WritesAreCommits(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p := "/memories/workspaces/sales/task.md"
	w := &memstore.WriteOptions{Tool: "memory_test", Source: memstore.SourceUserConfirmed, Author: "alice"}
	steps := []struct {
		name     string
		op       func() (memstore.WriteResult, error)
		message  string
		wantFile string // content of p afterwards; "-" for absent
	}{
		{"create", func() (memstore.WriteResult, error) { return s.Create(ctx, p, "a\nb\nc\n", w) },
			"File created successfully at: " + p, "a\nb\nc\n"},
		{"str_replace", func() (memstore.WriteResult, error) { return s.StrReplace(ctx, p, "b", "B1\nB2", w) },
			"The memory file has been edited.\n     1\ta\n     2\tB1\n     3\tB2\n     4\tc\n", "a\nB1\nB2\nc\n"},
		{"insert-top", func() (memstore.WriteResult, error) { return s.Insert(ctx, p, 0, "top", w) },
			"The file " + p + " has been edited.", "top\na\nB1\nB2\nc\n"},
		{"insert-end", func() (memstore.WriteResult, error) { return s.Insert(ctx, p, 5, "end\n", w) },
			"The file " + p + " has been edited.", "top\na\nB1\nB2\nc\nend\n"},
		{"rename", func() (memstore.WriteResult, error) { return s.Rename(ctx, p, "/memories/workspaces/sales/spec.md", w) },
			"Successfully renamed " + p + " to /memories/workspaces/sales/spec.md", "-"},
		{"rename-dir", func() (memstore.WriteResult, error) {
			return s.Rename(ctx, "/memories/workspaces/sales", "/memories/workspaces/revenue", w)
		}, "Successfully renamed /memories/workspaces/sales to /memories/workspaces/revenue", "-"},
		{"delete", func() (memstore.WriteResult, error) { return s.Delete(ctx, "/memories/workspaces/revenue", w) },
			"Successfully deleted /memories/workspaces/revenue", "-"},
	}
	for _, st := range steps {
		before := commitCount(t, s)
		res, err := st.op()
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got, want := res.Message, st.message; got != want {
			t.Errorf("%s: message %q, want %q", st.name, got, want)
		}
		if got := commitCount(t, s); got != before+1 {
			t.Errorf("%s: %d commits, want exactly 1", st.name, got-before)
		}
		if got, want := strings.TrimSpace(gitCmd(t, s, "rev-parse", "main")), res.Commit; got != want {
			t.Errorf("%s: main at %s, result says %s", st.name, got, want)
		}
		msg := gitCmd(t, s, "log", "-1", "--format=%an%n%B")
		for _, want := range []string{"alice\n", "Tool: memory_test\n", "Source: user_confirmed\n", "Author: alice\n"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: commit %q lacks %q", st.name, msg, want)
			}
		}
		data, err := os.ReadFile(filepath.Join(s.Dir(), "workspaces/sales/task.md"))
		got := string(data)
		if err != nil {
			got = "-"
		}
		if got != st.wantFile {
			t.Errorf("%s: working file %q, want %q", st.name, got, st.wantFile)
		}
		// The worktree always matches HEAD.
		if status := gitCmd(t, s, "status", "--porcelain"); status != "" {
			t.Errorf("%s: worktree differs from HEAD:\n%s", st.name, status)
		}
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "workspaces")); !os.IsNotExist(err) {
		t.Errorf("emptied directory left behind: %v", err)
	}
}

// TestStore_GaveUpWritesNothing: a write whose caller gave up before it
// got the store's lock (its request cancelled while it waited behind
// others) is not made: no commit, no file.
func TestStore_GaveUpWritesNothing(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	before := commitCount(t, s)
	p := "/memories/notes/late.md"
	if _, err := s.Create(ctx, p, "# Late\n", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Create with a cancelled context = %v, want context.Canceled", err)
	}
	if got := commitCount(t, s); got != before {
		t.Errorf("%d commits made", got-before)
	}
	if _, err := s.View(context.Background(), p, nil); !errors.Is(err, memstore.ErrNotFound) {
		t.Errorf("View(%s) = %v, want ErrNotFound", p, err)
	}
}

func TestStore_ExpectedSHA(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p := "/memories/notes/n.md"
	res := mustCreate(t, s, p, "one\n")
	if _, sha, _ := s.Read(ctx, p); sha != res.SHA {
		t.Fatalf("Read sha %s, Create said %s", sha, res.SHA)
	}
	if got, want := res.SHA, strings.TrimSpace(gitCmd(t, s, "rev-parse", "main:notes/n.md")); got != want {
		t.Errorf("sha %s, git blob %s", got, want)
	}
	res2, err := s.Insert(ctx, p, 1, "two", &memstore.WriteOptions{ExpectedSHA: res.SHA})
	if err != nil {
		t.Fatalf("insert with current sha: %v", err)
	}
	_, err = s.Insert(ctx, p, 1, "stale", &memstore.WriteOptions{ExpectedSHA: res.SHA})
	if !errors.Is(err, memstore.ErrConflict) || !strings.Contains(err.Error(), res2.SHA) {
		t.Fatalf("stale sha: got %v, want a conflict naming %s", err, res2.SHA)
	}
	if content, _, _ := s.Read(ctx, p); string(content) != "one\ntwo\n" {
		t.Errorf("content %q after a refused write", content)
	}
}

func TestStore_List(t *testing.T) {
	s := newStore(t)
	seed(t, s)
	got, err := s.List(context.Background(), "/memories/workspaces/sales")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range got {
		names = append(names, fmt.Sprintf("%s dir=%v", e.Path, e.IsDir))
	}
	want := []string{
		"/memories/workspaces/sales/output.md dir=false",
		"/memories/workspaces/sales/schemas dir=true",
		"/memories/workspaces/sales/task.md dir=false",
		"/memories/workspaces/sales/tools dir=true",
	}
	if strings.Join(names, "\n") != strings.Join(want, "\n") {
		t.Errorf("List = %v, want %v", names, want)
	}
	if _, err := s.List(context.Background(), "/memories/nope"); !errors.Is(err, memstore.ErrNotFound) {
		t.Errorf("missing directory: %v", err)
	}
}

func TestStore_Put(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	mustCreate(t, s, "/memories/workspaces/w/schemas/a.md", "old\n")
	files := map[string]string{
		"/memories/workspaces/w/schemas/a.md":             "# a\n",
		"/memories/workspaces/w/schemas/relationships.md": "# relationships\n",
	}
	before := commitCount(t, s)
	res, err := s.Put(ctx, files, &memstore.WriteOptions{Tool: "profile_source", Source: memstore.SourceTrustedToolResult})
	if err != nil {
		t.Fatal(err)
	}
	if got := commitCount(t, s); got != before+1 {
		t.Errorf("Put made %d commits, want 1", got-before)
	}
	if got, want := res.Message, "Wrote /memories/workspaces/w/schemas/a.md, /memories/workspaces/w/schemas/relationships.md"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	for p, want := range files {
		if got, _, _ := s.Read(ctx, p); string(got) != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	if subject := gitCmd(t, s, "log", "-1", "--format=%s"); subject != "put 2 files under /memories/workspaces/w/schemas\n" {
		t.Errorf("subject %q", subject)
	}
	// Unchanged content makes no commit.
	if res, err := s.Put(ctx, files, nil); err != nil || res.Commit != "" {
		t.Errorf("unchanged Put: %+v, %v", res, err)
	}
	// The gate still applies, and a refusal writes nothing.
	bad := map[string]string{"/memories/workspaces/w/ok.md": "fine\n", "/memories/workspaces/w/bad.md": "key: AKIA" + "Q3EXAMPLEZZTESTK\n"}
	if _, err := s.Put(ctx, bad, nil); !errors.Is(err, memstore.ErrRejected) {
		t.Errorf("Put with a secret: %v", err)
	}
	if _, _, err := s.Read(ctx, "/memories/workspaces/w/ok.md"); !errors.Is(err, memstore.ErrNotFound) {
		t.Errorf("a refused Put wrote ok.md: %v", err)
	}
	if got := commitCount(t, s); got != before+1 {
		t.Errorf("%d commits after refused and unchanged Puts, want %d", got, before+1)
	}
}

// TestStore_StrReplaceNotUnique: a non-unique old_str is refused, naming each
// line it occurs on once, even when it occurs several times on a line.
func TestStore_StrReplaceNotUnique(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, text, old, wantLines string
	}{
		{"two lines", "- a\n- b\n", "- ", "in lines: 1, 2."},
		{"repeats on a line", "a - b\n- c - d - e\n- f\n", "- ", "in lines: 1, 2, 3."},
		{"one line", "x x\n", "x", "in lines: 1."},
		{"spans lines", "ab\nab\nab\n", "b\na", "in lines: 1, 2."},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			if _, err := s.Create(ctx, "/memories/notes/dup.md", c.text, nil); err != nil {
				t.Fatal(err)
			}
			_, err := s.StrReplace(ctx, "/memories/notes/dup.md", c.old, "*", nil)
			if !errors.Is(err, memstore.ErrConflict) {
				t.Fatalf("err = %v, want ErrConflict", err)
			}
			if got := err.Error(); !strings.Contains(got, "Multiple occurrences of old_str `"+c.old+"` "+c.wantLines) {
				t.Errorf("error %q lacks %q", got, c.wantLines)
			}
		})
	}
}

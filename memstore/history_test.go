package memstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/selmem/selmem/memstore"
)

func TestStore_HistoryAndRevert(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p := "/memories/workspaces/w/task.md"
	w := &memstore.WriteOptions{Tool: "memory_create", Source: memstore.SourceInferred, Author: "bob"}
	v1, err := s.Create(ctx, p, "# Task\n\n- v1\n", w)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "/memories/workspaces/w/other.md", "# Other\n")
	v2, err := s.StrReplace(ctx, p, "v1", "v2", nil)
	if err != nil {
		t.Fatal(err)
	}
	hist, err := s.History(ctx, p, &memstore.HistoryOptions{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 || hist[0].Hash != v2.Commit || hist[1].Hash != v1.Commit {
		t.Fatalf("history %+v, want [v2 v1]", hist)
	}
	if got := hist[1].Trailers; got["Source"] != "inferred" || got["Author"] != "bob" || got["Tool"] != "memory_create" {
		t.Errorf("trailers %v", got)
	}
	if all, _ := s.History(ctx, "/memories", &memstore.HistoryOptions{Limit: 100}); len(all) != 4 {
		t.Errorf("full history has %d commits, want 4", len(all))
	}
	if dir, _ := s.History(ctx, "/memories/workspaces/w", &memstore.HistoryOptions{Limit: 100}); len(dir) != 3 {
		t.Errorf("directory history has %d commits, want 3", len(dir))
	}
	if one, _ := s.History(ctx, p, &memstore.HistoryOptions{Limit: 1}); len(one) != 1 || one[0].Hash != v2.Commit {
		t.Errorf("limit 1: %+v", one)
	}
	// A path with history but no commit by the author is no missing path.
	if none, err := s.History(ctx, p, &memstore.HistoryOptions{Author: "nobody"}); err != nil || len(none) != 0 {
		t.Errorf("history by an author who never wrote it: %d commits, %v; want none and no error", len(none), err)
	}
	if _, err := s.History(ctx, "/memories/workspaces/w/never.md", nil); !errors.Is(err, memstore.ErrNotFound) {
		t.Errorf("history of a path no commit touched: %v, want ErrNotFound", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.History(cancelled, "/memories", &memstore.HistoryOptions{Author: "nobody"}); !errors.Is(err, context.Canceled) {
		t.Errorf("history with a cancelled context: %v, want context.Canceled", err)
	}

	// Revert a file to an older content.
	res, err := s.Revert(ctx, p, v1.Commit[:8], nil)
	if err != nil {
		t.Fatal(err)
	}
	if content, _, _ := s.Read(ctx, p); string(content) != "# Task\n\n- v1\n" || res.SHA != v1.SHA {
		t.Errorf("after revert: %q", content)
	}
	if _, err := s.Revert(ctx, p, v1.Commit, nil); !errors.Is(err, memstore.ErrInvalid) {
		t.Errorf("reverting to the current content: %v, want ErrInvalid", err)
	}

	// Deleted files come back; the deleted path keeps its history.
	if _, err := s.Delete(ctx, "/memories/workspaces/w", nil); err != nil {
		t.Fatal(err)
	}
	if hist, err := s.History(ctx, p, &memstore.HistoryOptions{Limit: 10}); err != nil || len(hist) != 4 {
		t.Errorf("history of a deleted file: %d commits, %v", len(hist), err)
	}
	if _, err := s.Revert(ctx, "/memories/workspaces/w", v2.Commit, nil); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{p: "# Task\n\n- v2\n", "/memories/workspaces/w/other.md": "# Other\n"} {
		if content, _, err := s.Read(ctx, path); err != nil || string(content) != want {
			t.Errorf("%s after directory revert: %q, %v", path, content, err)
		}
	}
	if got := searchPaths(t, s, "v2"); len(got) == 0 || got[0] != p {
		t.Errorf("restored file not indexed: %v", got)
	}
	if _, err := s.Revert(ctx, "/memories/workspaces/w/new.md", v1.Commit, nil); !errors.Is(err, memstore.ErrNotFound) {
		t.Errorf("revert of a path absent at the commit: %v", err)
	}
}

// A revert restores only what its caller could read: commits of the
// history it writes on, read under the ACLs of their time.
func TestRevert_OnlyWhatTheCallerCouldRead(t *testing.T) {
	s := sharedStore(t)
	steve, olivia, carol := asUser("steve"), asUser("olivia"), asUser("carol")

	// olivia's unpublished draft: nobody else may restore it from its hash.
	must(t)(s.OpenDraft(olivia, "sales"))
	draft := must(t)(s.Create(olivia, wsDir+"/notes/idea.md", "# Idea\n\nCut the vendor budget.\n", nil))
	draftEdit := must(t)(s.StrReplace(olivia, task, "revenue", "margin", nil))
	// A deleted workspace, which carol then creates again under its name.
	hidden := "/memories/workspaces/legal"
	must(t)(s.Create(context.Background(), hidden+"/workspace.yaml", "acl:\n  owners: [olivia]\n", nil))
	past := must(t)(s.Create(context.Background(), hidden+"/task.md", "# Task\n\nSettle below four million.\n", nil))
	must(t)(s.Delete(context.Background(), hidden, nil))
	must(t)(s.Create(carol, hidden+"/x.md", "# X\n", nil))

	for _, c := range []struct {
		name   string
		ctx    context.Context
		path   string
		commit string
		want   error
	}{
		{"another's draft commit", steve, wsDir + "/notes/idea.md", draft.Commit, memstore.ErrNotFound},
		{"another's draft commit, abbreviated", steve, task, draftEdit.Commit[:6], memstore.ErrNotFound},
		{"a viewer and another's draft commit", asUser("vera"), wsDir + "/notes/idea.md", draft.Commit, memstore.ErrNotFound},
		{"a workspace's past before the caller created it", carol, hidden + "/task.md", past.Commit, memstore.ErrDenied},
		{"a path that never existed, at another's draft commit", steve, wsDir + "/none.md", draft.Commit, memstore.ErrNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := snapshot(t, s)
			_, err := s.Revert(c.ctx, c.path, c.commit, nil)
			if !errors.Is(err, c.want) {
				t.Fatalf("Revert = %v, want %v", err, c.want)
			}
			if c.want == memstore.ErrNotFound && !strings.Contains(err.Error(), "No commit") {
				t.Errorf("Revert = %v, want the answer of a commit that does not exist", err)
			}
			if after := snapshot(t, s); after != before {
				t.Errorf("a refused revert changed the repository:\n%s\n---\n%s", before, after)
			}
		})
	}
	// The draft's author still restores from her own draft's history.
	must(t)(s.StrReplace(olivia, task, "margin", "profit", nil))
	if _, err := s.Revert(olivia, task, draftEdit.Commit, nil); err != nil {
		t.Errorf("the draft's author reverts to her draft's commit: %v", err)
	}
}

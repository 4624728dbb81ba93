package memstore_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
)

// TestStore_SearchReadable checks that Store.Search passes the context's
// principal's readable workspaces to the index: each principal finds the
// chunks of the workspaces whose ACL names them, their own user directory
// and org, and nothing else; no principal is the local owner.
func TestStore_SearchReadable(t *testing.T) {
	s := newStore(t)
	const rule = "\n\n- The quarterly ledger closes on the fifth working day.\n"
	for p, text := range map[string]string{
		"/memories/workspaces/sales/workspace.yaml":   "acl:\n  owners: [olga]\n  viewers: [vic, group:auditors]\n",
		"/memories/workspaces/sales/task.md":          "# Sales" + rule,
		"/memories/workspaces/finance/workspace.yaml": "acl:\n  owners: [fay]\n",
		"/memories/workspaces/finance/task.md":        "# Finance" + rule,
		"/memories/workspaces/open/task.md":           "# Open (no ACL: nobody but admins and the local owner)" + rule,
		"/memories/users/vic/notes.md":                "# Vic" + rule,
		"/memories/users/fay/notes.md":                "# Fay" + rule,
		"/memories/org/rules.md":                      "# Org" + rule,
	} {
		mustCreate(t, s, p, text)
	}
	tests := []struct {
		name string
		ctx  context.Context
		want []string
	}{
		{"local", context.Background(), []string{
			"/memories/org/rules.md", "/memories/users/fay/notes.md", "/memories/users/vic/notes.md",
			"/memories/workspaces/finance/task.md", "/memories/workspaces/open/task.md", "/memories/workspaces/sales/task.md"}},
		{"viewer", access.WithPrincipal(context.Background(), access.Principal{User: "vic", Kind: access.KindPerson}),
			[]string{"/memories/org/rules.md", "/memories/users/vic/notes.md", "/memories/workspaces/sales/task.md"}},
		{"group viewer, service", access.WithPrincipal(context.Background(), access.Principal{User: "ci", Groups: []string{"auditors"}, Kind: access.KindService}),
			[]string{"/memories/org/rules.md", "/memories/workspaces/sales/task.md"}},
		{"owner of another", access.WithPrincipal(context.Background(), access.Principal{User: "fay", Kind: access.KindPerson}),
			[]string{"/memories/org/rules.md", "/memories/users/fay/notes.md", "/memories/workspaces/finance/task.md"}},
		{"stranger", access.WithPrincipal(context.Background(), access.Principal{User: "otto", Kind: access.KindPerson}),
			[]string{"/memories/org/rules.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, slices.Compact(foundPaths(t, tt.ctx, s, "quarterly ledger"))); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
		})
	}
}

// stuckIndex is a real index whose updates fail while stuck is set, like
// a database that serves reads but refuses writes.
type stuckIndex struct {
	memstore.Index
	stuck *atomic.Bool
}

var errStuck = errors.New("injected: the index refuses writes")

func (i stuckIndex) Replace(ctx context.Context, path string, chunks []memstore.Chunk) error {
	if i.stuck.Load() {
		return errStuck
	}
	return i.Index.Replace(ctx, path, chunks)
}

func (i stuckIndex) DeletePath(ctx context.Context, path string) error {
	if i.stuck.Load() {
		return errStuck
	}
	return i.Index.DeletePath(ctx, path)
}

// TestStore_SearchLaggingIndex checks that an index that cannot catch up
// with the head answers only for what the head still holds as it was
// indexed: a file moved into a workspace the principal has no role in,
// deleted or rewritten is not found under its old path or content.
func TestStore_SearchLaggingIndex(t *testing.T) {
	var stuck atomic.Bool
	s := openStore(t, t.TempDir(), func(i memstore.Index) memstore.Index { return stuckIndex{Index: i, stuck: &stuck} })
	ctx := context.Background()
	for p, text := range map[string]string{
		"/memories/workspaces/secret/workspace.yaml": "acl:\n  owners: [olga]\n",
		"/memories/org/plan.md":                      "# Plan\n\n- Project zorblax: acquire Quillfeather in March.\n",
		"/memories/org/leak.md":                      "# Leak\n\n- The zorblax launch slipped to June.\n",
		"/memories/org/draft.md":                     "# Draft\n\n- The zorblax budget is twelve million.\n",
		"/memories/org/kept.md":                      "# Kept\n\n- The zorblax codename is public.\n",
	} {
		mustCreate(t, s, p, text)
	}
	stuck.Store(true)
	if _, err := s.Rename(ctx, "/memories/org/plan.md", "/memories/workspaces/secret/plan.md", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, "/memories/org/leak.md", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StrReplace(ctx, "/memories/org/draft.md", "zorblax budget is twelve million", "budget is confidential", nil); err != nil {
		t.Fatal(err)
	}
	vic := access.WithPrincipal(ctx, access.Principal{User: "vic", Kind: access.KindPerson})
	tests := []struct {
		name  string
		ctx   context.Context
		stuck bool
		want  []string
	}{
		{"stuck, a principal", vic, true, []string{"/memories/org/kept.md"}},
		{"stuck, the local owner", ctx, true, []string{"/memories/org/kept.md"}},
		{"caught up, a principal", vic, false, []string{"/memories/org/kept.md"}},
		{"caught up, the local owner", ctx, false, []string{"/memories/org/kept.md", "/memories/workspaces/secret/plan.md"}},
	}
	for _, tt := range tests {
		stuck.Store(tt.stuck)
		if diff := cmp.Diff(tt.want, foundPaths(t, tt.ctx, s, "zorblax")); diff != "" {
			t.Errorf("%s: hits (-want +got):\n%s", tt.name, diff)
		}
	}
}

// foundPaths returns the sorted paths of the hits of a search for query,
// up to 20, as the principal of ctx.
func foundPaths(t *testing.T, ctx context.Context, s *memstore.Store, query string) []string {
	t.Helper()
	res, err := s.Search(ctx, memstore.SearchRequest{Query: query, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range res.Hits {
		got = append(got, h.Path)
	}
	slices.Sort(got)
	return got
}

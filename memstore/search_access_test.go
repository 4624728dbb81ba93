package memstore_test

import (
	"context"
	"slices"
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
			res, err := s.Search(tt.ctx, memstore.SearchRequest{Query: "quarterly ledger", Limit: 20})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range res.Hits {
				got = append(got, h.Path)
			}
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, slices.Compact(got)); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
		})
	}
}

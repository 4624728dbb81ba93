package memstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/selmem/selmem/memstore"
)

func TestStore_Search(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	files := map[string]string{
		"/memories/workspaces/sales/task.md":        "# Task\n\n## Retention\n- Retention policy: keep weekly reports for 13 months.\n\n## Dates\n- Dates are ISO 8601.\n",
		"/memories/workspaces/sales/output.md":      "# Output\n\n- One HTML file, no network requests.\n",
		"/memories/workspaces/ops/task.md":          "# Task\n\n- Page the on-call engineer for outages longer than 5 minutes.\n",
		"/memories/workspaces/ops/tools/pager.yaml": "kind: rest\nendpoint: https://pager.example/api\nauth:\n  token_env: PAGER_TOKEN\n",
		"/memories/org/style.md":                    "# Style\n\n- Answers are brief and cite the rule they follow.\n",
		"/memories/workspaces/sales/notes/old.md":   "---\ninvalid_at: 2026-01-01T00:00:00Z\n---\n# Old\n\n- Retention was 6 months before the policy change.\n",
		"/memories/workspaces/sales/notes/temp.md":  "---\nexpires_at: 2026-05-01T00:00:00Z\n---\n# Temp\n\n- Retention freeze during the audit.\n",
		"/memories/workspaces/sales/notes/next.md":  "---\ninvalid_at: 2027-01-01T00:00:00Z\n---\n# Next\n\n- Retention review planned for next year.\n",
	}
	for p, text := range files {
		mustCreate(t, s, p, text)
	}
	tests := []struct {
		name  string
		req   memstore.SearchRequest
		first string   // expected first hit; "" for none
		has   []string // paths that must be among the hits
		not   []string // paths that must not be among the hits
		none  bool     // no hits at all
	}{
		{name: "exact rule", req: memstore.SearchRequest{Query: "retention policy weekly reports"},
			first: "/memories/workspaces/sales/task.md"},
		{name: "typo", req: memstore.SearchRequest{Query: "retension polcy"},
			first: "/memories/workspaces/sales/task.md"},
		{name: "partial word", req: memstore.SearchRequest{Query: "outage"},
			first: "/memories/workspaces/ops/task.md"},
		{name: "workspace filter", req: memstore.SearchRequest{Query: "task", Workspace: "ops"},
			not: []string{"/memories/workspaces/sales/task.md", "/memories/org/style.md"}},
		{name: "type filter", req: memstore.SearchRequest{Query: "pager token endpoint", Types: []string{"tool"}},
			first: "/memories/workspaces/ops/tools/pager.yaml", not: []string{"/memories/workspaces/ops/task.md"}},
		{name: "scope filter", req: memstore.SearchRequest{Query: "brief answers", Scope: memstore.ScopeOrg},
			first: "/memories/org/style.md", not: []string{"/memories/workspaces/sales/task.md"}},
		{name: "invalid and expired hidden", req: memstore.SearchRequest{Query: "retention", Limit: 20},
			has: []string{"/memories/workspaces/sales/task.md", "/memories/workspaces/sales/notes/next.md"},
			not: []string{"/memories/workspaces/sales/notes/old.md", "/memories/workspaces/sales/notes/temp.md"}},
		{name: "include invalid", req: memstore.SearchRequest{Query: "retention", Limit: 20, IncludeInvalid: true},
			has: []string{"/memories/workspaces/sales/notes/old.md", "/memories/workspaces/sales/notes/temp.md"}},
		{name: "nothing matched", req: memstore.SearchRequest{Query: "xylophone quasar"}, none: true},
		{name: "nothing matched, nonsense words", req: memstore.SearchRequest{Query: "blorfix zantrop"}, none: true},
		{name: "nothing matched in a workspace", req: memstore.SearchRequest{Query: "xylophone quasar", Workspace: "ops"}, none: true},
		// Only a query's first MaxQueryWords distinct words count.
		{name: "a word after the first 32", req: memstore.SearchRequest{Query: fillers(memstore.MaxQueryWords) + " retention"}, none: true},
		{name: "the 32nd word", req: memstore.SearchRequest{Query: fillers(memstore.MaxQueryWords-1) + " retention"},
			has: []string{"/memories/workspaces/sales/task.md"}},
		{name: "a pasted document", req: memstore.SearchRequest{Query: "retention policy weekly reports " + fillers(50000)},
			first: "/memories/workspaces/sales/task.md"},
		{name: "a few words repeated to the body cap", req: memstore.SearchRequest{Query: strings.Repeat("retention policy ", 4<<20/17)},
			first: "/memories/workspaces/sales/task.md"},
		// The memory knows "retention", but not in ops, whose sections are
		// not near enough by vector either.
		{name: "words held only in another workspace", req: memstore.SearchRequest{Query: "retention xylophone", Workspace: "ops"}, none: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := s.Search(ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range res.Hits {
				got = append(got, h.Path)
			}
			if tt.none && len(got) > 0 {
				t.Errorf("hits %v, want none", got)
			}
			if tt.first != "" && (len(got) == 0 || got[0] != tt.first) {
				t.Errorf("hits %v, want %s first", got, tt.first)
			}
			for _, p := range tt.has {
				if !slices.Contains(got, p) {
					t.Errorf("hits %v lack %s", got, p)
				}
			}
			for _, p := range tt.not {
				if slices.Contains(got, p) {
					t.Errorf("hits %v include %s", got, p)
				}
			}
		})
	}

	// Hits carry line ranges and provenance from the front matter.
	mustCreate(t, s, "/memories/workspaces/fin/task.md", taskMD)
	res, err := s.Search(ctx, memstore.SearchRequest{Query: "amounts EUR two decimals", Workspace: "fin"})
	if err != nil || len(res.Hits) == 0 {
		t.Fatalf("search: %v %v", res.Hits, err)
	}
	h := res.Hits[0]
	if h.Heading != "Task › Currency" || h.StartLine != 12 || h.EndLine != 13 || h.Source != "user_confirmed" || h.Type != "task" {
		t.Errorf("hit %+v: want heading 'Task › Currency', lines 12-13, source user_confirmed, type task", h.Chunk)
	}

	// Deleted and renamed files leave the index.
	if _, err := s.Delete(ctx, "/memories/workspaces/ops", nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range searchPaths(t, s, "on-call outages pager") {
		if strings.HasPrefix(p, "/memories/workspaces/ops/") {
			t.Errorf("deleted workspace still found: %s", p)
		}
	}
	if _, err := s.Rename(ctx, "/memories/org/style.md", "/memories/org/voice.md", nil); err != nil {
		t.Fatal(err)
	}
	if got := searchPaths(t, s, "answers brief cite"); len(got) == 0 || got[0] != "/memories/org/voice.md" || slices.Contains(got, "/memories/org/style.md") {
		t.Errorf("after rename: %v", got)
	}
}

// fillers returns n distinct words no memory holds: "q1 q2 …".
func fillers(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = fmt.Sprintf("q%d", i+1)
	}
	return strings.Join(ws, " ")
}

func TestStore_IndexLossLosesNothing(t *testing.T) {
	home := t.TempDir()
	s := openStore(t, home, nil)
	mustCreate(t, s, "/memories/workspaces/w/task.md", "# Task\n\n- Fiscal year starts in April.\n")
	s.Close(context.Background())
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(filepath.Join(home, "index.db"+suffix))
	}
	s = openStore(t, home, nil)
	if got := searchPaths(t, s, "fiscal year april"); len(got) == 0 || got[0] != "/memories/workspaces/w/task.md" {
		t.Errorf("after losing the index: %v", got)
	}
	if err := s.Reindex(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got := searchPaths(t, s, "fiscal year april"); len(got) == 0 {
		t.Errorf("after Reindex: nothing found")
	}
}

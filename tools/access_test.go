package tools_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/tools"
)

// storeWith opens a store in a temporary home holding files, written as
// the local owner.
func storeWith(t *testing.T, files map[string]string) *memstore.Store {
	t.Helper()
	ctx := context.Background()
	store, err := memstore.Open(ctx, t.TempDir(), &memstore.Options{Durability: memstore.DurabilityOS})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close(ctx) })
	if _, err := store.Put(ctx, files, nil); err != nil {
		t.Fatal(err)
	}
	return store
}

// TestTools_Access runs the tools' handlers with the principal in the
// context, as the server puts it there for an authenticated request.
func TestTools_Access(t *testing.T) {
	ctx := context.Background()
	store := storeWith(t, map[string]string{
		"/memories/workspaces/sales/workspace.yaml": "acl:\n  owners: [olga]\n  viewers: [vic]\n",
		"/memories/workspaces/sales/task.md":        "# Task\n",
		"/memories/workspaces/hr/workspace.yaml":    "acl:\n  owners: [hank]\n",
	})
	handlers := map[string]func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error){}
	for _, st := range tools.Tools(store, &tools.Options{Author: "tester", DefaultSource: memstore.SourceInferred}) {
		handlers[st.Tool.Name] = st.Handler
	}
	call := func(user, tool string, args map[string]any) (string, *mcp.CallToolResult) {
		t.Helper()
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = tool, args
		res, err := handlers[tool](access.WithPrincipal(ctx, access.Principal{User: user, Kind: access.KindPerson}), req)
		if err != nil {
			t.Fatalf("%s: protocol error %v", tool, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String(), res
	}

	tests := []struct {
		user, tool string
		args       map[string]any
		wantErr    string // "" for success
	}{
		{"vic", tools.NameView, map[string]any{"path": "/memories/workspaces/hr/workspace.yaml"},
			"it needs a viewer of workspace hr"},
		{"vic", tools.NameHistory, map[string]any{"path": "/memories/workspaces/hr"}, "it needs a viewer of workspace hr"},
		{"vic", tools.NameView, map[string]any{"path": "/memories/workspaces/sales/task.md"}, ""},
		{"vic", tools.NameProfileSource, map[string]any{"workspace": "sales", "name": "orders", "source": map[string]any{"kind": "file", "path": "/nowhere/orders.csv"}},
			"it needs a steward of workspace sales (they are a viewer)"},
		{"olga", tools.NameCreate, map[string]any{"path": "/memories/workspaces/sales/x.md", "file_text": "# X\n"}, ""},
	}
	for _, tt := range tests {
		text, res := call(tt.user, tt.tool, tt.args)
		if res.IsError != (tt.wantErr != "") || !strings.Contains(text, tt.wantErr) {
			t.Errorf("%s %s: isError %v, %q; want error containing %q", tt.user, tt.tool, res.IsError, text, tt.wantErr)
		}
	}

	// A viewer's write is not refused: it becomes a proposal for an owner.
	if text, res := call("vic", tools.NameCreate, map[string]any{"path": "/memories/workspaces/sales/proposed.md", "file_text": "# X\n"}); res.IsError || !strings.Contains(text, "Recorded as proposal") {
		t.Errorf("a viewer's create: isError %v, %q; want a proposal", res.IsError, text)
	}

	// The commit's author is the principal, not the configured author; the
	// history filters by author.
	for author, want := range map[string]int{"olga": 1, "tester": 0} {
		_, res := call("olga", tools.NameHistory, map[string]any{"author": author})
		out, ok := res.StructuredContent.(tools.HistoryOutput)
		if !ok || len(out.Commits) != want {
			t.Errorf("history by %s: %+v, want %d commits", author, res.StructuredContent, want)
		}
	}
}

// TestTools_LongArgumentErrors: an error quoting a megabyte-long argument
// (a scope, an unknown argument's name) is cut, not echoed back whole.
func TestTools_LongArgumentErrors(t *testing.T) {
	store := storeWith(t, map[string]string{"/memories/org/a.md": "# A\n"})
	handlers := map[string]func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error){}
	for _, st := range tools.Tools(store, &tools.Options{Author: "tester"}) {
		handlers[st.Tool.Name] = st.Handler
	}
	long := strings.Repeat("é", 1<<20)
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"a long scope", map[string]any{"query": "a", "scope": long}},
		{"a long argument name", map[string]any{"query": "a", long: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = tools.NameSearch, tc.args
			res, err := handlers[tools.NameSearch](context.Background(), req)
			if err != nil || !res.IsError {
				t.Fatalf("%v %+v, want an error result", err, res)
			}
			text := res.Content[0].(mcp.TextContent).Text
			if len(text) > 3000 || !strings.HasPrefix(text, "Error") || !utf8.ValidString(text) {
				t.Errorf("error text of %d bytes, starting %.60q", len(text), text)
			}
		})
	}
}

package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/refresh"
	"github.com/selmem/selmem/schemas"
	"github.com/selmem/selmem/tools"
)

func TestTemplateTools(t *testing.T) {
	ctx := context.Background()
	store := storeWith(t, map[string]string{
		"/memories/workspaces/revenue/workspace.yaml":           "title: Revenue\nacl:\n  owners: [olga]\n  viewers: [vic]\n",
		"/memories/workspaces/revenue/task.md":                  "# Task\n\n- Net of refunds.\n",
		"/memories/workspaces/revenue/tools/orders.yaml":        "kind: rest\nurl: https://api.example.com/orders\ncredential: olga-api\n",
		"/memories/workspaces/revenue/artifacts/d/x.html":       "<p>x</p>\n",
		"/memories/workspaces/revenue/artifacts/d/binding.yaml": "connector: orders\n",
	})
	var changed []string
	all := tools.Tools(store, &tools.Options{Changed: func(p []string) { changed = append(changed, p...) }})
	call := serve(t, all)

	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		isError bool
		want    string
	}{
		{"publish", tools.NamePublishTemplate, map[string]any{"workspace": "revenue", "version": "1.0.0"}, false, "Published template revenue@1.0.0"},
		{"publish again", tools.NamePublishTemplate, map[string]any{"workspace": "revenue", "version": "1.0.0"}, true, "already exists"},
		{"load", tools.NameLoadTemplate, map[string]any{"template": "revenue@1.0.0", "new_workspace": "mine"}, false, "Credential bindings removed: tools/orders.yaml: credential"},
		{"load into an existing workspace", tools.NameLoadTemplate, map[string]any{"template": "revenue@1.0.0", "new_workspace": "mine"}, true, "already exists"},
		{"load a missing version lists the templates", tools.NameLoadTemplate, map[string]any{"template": "revenue@2", "new_workspace": "x"}, true, "Templates you may load: revenue@1.0.0."},
		{"unknown argument", tools.NameLoadTemplate, map[string]any{"template": "revenue@1.0.0", "workspace": "x"}, true, "does not take"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, sc, isErr := call(tt.tool, tt.args)
			if isErr != tt.isError || !strings.Contains(text, tt.want) {
				t.Fatalf("%s = %q (isError %v), want %q (isError %v)", tt.tool, text, isErr, tt.want, tt.isError)
			}
			if tt.name == "load" {
				if sc["workspace"] != "mine" || len(sc["unbound"].([]any)) != 1 {
					t.Errorf("structured output = %v", sc)
				}
				if !slices.Contains(changed, "/memories/workspaces/mine/task.md") {
					t.Errorf("changed paths %v do not name the loaded files", changed)
				}
			}
		})
	}

	// A refused role is shown to the model with the role it needs.
	var publish server.ServerTool
	for _, st := range all {
		if st.Tool.Name == tools.NamePublishTemplate {
			publish = st
		}
	}
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tools.NamePublishTemplate, map[string]any{"workspace": "revenue", "version": "2"}
	res, err := publish.Handler(access.WithPrincipal(ctx, access.Principal{User: "vic", Kind: access.KindPerson}), req)
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(mcp.TextContent).Text; !res.IsError || !strings.Contains(text, "needs an owner of workspace revenue") {
		t.Errorf("viewer's publish = %q (isError %v)", text, res.IsError)
	}
}

// serve serves the tools to an in-process MCP client and returns a
// function calling one: its text, structured output and isError.
func serve(t *testing.T, all []server.ServerTool) func(name string, args map[string]any) (string, map[string]any, bool) {
	t.Helper()
	ctx := context.Background()
	srv := server.NewMCPServer("selmem-test", "v0", server.WithToolCapabilities(false))
	srv.AddTools(all...)
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return func(name string, args map[string]any) (string, map[string]any, bool) {
		t.Helper()
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("protocol error: %v", err)
		}
		sc, _ := res.StructuredContent.(map[string]any)
		return res.Content[0].(mcp.TextContent).Text, sc, res.IsError
	}
}

// TestTemplateTools_Swap is the template scenario through the
// tools: publish, load into a new workspace, point the connector at the
// caller's own, schema-compatible data, refresh; data that does not fit
// is refused.
func TestTemplateTools_Swap(t *testing.T) {
	ctx := context.Background()
	home, data := t.TempDir(), t.TempDir()
	store, err := memstore.Open(ctx, home, &memstore.Options{Durability: memstore.DurabilityOS})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close(ctx) })
	snaps, err := refresh.OpenSnapshots(filepath.Join(home, "data"), 3)
	if err != nil {
		t.Fatal(err)
	}
	rf := refresh.New(store, snaps, &refresh.Options{Access: schemas.Access{Roots: []string{data}}})
	write := func(name, text string) string {
		p := filepath.Join(data, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	theirs := write("theirs.csv", "region,amount\nEMEA,10.5\nAMER,20\n")
	if _, err := store.Put(ctx, map[string]string{
		refresh.ConnectorPath("sales", "orders"):             "kind: file\npath: " + theirs + "\n",
		refresh.BindingPath("sales", "dash"):                 "connector: orders\n",
		refresh.ArtifactDir("sales", "dash") + "/index.html": "<!doctype html><script type=\"application/json\" id=\"selmem-data\"></script>\n",
	}, nil); err != nil {
		t.Fatal(err)
	}
	call := serve(t, tools.Tools(store, &tools.Options{Refresher: rf, DataRoots: []string{data}}))
	steps := []struct {
		tool    string
		args    map[string]any
		outcome string // refresh_artifact's outcome
		want    string // in the text
	}{
		{tools.NameRefreshArtifact, map[string]any{"workspace": "sales", "artifact": "dash"}, refresh.OutcomeRefreshed, ""},
		{tools.NamePublishTemplate, map[string]any{"workspace": "sales", "version": "1"}, "", ""},
		{tools.NameLoadTemplate, map[string]any{"template": "sales@1", "new_workspace": "mine"}, "", ""},
		{tools.NameStrReplace, map[string]any{"path": refresh.ConnectorPath("mine", "orders"), "old_str": theirs,
			"new_str": write("mine.csv", "amount,region,channel\n7,APAC,web\n8.25,EMEA,store\n")}, "", ""},
		{tools.NameRefreshArtifact, map[string]any{"workspace": "mine", "artifact": "dash"}, refresh.OutcomeRefreshed, "2 rows, 3 columns (new: channel)"},
		{tools.NameLoadTemplate, map[string]any{"template": "sales@1", "new_workspace": "bad"}, "", ""},
		{tools.NameStrReplace, map[string]any{"path": refresh.ConnectorPath("bad", "orders"), "old_str": theirs,
			"new_str": write("bad.csv", "region,units\nEMEA,3\n")}, "", ""},
		{tools.NameRefreshArtifact, map[string]any{"workspace": "bad", "artifact": "dash"}, refresh.OutcomeIncompatible, "missing columns amount"},
	}
	for i, st := range steps {
		text, sc, isErr := call(st.tool, st.args)
		if isErr {
			t.Fatalf("step %d %s: %s", i, st.tool, text)
		}
		if st.outcome != "" && sc["outcome"] != st.outcome || !strings.Contains(text, st.want) {
			t.Fatalf("step %d %s: outcome %v, want %s and a text with %q: %s", i, st.tool, sc["outcome"], st.outcome, st.want, text)
		}
	}
}

package tools_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/tools"
)

func TestTemplateTools(t *testing.T) {
	ctx := context.Background()
	store, err := memstore.Open(ctx, t.TempDir(), &memstore.Options{Durability: memstore.DurabilityOS})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close(ctx) })
	if _, err := store.Put(ctx, map[string]string{
		"/memories/workspaces/revenue/workspace.yaml":           "title: Revenue\nacl:\n  owners: [olga]\n  viewers: [vic]\n",
		"/memories/workspaces/revenue/task.md":                  "# Task\n\n- Net of refunds.\n",
		"/memories/workspaces/revenue/tools/orders.yaml":        "kind: rest\nurl: https://api.example.com/orders\ncredential: olga-api\n",
		"/memories/workspaces/revenue/artifacts/d/x.html":       "<p>x</p>\n",
		"/memories/workspaces/revenue/artifacts/d/binding.yaml": "connector: orders\n",
	}, nil); err != nil {
		t.Fatal(err)
	}
	var changed []string
	all := tools.Tools(store, &tools.Options{Changed: func(p []string) { changed = append(changed, p...) }})
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
	call := func(name string, args map[string]any) (string, map[string]any, bool) {
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

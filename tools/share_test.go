package tools_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/tools"
)

// shareEnv serves the tools over an in-process MCP client; each call runs
// as a principal, carried in the request's context as the HTTP server
// carries it.
type shareEnv struct {
	home    string
	store   *memstore.Store
	c       *client.Client
	mu      sync.Mutex
	changed []string
}

func newShareEnv(t *testing.T) *shareEnv {
	t.Helper()
	ctx := context.Background()
	e := &shareEnv{home: t.TempDir()}
	store, err := memstore.Open(ctx, e.home, &memstore.Options{Durability: memstore.DurabilityOS})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close(ctx) })
	e.store = store
	for p, text := range map[string]string{
		"/memories/workspaces/sales/workspace.yaml": "acl:\n  owners: [olivia]\n  stewards: [steve]\n  viewers: [vera]\n",
		"/memories/workspaces/sales/task.md":        "# Task\n\nReport revenue by region.\n",
		"/memories/workspaces/sales/output.md":      "# Output\n\nA table.\n",
	} {
		if _, err := store.Create(ctx, p, text, nil); err != nil {
			t.Fatal(err)
		}
	}
	srv := server.NewMCPServer("selmem-test", "v0", server.WithToolCapabilities(false))
	tools.Register(srv, store, &tools.Options{Shared: true, Changed: func(paths []string) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.changed = append(e.changed, paths...)
	}})
	e.c = connect(t, srv, nil)
	return e
}

// connect returns an initialised in-process client of srv; onNote, when
// set, receives its notifications.
func connect(t *testing.T, srv *server.MCPServer, onNote func(mcp.JSONRPCNotification)) *client.Client {
	t.Helper()
	ctx := context.Background()
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	if onNote != nil {
		c.OnNotification(onNote)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "v0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c
}

// call runs tool as user and returns its text, structured output and
// isError.
func (e *shareEnv) call(t *testing.T, user, tool string, args map[string]any) (string, map[string]any, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctx = access.WithPrincipal(ctx, access.Principal{User: user, Kind: access.KindPerson})
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := e.c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s: protocol error: %v", tool, err)
	}
	return unpack(res)
}

// unpack returns a tool result's text, structured output and isError.
func unpack(res *mcp.CallToolResult) (string, map[string]any, bool) {
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	sc, _ := res.StructuredContent.(map[string]any)
	return text.String(), sc, res.IsError
}

// lastAuthor returns the author and message of main's newest commit.
func (e *shareEnv) lastAuthor(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "-C", filepath.Join(e.home, "memory"), "log", "-1", "--format=%an%n%B", "main").CombinedOutput()
	if err != nil {
		t.Fatalf("git log: %v: %s", err, out)
	}
	return string(out)
}

func (e *shareEnv) takeChanged() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.changed
	e.changed = nil
	return out
}

const salesTask = "/memories/workspaces/sales/task.md"

func TestShareTools(t *testing.T) {
	ws := map[string]any{"workspace": "sales"}
	edit := func(from, to string, extra ...string) map[string]any {
		a := map[string]any{"path": salesTask, "old_str": from, "new_str": to}
		for i := 0; i+1 < len(extra); i += 2 {
			a[extra[i]] = extra[i+1]
		}
		return a
	}
	view := func(e *shareEnv, user string) string {
		text, _, _ := e.call(t, user, tools.NameView, map[string]any{"path": salesTask})
		return text
	}
	type step struct {
		user, tool string
		args       map[string]any
		isErr      bool
		contains   []string
	}
	for _, c := range []struct {
		name  string
		steps []step
		check func(t *testing.T, e *shareEnv)
	}{
		{
			name: "draft is invisible until published",
			steps: []step{
				{"vera", tools.NameDraftOpen, ws, true, []string{"needs a steward", "viewer"}},
				{"steve", tools.NameDraftOpen, ws, false, []string{"Opened your draft"}},
				{"steve", tools.NameStrReplace, edit("revenue", "margin"), false, []string{"In your draft"}},
			},
			check: func(t *testing.T, e *shareEnv) {
				if got := e.takeChanged(); len(got) != 0 {
					t.Errorf("a draft write notified subscribers of %v", got)
				}
				if !strings.Contains(view(e, "steve"), "margin") || strings.Contains(view(e, "vera"), "margin") {
					t.Errorf("steve sees %q, vera sees %q", view(e, "steve"), view(e, "vera"))
				}
				text, sc, isErr := e.call(t, "steve", tools.NamePublish, map[string]any{"workspace": "sales", "message": "margin"})
				if isErr || sc["commit"] == "" || !strings.Contains(text, "Published") {
					t.Fatalf("publish: %s %v", text, sc)
				}
				if !strings.Contains(view(e, "vera"), "margin") {
					t.Errorf("after publish vera sees %q", view(e, "vera"))
				}
				if got := e.takeChanged(); len(got) != 1 || got[0] != "/memories/workspaces/sales" {
					t.Errorf("publish notified %v", got)
				}
				if got := e.lastAuthor(t); !strings.HasPrefix(got, "steve\npublish sales: margin") {
					t.Errorf("publish commit: %q", got)
				}
			},
		},
		{
			name: "conflict returns both versions and changes nothing",
			steps: []step{
				{"steve", tools.NameDraftOpen, ws, false, nil},
				{"steve", tools.NameStrReplace, edit("revenue", "margin"), false, nil},
				{"olivia", tools.NameStrReplace, edit("revenue", "bookings"), false, nil},
				{"steve", tools.NamePublish, map[string]any{"workspace": "sales", "message": "m"}, true,
					[]string{"published version", "Report bookings", "your version", "Report margin"}},
				{"steve", tools.NameDraftDiscard, ws, false, []string{"Discarded"}},
				{"steve", tools.NameDraftDiscard, ws, true, []string{"no open draft"}},
			},
			check: func(t *testing.T, e *shareEnv) {
				if got := view(e, "steve"); !strings.Contains(got, "bookings") {
					t.Errorf("after discard steve sees %q", got)
				}
			},
		},
		{
			name: "an inferred write by a viewer is a proposal an owner approves",
			steps: []step{
				{"vera", tools.NameStrReplace, edit("revenue", "churn", "source", "inferred"), false, []string{"proposal", "owner"}},
				{"vera", tools.NameProposalApprove, map[string]any{"workspace": "sales", "id": "x"}, true, []string{"needs an owner"}},
			},
			check: func(t *testing.T, e *shareEnv) {
				if strings.Contains(view(e, "olivia"), "churn") {
					t.Error("the proposal was published before approval")
				}
				text, sc, isErr := e.call(t, "olivia", tools.NameProposals, ws)
				props, _ := sc["proposals"].([]any)
				if isErr || len(props) != 1 {
					t.Fatalf("proposals: %s %v", text, sc)
				}
				p := props[0].(map[string]any)
				if p["proposer"] != "vera" || p["source"] != "inferred" || !strings.Contains(p["diff"].(string), "+Report churn by region.") {
					t.Errorf("proposal %v", p)
				}
				id := p["id"].(string)
				if text, _, isErr := e.call(t, "olivia", tools.NameProposalApprove, map[string]any{"workspace": "sales", "id": id}); isErr {
					t.Fatalf("approve: %s", text)
				}
				if got := e.lastAuthor(t); !strings.HasPrefix(got, "vera\n") || !strings.Contains(got, "Approved-by: olivia") {
					t.Errorf("approved commit: %q", got)
				}
				if !strings.Contains(view(e, "vera"), "churn") {
					t.Error("approval did not publish")
				}
			},
		},
		{
			name: "reject",
			steps: []step{
				{"vera", tools.NameCreate, map[string]any{"path": "/memories/workspaces/sales/notes.md", "file_text": "idea\n"}, false, []string{"proposal"}},
			},
			check: func(t *testing.T, e *shareEnv) {
				_, sc, _ := e.call(t, "vera", tools.NameProposals, ws)
				id := sc["proposals"].([]any)[0].(map[string]any)["id"].(string)
				if text, _, isErr := e.call(t, "steve", tools.NameProposalReject, map[string]any{"workspace": "sales", "id": id}); !isErr {
					t.Errorf("a steward rejected: %s", text)
				}
				if text, _, isErr := e.call(t, "olivia", tools.NameProposalReject, map[string]any{"workspace": "sales", "id": id}); isErr {
					t.Fatalf("reject: %s", text)
				}
				if text, _, _ := e.call(t, "olivia", tools.NameProposals, ws); !strings.Contains(text, "no pending proposals") {
					t.Errorf("after reject: %s", text)
				}
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newShareEnv(t)
			for _, s := range c.steps {
				text, _, isErr := e.call(t, s.user, s.tool, s.args)
				if isErr != s.isErr {
					t.Fatalf("%s as %s: isError %v, want %v: %s", s.tool, s.user, isErr, s.isErr, text)
				}
				for _, want := range s.contains {
					if !strings.Contains(text, want) {
						t.Errorf("%s as %s: result lacks %q:\n%s", s.tool, s.user, want, text)
					}
				}
			}
			if c.check != nil {
				c.check(t, e)
			}
		})
	}
}

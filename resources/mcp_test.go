package resources_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/profiler"
	"github.com/selmem/selmem/resources"
)

// legacy is the protocol version before subscriptions/listen.
const legacy = "2025-11-25"

// events collects the notifications a client received.
type events struct {
	mu          sync.Mutex
	updated     []string
	listChanged int
	signal      chan struct{}
}

func (e *events) note(f func()) {
	e.mu.Lock()
	f()
	e.mu.Unlock()
	select {
	case e.signal <- struct{}{}:
	default:
	}
}

// waitFor waits until cond holds for the collected events.
func (e *events) waitFor(tb testing.TB, what string, cond func(*events) bool) {
	tb.Helper()
	deadline := time.After(5 * time.Second)
	for {
		e.mu.Lock()
		ok := cond(e)
		e.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-e.signal:
		case <-deadline:
			tb.Fatalf("timed out waiting for %s", what)
		}
	}
}

// harness is an mcp-go server with Register, served over streamable HTTP, and
// a go-sdk client connected to it.
type harness struct {
	store  *memstore.Store
	reg    *resources.Registry
	client *sdk.ClientSession
	ev     *events
}

// newHarness builds the server the way cmd/selmem serve must:
// resource capabilities with subscribe and listChanged, prompt capabilities.
// protocol is the version the client asks for; "" lets the go-sdk pick
// (2026-07-28, with subscriptions/listen).
func newHarness(tb testing.TB, files map[string]string, protocol ...string) *harness {
	tb.Helper()
	h, url := serve(tb, files)
	h.client, h.ev = connect(tb, url, append(protocol, legacy)[0], "")
	return h
}

// serve serves a store holding files over streamable HTTP. A request with
// the header X-Test-User acts for that person (as part AUTH's
// authentication would establish); one without acts for the local owner.
func serve(tb testing.TB, files map[string]string) (*harness, string) {
	tb.Helper()
	store := newStore(tb, files)
	srv := server.NewMCPServer("selmem-test", "v0",
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(false))
	reg := resources.Register(srv, store, &resources.Options{Now: clock, Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(server.NewStreamableHTTPServer(srv, server.WithHTTPContextFunc(
		func(ctx context.Context, r *http.Request) context.Context {
			if u := r.Header.Get("X-Test-User"); u != "" {
				var groups []string
				if g := r.Header.Get("X-Test-Groups"); g != "" {
					groups = strings.Split(g, ",")
				}
				return access.WithPrincipal(ctx, access.Principal{User: u, Groups: groups, Kind: access.KindPerson})
			}
			return ctx
		})))
	tb.Cleanup(ts.Close)
	return &harness{store: store, reg: reg}, ts.URL + "/mcp"
}

// userHeader adds X-Test-User to every request, and X-Test-Groups when
// groups holds some.
type userHeader struct {
	user   string
	groups *atomic.Pointer[string]
	next   http.RoundTripper
}

func (u userHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-User", u.user)
	if u.groups != nil {
		if g := u.groups.Load(); g != nil && *g != "" {
			r.Header.Set("X-Test-Groups", *g)
		}
	}
	return u.next.RoundTrip(r)
}

// connect connects a go-sdk client to url, acting for user ("" for the
// local owner), and collects its notifications.
func connect(tb testing.TB, url, protocol, user string) (*sdk.ClientSession, *events) {
	tb.Helper()
	return connectIn(tb, url, protocol, user, nil)
}

// connectIn is connect for a user whose requests name the groups (comma
// separated) groups holds when they are made.
func connectIn(tb testing.TB, url, protocol, user string, groups *atomic.Pointer[string]) (*sdk.ClientSession, *events) {
	tb.Helper()
	ev := &events{signal: make(chan struct{}, 1)}
	client := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "v0"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
			ev.note(func() { ev.updated = append(ev.updated, req.Params.URI) })
		},
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) {
			ev.note(func() { ev.listChanged++ })
		},
	})
	tr := &sdk.StreamableClientTransport{Endpoint: url}
	if user != "" {
		tr.HTTPClient = &http.Client{Transport: userHeader{user: user, groups: groups, next: http.DefaultTransport}}
	}
	cs, err := client.Connect(context.Background(), tr, &sdk.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cs.Close() })
	return cs, ev
}

func TestRegister_ListResources(t *testing.T) {
	h := newHarness(t, fixture)
	ctx := context.Background()
	res, err := h.client.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI+" "+r.MIMEType)
		if r.Description == "" {
			t.Errorf("%s has no description", r.URI)
		}
	}
	slices.Sort(uris)
	golden(t, "list-resources.txt", strings.Join(uris, "\n")+"\n")

	tmpl, err := h.client.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var templates []string
	for _, tp := range tmpl.ResourceTemplates {
		templates = append(templates, tp.URITemplate+" "+tp.MIMEType)
	}
	slices.Sort(templates)
	golden(t, "list-templates.txt", strings.Join(templates, "\n")+"\n")
}

func TestRegister_ReadResource(t *testing.T) {
	h := newHarness(t, fixture)
	tests := []struct {
		uri, mime, golden string
	}{
		{"memory://workspaces", "text/markdown", "read-workspaces.md"},
		{"memory://workspaces/sales/context", "text/markdown", "compose-full.md"},
		{"memory://workspaces/sales/task", "text/markdown", "read-task.md"},
		{"memory://workspaces/sales/output", "text/markdown", "read-output.md"},
		{"memory://workspaces/sales/tools", "application/yaml", "read-tools.yaml"},
		{"memory://workspaces/sales/schemas", "text/markdown", "read-schemas.md"},
		{"memory://workspaces/sales/schemas/orders", "text/markdown", "read-schema-orders.md"},
		{"memory://workspaces/sales/schemas/relationships", "text/markdown", "read-schema-relationships.md"},
		{"memory://workspaces/empty/context", "text/markdown", "compose-empty.md"},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			res, err := h.client.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: tt.uri})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Contents) != 1 {
				t.Fatalf("%d contents, want 1", len(res.Contents))
			}
			c := res.Contents[0]
			if c.URI != tt.uri || c.MIMEType != tt.mime {
				t.Errorf("uri, mime = %s, %s; want %s, %s", c.URI, c.MIMEType, tt.uri, tt.mime)
			}
			if strings.HasPrefix(tt.golden, "compose-") && *update {
				return // written by TestCompose
			}
			golden(t, tt.golden, c.Text)
		})
	}
}

// TestRegister_SchemasOverBudget checks that /schemas turns into an index of
// headlines with URIs when the profiles exceed the budget.
func TestRegister_SchemasOverBudget(t *testing.T) {
	store := newStore(t, manySchemas)
	srv := server.NewMCPServer("t", "v0", server.WithResourceCapabilities(true, true))
	resources.Register(srv, store, &resources.Options{Now: clock, BudgetTokens: 200})
	ts := httptest.NewServer(server.NewStreamableHTTPServer(srv))
	defer ts.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "v0"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "memory://workspaces/sales/schemas"})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Contents[0].Text
	if !strings.Contains(text, "this is an index") || !strings.Contains(text, "(memory://workspaces/sales/schemas/source12)") {
		t.Errorf("over-budget schemas are not an index with URIs:\n%s", text)
	}
	golden(t, "read-schemas-index.md", text)
	ctxRes, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "memory://workspaces/sales/context"})
	if err != nil {
		t.Fatal(err)
	}
	if n := profiler.Tokens(ctxRes.Contents[0].Text); n > 200 {
		t.Logf("context is %d tokens over a 200-token budget (the smallest form)", n)
	}
}

func TestRegister_NotFound(t *testing.T) {
	h := newHarness(t, without(fixture, "/memories/workspaces/sales/tools/"))
	for _, uri := range []string{
		"memory://workspaces/missing/context",
		"memory://workspaces/missing/task",
		"memory://workspaces/sales/schemas/missing",
		"memory://workspaces/sales/schemas/legacy", // invalidated
		"memory://workspaces/sales/tools",          // no tools
		"memory://workspaces/empty/task",
		"memory://workspaces/../context",
		"memory://workspaces/%2e%2e/context",
		"memory://workspaces/%252e%252e/context",
		"memory://workspaces/a/b/context",
		"memory://workspaces/a%2Fb/context",
		"memory://workspaces/sales/schemas/..",
		"memory://workspaces/sales/schemas/%2e%2e",
		"memory://workspaces/sales/schemas/..%2Ftask",
		"memory://workspaces/.git/context",
		"memory://workspaces/sales/notes",
		"memory://workspaces/sales",
		"memory://elsewhere",
	} {
		t.Run(uri, func(t *testing.T) {
			_, err := h.client.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: uri})
			if err == nil {
				t.Fatal("read succeeded, want resource not found")
			}
			if msg := err.Error(); !strings.Contains(msg, "resource not found") {
				t.Errorf("error %q does not say resource not found", msg)
			}
			if strings.Contains(err.Error(), h.store.Dir()) {
				t.Errorf("error %q reveals a host path", err)
			}
		})
	}
}

func TestRegister_Prompt(t *testing.T) {
	h := newHarness(t, fixture)
	ctx := context.Background()
	list, err := h.client.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Prompts) != 1 || list.Prompts[0].Name != "start_session" ||
		len(list.Prompts[0].Arguments) != 1 || !list.Prompts[0].Arguments[0].Required {
		t.Fatalf("prompts = %+v, want start_session(workspace)", list.Prompts)
	}
	res, err := h.client.GetPrompt(ctx, &sdk.GetPromptParams{Name: "start_session", Arguments: map[string]string{"workspace": "sales"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
		t.Fatalf("messages = %+v, want one user message", res.Messages)
	}
	text, ok := res.Messages[0].Content.(*sdk.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Messages[0].Content)
	}
	want, _ := resources.Compose(load(t, h.store, "sales"), resources.DefaultBudgetTokens, profiler.Tokens)
	if text.Text != want {
		t.Errorf("prompt text differs from the composed context")
	}
	for _, args := range []map[string]string{{"workspace": "missing"}, {"workspace": ".."}, {}} {
		if _, err := h.client.GetPrompt(ctx, &sdk.GetPromptParams{Name: "start_session", Arguments: args}); err == nil {
			t.Errorf("GetPrompt(%v) succeeded, want an error", args)
		}
	}
}

func TestRegistry_Changed(t *testing.T) {
	for _, protocol := range []string{legacy, ""} {
		t.Run("protocol="+protocol, func(t *testing.T) { testChanged(t, protocol) })
	}
}

func testChanged(t *testing.T, protocol string) {
	h := newHarness(t, fixture, protocol)
	ctx := context.Background()
	const taskURI = "memory://workspaces/sales/task"
	if err := h.client.Subscribe(ctx, &sdk.SubscribeParams{URI: taskURI}); err != nil {
		t.Fatal(err)
	}

	// An edit of task.md: resources/updated for the subscribed task.
	if _, err := h.store.StrReplace(ctx, "/memories/workspaces/sales/task.md", "net of refunds", "net of refunds and fees", nil); err != nil {
		t.Fatal(err)
	}
	h.reg.Changed([]string{"/memories/workspaces/sales/task.md"})
	h.ev.waitFor(t, "resources/updated for "+taskURI, func(e *events) bool { return slices.Contains(e.updated, taskURI) })
	res, err := h.client.ReadResource(ctx, &sdk.ReadResourceParams{URI: taskURI})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Contents[0].Text, "refunds and fees") {
		t.Errorf("task after the edit:\n%s", res.Contents[0].Text)
	}

	// A write that no listed resource shows: no list change, no update.
	h.ev.mu.Lock()
	before, updates := h.ev.listChanged, len(h.ev.updated)
	h.ev.mu.Unlock()
	if _, err := h.store.Create(ctx, "/memories/workspaces/sales/notes/n.md", "# n\n", nil); err != nil {
		t.Fatal(err)
	}
	h.reg.Changed([]string{"/memories/workspaces/sales/notes/n.md"})

	// A new workspace: resources/list_changed, and it is listed.
	if _, err := h.store.Create(ctx, "/memories/workspaces/fresh/task.md", "- new rule\n", nil); err != nil {
		t.Fatal(err)
	}
	h.reg.Changed([]string{"/memories/workspaces/fresh/task.md"})
	h.ev.waitFor(t, "resources/list_changed", func(e *events) bool { return e.listChanged > before })
	h.ev.mu.Lock()
	if got := len(h.ev.updated); got != updates {
		t.Errorf("%d resources/updated after writes to unsubscribed resources, want %d", got, updates)
	}
	h.ev.mu.Unlock()
	list, err := h.client.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(list.Resources, func(r *sdk.Resource) bool { return r.URI == "memory://workspaces/fresh/task" }) {
		t.Error("the new workspace's task is not listed")
	}

	// Deleting the workspace takes its resources off the list.
	if _, err := h.store.Delete(ctx, "/memories/workspaces/fresh", nil); err != nil {
		t.Fatal(err)
	}
	h.ev.mu.Lock()
	before = h.ev.listChanged
	h.ev.mu.Unlock()
	h.reg.Changed([]string{"/memories/workspaces/fresh"})
	h.ev.waitFor(t, "resources/list_changed after the delete", func(e *events) bool { return e.listChanged > before })
	list, err = h.client.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(list.Resources, func(r *sdk.Resource) bool { return strings.Contains(r.URI, "/fresh/") }) {
		t.Error("the deleted workspace is still listed")
	}

	if protocol != legacy {
		return // unsubscribing closes the listen stream asynchronously
	}
	// After unsubscribing, edits send nothing.
	if err := h.client.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: taskURI}); err != nil {
		t.Fatal(err)
	}
	h.ev.mu.Lock()
	updates = len(h.ev.updated)
	h.ev.mu.Unlock()
	h.reg.Changed([]string{"/memories/workspaces/sales/task.md"})
	time.Sleep(100 * time.Millisecond)
	h.ev.mu.Lock()
	if got := len(h.ev.updated); got != updates {
		t.Errorf("resources/updated after unsubscribing")
	}
	h.ev.mu.Unlock()
}

package resources_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/resources"
)

// TestAccess serves the fixture with ana as owner and vic as viewer of
// sales, to ana, vic and otto (no role).
func TestAccess(t *testing.T) {
	for _, protocol := range []string{legacy, ""} {
		t.Run("protocol="+protocol, func(t *testing.T) { testAccess(t, protocol) })
	}
}

func testAccess(t *testing.T, protocol string) {
	files := maps.Clone(fixture)
	files["/memories/workspaces/sales/workspace.yaml"] = strings.Replace(files["/memories/workspaces/sales/workspace.yaml"],
		"owners: [ana]", "owners: [ana]\n  viewers: [vic]", 1)
	h, url := serve(t, files)
	ctx := context.Background()
	const taskURI = "memory://workspaces/sales/task"
	ana, anaEv := connect(t, url, protocol, "ana")
	vic, vicEv := connect(t, url, protocol, "vic")
	otto, ottoEv := connect(t, url, protocol, "otto")

	// otto has no role: the listing leaves sales out, reads and
	// subscriptions are refused with the role needed.
	list, err := otto.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(list.Resources, func(r *sdk.Resource) bool { return strings.Contains(r.URI, "/sales/") }); i >= 0 {
		t.Errorf("otto's resource list shows %s", list.Resources[i].URI)
	}
	if _, err := otto.ReadResource(ctx, &sdk.ReadResourceParams{URI: taskURI}); err == nil || !strings.Contains(err.Error(), "it needs a viewer of workspace sales") {
		t.Errorf("otto reads the task: %v", err)
	}
	if _, err := otto.GetPrompt(ctx, &sdk.GetPromptParams{Name: "start_session", Arguments: map[string]string{"workspace": "sales"}}); err == nil {
		t.Error("otto gets the session context of sales")
	}
	// resources/subscribe is refused with the role needed; the go-sdk opens
	// a subscriptions/listen stream in the background instead, whose
	// refusal it does not return: no notification reaches otto either way.
	err = otto.Subscribe(ctx, &sdk.SubscribeParams{URI: taskURI})
	if protocol == legacy && (err == nil || !strings.Contains(err.Error(), "it needs a viewer")) {
		t.Errorf("otto subscribes to the task: %v", err)
	}
	res, err := vic.ReadResource(ctx, &sdk.ReadResourceParams{URI: taskURI})
	if err != nil || !strings.Contains(res.Contents[0].Text, "Revenue") {
		t.Fatalf("vic reads the task: %v", err)
	}

	// ana and vic subscribe; the owner then removes vic: only ana hears of
	// the next change.
	for _, c := range []*sdk.ClientSession{ana, vic} {
		if err := c.Subscribe(ctx, &sdk.SubscribeParams{URI: taskURI}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.store.StrReplace(ctx, "/memories/workspaces/sales/workspace.yaml", "\n  viewers: [vic]", "", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.StrReplace(ctx, "/memories/workspaces/sales/task.md", "net of refunds", "net of refunds and fees", nil); err != nil {
		t.Fatal(err)
	}
	h.reg.Changed([]string{"/memories/workspaces/sales/task.md"})
	anaEv.waitFor(t, "resources/updated for ana", func(e *events) bool { return slices.Contains(e.updated, taskURI) })
	time.Sleep(100 * time.Millisecond) // vic's notification, were it sent, would have arrived
	for who, ev := range map[string]*events{"vic, no longer a viewer,": vicEv, "otto": ottoEv} {
		ev.mu.Lock()
		if slices.Contains(ev.updated, taskURI) {
			t.Errorf("%s was told of the change", who)
		}
		ev.mu.Unlock()
	}
}

// TestAccess_WorkspaceList checks that a subscriber of memory://workspaces
// is told of the changes to the list it reads, and of no others: a
// workspace created, retitled or deleted out of its sight tells it nothing.
func TestAccess_WorkspaceList(t *testing.T) {
	for _, protocol := range []string{legacy, ""} {
		t.Run("protocol="+protocol, func(t *testing.T) { testWorkspaceList(t, protocol) })
	}
}

func testWorkspaceList(t *testing.T, protocol string) {
	h, url := serve(t, fixture)
	ctx := context.Background()
	const hidden = "/memories/workspaces/plans/workspace.yaml"
	clients := map[string]*events{}
	for _, user := range []string{"ana", "otto"} {
		c, ev := connect(t, url, protocol, user)
		if err := c.Subscribe(ctx, &sdk.SubscribeParams{URI: resources.WorkspacesURI}); err != nil {
			t.Fatal(err)
		}
		clients[user] = ev
	}
	write := func(f func() (memstore.WriteResult, error)) func(t *testing.T) {
		return func(t *testing.T) {
			t.Helper()
			if _, err := f(); err != nil {
				t.Fatal(err)
			}
		}
	}
	steps := []struct {
		name  string
		write func(t *testing.T)
		told  []string
	}{
		{"a workspace only ana may read", write(func() (memstore.WriteResult, error) {
			return h.store.Create(ctx, hidden, "acl:\n  owners: [ana]\n", nil)
		}), []string{"ana"}},
		{"its title changes", write(func() (memstore.WriteResult, error) {
			return h.store.StrReplace(ctx, hidden, "acl:", "title: Plans\nacl:", nil)
		}), []string{"ana"}},
		{"otto becomes a viewer", write(func() (memstore.WriteResult, error) {
			return h.store.StrReplace(ctx, hidden, "owners: [ana]", "owners: [ana]\n  viewers: [otto]", nil)
		}), []string{"otto"}},
		{"it is deleted", write(func() (memstore.WriteResult, error) {
			return h.store.Delete(ctx, "/memories/workspaces/plans", nil)
		}), []string{"ana", "otto"}},
		{"a workspace only otto may read", write(func() (memstore.WriteResult, error) {
			return h.store.Create(ctx, "/memories/workspaces/otto-notes/workspace.yaml", "acl:\n  owners: [otto]\n", nil)
		}), []string{"otto"}},
	}
	count := func(ev *events) int {
		ev.mu.Lock()
		defer ev.mu.Unlock()
		return len(slices.DeleteFunc(slices.Clone(ev.updated), func(u string) bool { return u != resources.WorkspacesURI }))
	}
	for _, st := range steps {
		before := map[string]int{}
		for u, ev := range clients {
			before[u] = count(ev)
		}
		st.write(t)
		h.reg.Changed([]string{"/memories/workspaces/plans/workspace.yaml", "/memories/workspaces/otto-notes/workspace.yaml"})
		for _, u := range st.told {
			clients[u].waitFor(t, st.name+": "+u+" told", func(*events) bool {
				return len(slices.DeleteFunc(slices.Clone(clients[u].updated), func(x string) bool { return x != resources.WorkspacesURI })) > before[u]
			})
		}
		time.Sleep(100 * time.Millisecond) // any other notification would have arrived
		for u, ev := range clients {
			if got, want := count(ev)-before[u], b2i(slices.Contains(st.told, u)); got != want {
				t.Errorf("%s: %s told %d times, want %d", st.name, u, got, want)
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestAccess_LatestPrincipal checks that a subscription follows the
// principal of its session's latest request: kim subscribes to sales's
// task as a member of a group its ACL names, then acts without that group
// (a new token after leaving it) and is told of no further change.
func TestAccess_LatestPrincipal(t *testing.T) {
	files := maps.Clone(fixture)
	files["/memories/workspaces/sales/workspace.yaml"] = strings.Replace(files["/memories/workspaces/sales/workspace.yaml"],
		"owners: [ana]", "owners: [ana]\n  viewers: [group:auditors]", 1)
	h, url := serve(t, files)
	ctx := context.Background()
	const taskURI = "memory://workspaces/sales/task"
	var groups atomic.Pointer[string]
	auditors := "auditors"
	groups.Store(&auditors)
	kim, kimEv := connectIn(t, url, legacy, "kim", &groups)
	if err := kim.Subscribe(ctx, &sdk.SubscribeParams{URI: taskURI}); err != nil {
		t.Fatal(err)
	}
	edit := func(old, new string) {
		t.Helper()
		if _, err := h.store.StrReplace(ctx, "/memories/workspaces/sales/task.md", old, new, nil); err != nil {
			t.Fatal(err)
		}
		h.reg.Changed([]string{"/memories/workspaces/sales/task.md"})
	}
	edit("net of refunds", "net of refunds and fees")
	kimEv.waitFor(t, "resources/updated for kim, an auditor", func(e *events) bool { return slices.Contains(e.updated, taskURI) })

	none := ""
	groups.Store(&none)
	if _, err := kim.ReadResource(ctx, &sdk.ReadResourceParams{URI: taskURI}); err == nil {
		t.Fatal("kim reads the task after leaving the auditors")
	}
	kimEv.mu.Lock()
	kimEv.updated = nil
	kimEv.mu.Unlock()
	edit("net of refunds and fees", "net of refunds, fees and taxes")
	time.Sleep(200 * time.Millisecond) // kim's notification, were it sent, would have arrived
	kimEv.mu.Lock()
	defer kimEv.mu.Unlock()
	if slices.Contains(kimEv.updated, taskURI) {
		t.Error("kim, no longer an auditor, was told of the change")
	}
}

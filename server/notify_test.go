package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/selmem/selmem/server"
)

// TestServe_Notifications subscribes to a workspace's resources and checks
// that a write tool's success is followed by resources/updated for them,
// through the Go SDK client over stdio. (Over streamable HTTP the server
// sends them on the tool call's own SSE stream, which that client does not
// hand to its notification handlers; TestServe_NotificationsHTTP checks the
// wire instead.)
func TestServe_Notifications(t *testing.T) {
	home := t.TempDir()
	updated := make(chan string, 32)
	listChanged := make(chan struct{}, 32)
	client := mcp.NewClient(&mcp.Implementation{Name: "selmem-e2e", Version: "v0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			updated <- r.Params.URI
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			listChanged <- struct{}{}
		},
	})
	tr := &mcp.CommandTransport{Command: command(home)}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	const uri = "memory://workspaces/demo/task"
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	if _, _, isErr := call(t, cs, "memory_create", map[string]any{"path": "/memories/workspaces/demo/task.md", "file_text": "- Amounts in EUR.\n"}); isErr {
		t.Fatal("create failed")
	}
	waitURI(t, updated, uri)
	select {
	case <-listChanged:
	case <-time.After(10 * time.Second):
		t.Error("no resources/list_changed after a new workspace appeared")
	}
	// A refused write notifies nothing.
	if _, _, isErr := call(t, cs, "memory_str_replace", map[string]any{"path": "/memories/workspaces/demo/task.md", "old_str": "USD", "new_str": "x"}); !isErr {
		t.Fatal("replace of a missing string succeeded")
	}
	drain(updated, 300*time.Millisecond)
	if _, _, isErr := call(t, cs, "memory_str_replace", map[string]any{"path": "/memories/workspaces/demo/task.md", "old_str": "EUR", "new_str": "euros"}); isErr {
		t.Fatal("replace failed")
	}
	waitURI(t, updated, uri)
}

func waitURI(t *testing.T, ch <-chan string, uri string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case u := <-ch:
			if u == uri {
				return
			}
		case <-deadline:
			t.Fatalf("no resources/updated for %s", uri)
		}
	}
}

func drain(ch <-chan string, d time.Duration) {
	for {
		select {
		case <-ch:
		case <-time.After(d):
			return
		}
	}
}

// TestServe_NotificationsHTTP checks at the wire level that over streamable
// HTTP a subscribed session receives resources/updated, on the SSE stream of
// the tool call that made the write, and nothing after a refused write.
func TestServe_NotificationsHTTP(t *testing.T) {
	w := newHTTPWire(t, startHTTP(t, t.TempDir()).url)
	if r := response(t, w.call(t, 2, "resources/subscribe", map[string]any{"uri": taskURI}), 2); r["error"] != nil {
		t.Fatalf("subscribe: %v", r)
	}
	got := w.call(t, 3, "tools/call", tool("memory_create", map[string]any{"path": taskPath, "file_text": "- Amounts in EUR.\n"}))
	if updates(got)[taskURI] != 1 || !strings.Contains(response(t, got, 3).String(), "File created successfully") {
		t.Errorf("tool call stream lacks resources/updated: %v", got)
	}
	got = w.call(t, 4, "tools/call", tool("memory_str_replace", map[string]any{"path": taskPath, "old_str": "USD", "new_str": "x"}))
	if len(updates(got)) != 0 || !strings.Contains(response(t, got, 4).String(), `"isError":true`) {
		t.Errorf("refused write: want an error and no notification: %v", got)
	}
}

// TestServe_ListChangedOncePerChange: each write that adds a workspace to
// resources/list delivers exactly one resources/list_changed to a session
// with somewhere to receive it — over stdio; over HTTP on the tool call's
// own stream when no GET stream is open (where mcp-go's delivery loses
// most); with a GET stream open, on it or on the POST stream; and on the
// GET stream of another session.
func TestServe_ListChangedOncePerChange(t *testing.T) {
	create := func(t *testing.T, w wire, id int) []msg {
		t.Helper()
		path := fmt.Sprintf("/memories/workspaces/ws%d/task.md", id)
		got := w.call(t, id, "tools/call", tool("memory_create", map[string]any{"path": path, "file_text": "- a\n"}))
		if strings.Contains(response(t, got, id).String(), `"isError":true`) {
			t.Fatalf("create %s: %v", path, got)
		}
		return got
	}
	// settle counts, after a write, its list_changed on the POST stream
	// (got) and on stream: the first if none came yet, then any more
	// until a ping's answer and a moment after it.
	settle := func(t *testing.T, w wire, id int, got []msg, stream <-chan msg) int {
		t.Helper()
		n := listChanged(got)
		deadline := time.After(10 * time.Second)
		for stream != nil && n == 0 {
			select {
			case m := <-stream:
				n += listChanged([]msg{m})
			case <-deadline:
				return n
			}
		}
		n += listChanged(w.call(t, 100+id, "ping", nil))
		for stream != nil {
			select {
			case m := <-stream:
				n += listChanged([]msg{m})
			case <-time.After(200 * time.Millisecond):
				return n
			}
		}
		return n
	}
	tests := []struct {
		name string
		// setup starts a server and returns a function that makes the
		// write id and counts the list_changed the watched session got.
		setup func(t *testing.T) func(t *testing.T, id int) int
	}{
		{"stdio", func(t *testing.T) func(*testing.T, int) int {
			w := newStdioWire(t, t.TempDir())
			// mcp-go writes notifications from a goroutine of their own,
			// which may come after the answers to the write and to a
			// ping: wait on stdout as on a stream.
			return func(t *testing.T, id int) int { return settle(t, w, id, create(t, w, id), w.lines) }
		}},
		{"http without GET stream", func(t *testing.T) func(*testing.T, int) int {
			w := newHTTPWire(t, startHTTP(t, t.TempDir()).url)
			return func(t *testing.T, id int) int { return settle(t, w, id, create(t, w, id), nil) }
		}},
		{"http with GET stream", func(t *testing.T) func(*testing.T, int) int {
			w := newHTTPWire(t, startHTTP(t, t.TempDir()).url)
			stream := w.listen(t)
			return func(t *testing.T, id int) int { return settle(t, w, id, create(t, w, id), stream) }
		}},
		{"http write by another session", func(t *testing.T) func(*testing.T, int) int {
			h := startHTTP(t, t.TempDir())
			writer, reader := newHTTPWire(t, h.url), newHTTPWire(t, h.url)
			stream := reader.listen(t)
			return func(t *testing.T, id int) int {
				if n := listChanged(create(t, writer, id)); n != 1 {
					t.Errorf("write %d: %d list_changed on the writer's stream, want 1", id, n)
				}
				return settle(t, reader, id, nil, stream)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			write := tt.setup(t)
			for id := 10; id < 20; id++ {
				if n := write(t, id); n != 1 {
					t.Errorf("write %d: %d resources/list_changed, want 1", id, n)
				}
			}
		})
	}
}

// listChanged counts the resources/list_changed notifications in msgs.
func listChanged(msgs []msg) int {
	n := 0
	for _, m := range msgs {
		if m["method"] == "notifications/resources/list_changed" {
			n++
		}
	}
	return n
}

// TestServe_ListChangedOnlyForReaders: over HTTP with authentication,
// resources/list_changed reaches a session only when the list it reads
// changes. A workspace created or deleted out of its sight tells it
// nothing; a role granted tells it, though no resource was added.
func TestServe_ListChangedOnlyForReaders(t *testing.T) {
	as := listenAuth(t, func(c *server.Config) { c.HTTP.Auth = testAuth(nil) }, nil)
	told := map[string]chan struct{}{}
	for user, tok := range map[string]string{"alice": tokAlice, "bob": tokBob} {
		ch := make(chan struct{}, 16)
		told[user] = ch
		client := mcp.NewClient(&mcp.Implementation{Name: "selmem-e2e", Version: "v0"}, &mcp.ClientOptions{
			ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { ch <- struct{}{} },
		})
		cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
			Endpoint: as.url, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearer{token: tok, next: http.DefaultTransport}},
		}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
	}
	admin, err := connectAs(t, as.url, tokAdmin)
	if err != nil {
		t.Fatal(err)
	}
	const plans = "/memories/workspaces/plans"
	steps := []struct {
		name string
		tool string
		args map[string]any
		told []string
	}{
		{"a workspace only alice may read", "memory_create", map[string]any{"path": plans + "/workspace.yaml", "file_text": "acl:\n  owners: [alice]\n"}, []string{"alice"}},
		{"bob becomes a viewer", "memory_str_replace", map[string]any{"path": plans + "/workspace.yaml", "old_str": "owners: [alice]", "new_str": "owners: [alice]\n  viewers: [bob]"}, []string{"bob"}},
		{"a workspace only bob may read", "memory_create", map[string]any{"path": "/memories/workspaces/bobs/workspace.yaml", "file_text": "acl:\n  owners: [bob]\n"}, []string{"bob"}},
		{"the shared workspace is deleted", "memory_delete", map[string]any{"path": plans}, []string{"alice", "bob"}},
	}
	for _, st := range steps {
		if text, _, isErr := call(t, admin, st.tool, st.args); isErr {
			t.Fatalf("%s: %s", st.name, text)
		}
		for _, u := range st.told {
			select {
			case <-told[u]:
			case <-time.After(10 * time.Second):
				t.Errorf("%s: no resources/list_changed for %s", st.name, u)
			}
		}
		time.Sleep(200 * time.Millisecond) // any other would have arrived
		for u, ch := range told {
			for len(ch) > 0 {
				<-ch
				t.Errorf("%s: %s got a resources/list_changed it should not", st.name, u)
			}
		}
	}
}

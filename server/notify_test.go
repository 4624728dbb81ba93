package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	h := startHTTP(t, t.TempDir())
	post := func(session, body string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, h.url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(data)
	}
	resp, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatal("no session id")
	}
	post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if _, body := post(session, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"memory://workspaces/demo/task"}}`); !strings.Contains(body, `"result":{}`) {
		t.Fatalf("subscribe: %s", body)
	}
	const updated = `"method":"notifications/resources/updated","params":{"uri":"memory://workspaces/demo/task"}`
	_, body := post(session, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_create","arguments":{"path":"/memories/workspaces/demo/task.md","file_text":"- Amounts in EUR.\n"}}}`)
	if !strings.Contains(body, updated) || !strings.Contains(body, "File created successfully") {
		t.Errorf("tool call stream lacks resources/updated:\n%s", body)
	}
	_, body = post(session, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"memory_str_replace","arguments":{"path":"/memories/workspaces/demo/task.md","old_str":"USD","new_str":"x"}}}`)
	if strings.Contains(body, "notifications/resources/updated") || !strings.Contains(body, `"isError":true`) {
		t.Errorf("refused write: want an error and no notification:\n%s", body)
	}
}

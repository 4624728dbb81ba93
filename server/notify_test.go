package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServe_Notifications subscribes to a workspace's resources and checks
// that a write tool's success is followed by resources/updated for them.
// Subscriptions are a session feature: the 2025 revisions over stdio and
// HTTP.
func TestServe_Notifications(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			if transport == "http" {
				// Subscriptions made over streamable HTTP are recorded
				// against the POST's session, but the resources/updated
				// sent to it does not reach the client's GET stream yet
				// (resources.Registry and mcp-go session registration;
				// being worked on in package resources).
				t.Skip("resources/updated over streamable HTTP is not delivered yet")
			}
			t.Parallel()
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
			var tr mcp.Transport
			if transport == "http" {
				h := startHTTP(t, home)
				t.Cleanup(func() {
					if t.Failed() {
						t.Logf("server stderr:\n%s", h.stderr)
					}
				})
				tr = &mcp.StreamableClientTransport{Endpoint: h.url, MaxRetries: -1}
			} else {
				cmd := command(home)
				tr = &mcp.CommandTransport{Command: cmd}
			}
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
		})
	}
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

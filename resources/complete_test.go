package resources_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/resources"
)

func TestRegistry_Complete(t *testing.T) {
	files := map[string]string{
		"/memories/workspaces/sales/task.md":                 "- a\n",
		"/memories/workspaces/support/task.md":               "- a\n",
		"/memories/workspaces/sales/schemas/orders.md":       "# orders\n",
		"/memories/workspaces/sales/schemas/customers.md":    "# customers\n",
		"/memories/workspaces/sales/artifacts/report/app.js": "x\n",
	}
	for i := range 120 {
		files[fmt.Sprintf("/memories/workspaces/w%03d/task.md", i)] = "- a\n"
	}
	store := newStore(t, files)
	srv := server.NewMCPServer("t", "v0", server.WithResourceCapabilities(true, true))
	reg := resources.Register(srv, store, &resources.Options{Now: clock, Logger: slog.New(slog.DiscardHandler)})
	ws := map[string]string{"workspace": "sales"}
	tests := []struct {
		name   string
		prompt bool
		arg    string
		value  string
		args   map[string]string
		want   string
		more   bool
	}{
		{"workspace", false, "workspace", "s", nil, "[sales support]", false},
		{"ws", true, "ws", "su", nil, "[support]", false},
		{"no match", false, "workspace", "zz", nil, "[]", false},
		{"more than fit", false, "workspace", "w", nil, "", true},
		{"source", false, "source", "", ws, "[customers orders]", false},
		{"source of a missing workspace", false, "source", "", map[string]string{"workspace": "nope"}, "[]", false},
		{"source of a refused workspace", false, "source", "", map[string]string{"workspace": "../x"}, "[]", false},
		{"artifact", true, "artifact", "r", ws, "[report]", false},
		{"path root", true, "path", "", nil, "[/memories/]", false},
		{"path", true, "path", "/memories/workspaces/sales/s", nil, "[/memories/workspaces/sales/schemas/]", false},
		{"path in a file", true, "path", "/memories/workspaces/sales/schemas/o", nil, "[/memories/workspaces/sales/schemas/orders.md]", false},
		{"path escaping", true, "path", "/memories/../etc/p", nil, "[]", false},
		{"unknown argument", true, "arg1", "x", nil, "[]", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arg := mcp.CompleteArgument{Name: tt.arg, Value: tt.value}
			cc := mcp.CompleteContext{Arguments: tt.args}
			var c *mcp.Completion
			var err error
			if tt.prompt {
				c, err = reg.CompletePromptArgument(context.Background(), "any", arg, cc)
			} else {
				c, err = reg.CompleteResourceArgument(context.Background(), "memory://workspaces/{workspace}/schemas/{source}", arg, cc)
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.more {
				if len(c.Values) != resources.MaxCompletions || !c.HasMore || c.Total != 120 {
					t.Errorf("%d values, hasMore %v, total %d", len(c.Values), c.HasMore, c.Total)
				}
				return
			}
			if got := fmt.Sprint(c.Values); got != tt.want || c.Values == nil {
				t.Errorf("values %s, want %s", got, tt.want)
			}
		})
	}
}

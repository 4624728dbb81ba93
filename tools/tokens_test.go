package tools_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/internal/mcpapps"
	"github.com/selmem/selmem/profiler"
	"github.com/selmem/selmem/tools"
)

// ToolListBudget is the most cl100k_base tokens the whole tools/list result
// may cost a session, as a client receives it.
const toolListBudget = 3000

// sharingBudget is what the six drafts and proposals tools may add on a
// shared server (HTTP with authentication).
const sharingBudget = 600

// rpc posts one JSON-RPC message to an MCP endpoint and returns the raw
// bytes of its result (nil for a notification).
func rpc(t *testing.T, url, session string, id int, method string, params any) (json.RawMessage, string) {
	t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	if id > 0 {
		msg["id"] = id
	}
	body, _ := json.Marshal(msg)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode >= 300 {
		t.Fatalf("%s: %s: %s", method, resp.Status, raw)
	}
	if id == 0 {
		return nil, session
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The response is the data of the last event.
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				raw = []byte(d)
			}
		}
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.Result == nil {
		t.Fatalf("%s: no result: %v %s", method, err, raw)
	}
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		session = s
	}
	return env.Result, session
}

// listTools returns every page of tools/list, as the bytes mcp-go sends, to
// a client that declares MCP Apps (apps) or not. The server is set up as
// server.NewMCPServer sets up its tools.
func listTools(t *testing.T, all []server.ServerTool, apps bool) []json.RawMessage {
	t.Helper()
	srv := server.NewMCPServer("selmem", "test", server.WithToolCapabilities(false), server.WithPaginationLimit(50),
		server.WithExtensions(mcpapps.Capability()), server.WithToolFilter(tools.ForClient))
	srv.AddTools(all...)
	ts := httptest.NewServer(server.NewStreamableHTTPServer(srv))
	t.Cleanup(ts.Close)
	caps := map[string]any{}
	if apps {
		caps["extensions"] = map[string]any{mcpapps.ExtensionID: map[string]any{"mimeTypes": []string{mcpapps.MIMEType}}}
	}
	_, session := rpc(t, ts.URL, "", 1, "initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    caps,
		"clientInfo":      map[string]any{"name": "tokens-test", "version": "0"},
	})
	rpc(t, ts.URL, session, 0, "notifications/initialized", nil)
	var pages []json.RawMessage
	var cursor string
	for id := 2; ; id++ {
		var params any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		res, _ := rpc(t, ts.URL, session, id, "tools/list", params)
		pages = append(pages, res)
		var page struct {
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &page); err != nil {
			t.Fatal(err)
		}
		if cursor = page.NextCursor; cursor == "" {
			return pages
		}
	}
}

// toolTokens counts the tokens of each tool of a tools/list result.
func toolTokens(t *testing.T, pages []json.RawMessage) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, p := range pages {
		var page struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(p, &page); err != nil {
			t.Fatal(err)
		}
		for _, tool := range page.Tools {
			var n struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(tool, &n)
			out[n.Name] = profiler.Tokens(string(tool))
		}
	}
	return out
}

// TestTools_ListTokens holds the cost of tools/list to a session: the JSON a
// client receives, counted in cl100k_base tokens, must stay within budget
// for a client with MCP Apps and one without, for the memory subset, and
// for a shared server, whose drafts and proposals tools have a budget of
// their own on top.
func TestTools_ListTokens(t *testing.T) {
	for _, c := range []struct {
		name   string
		apps   bool
		opts   *tools.Options
		budget int
	}{
		{"apps", true, nil, toolListBudget},
		{"plain", false, nil, toolListBudget},
		{"memory subset", true, &tools.Options{Subset: tools.SubsetMemory}, toolListBudget},
		{"shared", true, &tools.Options{Shared: true}, toolListBudget + sharingBudget},
	} {
		t.Run(c.name, func(t *testing.T) {
			pages := listTools(t, tools.Tools(nil, c.opts), c.apps)
			total := 0
			for _, p := range pages {
				total += profiler.Tokens(string(p))
			}
			per := toolTokens(t, pages)
			var b strings.Builder
			for _, st := range tools.Tools(nil, c.opts) {
				if n, ok := per[st.Tool.Name]; ok {
					fmt.Fprintf(&b, " %s=%d", st.Tool.Name, n)
				}
			}
			t.Logf("tools/list (%s): %d tools, %d cl100k tokens;%s", c.name, len(per), total, b.String())
			if total > c.budget {
				t.Errorf("tools/list costs %d tokens, over the budget of %d: shorten descriptions", total, c.budget)
			}
		})
	}
}

// schemaFindings reports what the MCP Inspector's schema portability lint
// (inspector --cli --method tools/list --strict) flags in one schema node: a
// `type` array, a bare boolean where a schema is expected, and a schema that
// constrains nothing.
func schemaFindings(path string, node any, keyword string) []string {
	switch n := node.(type) {
	case bool:
		if keyword == "additionalProperties" {
			return nil
		}
		return []string{path + ": bare boolean schema"}
	case map[string]any:
		var out []string
		if _, ok := n["type"].([]any); ok {
			out = append(out, fmt.Sprintf("%s: type union %v", path, n["type"]))
		}
		constrained := false
		for _, k := range []string{"type", "enum", "const", "anyOf", "oneOf", "allOf", "not", "properties", "items", "required", "minimum", "maximum", "minItems", "maxItems", "pattern", "format"} {
			if _, ok := n[k]; ok {
				constrained = true
			}
		}
		if !constrained {
			out = append(out, path+": schema constrains nothing")
		}
		if props, ok := n["properties"].(map[string]any); ok {
			for k, sub := range props {
				out = append(out, schemaFindings(path+".properties."+k, sub, "properties")...)
			}
		}
		for _, k := range []string{"items", "additionalProperties", "not"} {
			if sub, ok := n[k]; ok {
				out = append(out, schemaFindings(path+"."+k, sub, k)...)
			}
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf"} {
			if subs, ok := n[k].([]any); ok {
				for i, sub := range subs {
					out = append(out, schemaFindings(fmt.Sprintf("%s.%s[%d]", path, k, i), sub, k)...)
				}
			}
		}
		return out
	}
	return []string{path + ": not a schema"}
}

// TestTools_ListPortable: no schema in tools/list has what the Inspector
// reports as unportable (server/inspector_test.go checks the Inspector
// itself when it is installed).
func TestTools_ListPortable(t *testing.T) {
	for _, apps := range []bool{true, false} {
		for _, p := range listTools(t, tools.Tools(nil, nil), apps) {
			var page struct {
				Tools []map[string]any `json:"tools"`
			}
			if err := json.Unmarshal(p, &page); err != nil {
				t.Fatal(err)
			}
			for _, tool := range page.Tools {
				for _, k := range []string{"inputSchema", "outputSchema"} {
					if s, ok := tool[k]; ok {
						for _, f := range schemaFindings(k, s, "") {
							t.Errorf("%s: %s", tool["name"], f)
						}
					}
				}
			}
		}
	}
}

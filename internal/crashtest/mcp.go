package crashtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callTimeout bounds one tool call; a call that outlives it is UNKNOWN.
const callTimeout = 60 * time.Second

// connect opens an MCP session over streamable HTTP, without reconnects:
// a dead server must surface as an error, not as a retry loop.
func connect(ctx context.Context, url string) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "selmem-crashtest", Version: "v0"}, nil)
	return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
}

// result is a tool call's answer.
type result struct {
	text       string
	structured map[string]any
	isError    bool
}

// call runs a tool. A non-nil error means no answer arrived.
func call(cs *mcp.ClientSession, name string, args map[string]any) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return result{}, err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	r := result{text: b.String(), isError: res.IsError}
	if res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err == nil {
			_ = json.Unmarshal(raw, &r.structured)
		}
	}
	return r, nil
}

// sdkLocalCodes are the JSON-RPC error codes the go-sdk client makes up
// itself (transport rejected the request, client or server closing, unknown):
// they do not mean the server answered.
var sdkLocalCodes = map[int64]bool{-32001: true, -32003: true, -32004: true, -32005: true}

// outcome classifies a write's answer. A JSON-RPC error response from the
// server (such as a handler panic it recovered) is an answer that the write
// failed; any other error means no answer arrived.
func outcome(r result, err error) Outcome {
	var wire *jsonrpc.Error
	switch {
	case errors.As(err, &wire) && !sdkLocalCodes[wire.Code]:
		return Failed
	case err != nil:
		return Unknown
	case r.isError:
		return Failed
	default:
		return Acked
	}
}

// viewShows reports whether a memory_view text shows exactly content: its
// numbered lines, in order, and nothing else.
func viewShows(view, content string) bool {
	var got []string
	for _, l := range strings.Split(view, "\n") {
		// Numbered lines are "%6d\t<line>"; the header line has no tab.
		num, text, ok := strings.Cut(l, "\t")
		if !ok || strings.TrimSpace(num) == "" || strings.Trim(strings.TrimSpace(num), "0123456789") != "" {
			continue
		}
		got = append(got, text)
	}
	want := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	return strings.Join(got, "\n") == strings.Join(want, "\n")
}

// searchFinds reports whether a memory_search result lists path.
func searchFinds(r result, path string) bool {
	hits, _ := r.structured["hits"].([]any)
	for _, h := range hits {
		if m, ok := h.(map[string]any); ok && m["path"] == path {
			return true
		}
	}
	return r.structured == nil && strings.Contains(r.text, path)
}

// note is the content of a harness file: a unique token (for search) and a
// revision line (for str_replace).
func note(tag, token string, rev int) string {
	return fmt.Sprintf("# Crash note %s\n\n- marker: %s\n- %s\n- Written by the crash harness to check that acknowledged writes survive a crash.\n",
		tag, token, revLine(rev))
}

// revLine is the line a str_replace edits.
func revLine(rev int) string { return fmt.Sprintf("rev: %d", rev) }

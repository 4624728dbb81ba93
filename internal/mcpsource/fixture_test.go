package mcpsource

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The stdio fixture is this test binary run again with fixtureEnv set to
// "stdio": TestMain then serves newFixture over stdin/stdout instead of
// running the tests. The variables below are set in the test process;
// fixture processes see only those a Server's Env passes through.
const (
	fixtureEnv = "MCPSOURCE_FIXTURE"    // passed: makes the binary a fixture
	pidDirEnv  = "MCPSOURCE_PIDDIR"     // passed: where fixtures record their pid
	passedEnv  = "MCPSOURCE_PASSED"     // passed: a secret the server may see
	hiddenEnv  = "MCPSOURCE_HIDDEN"     // never passed
	passedVal  = "passed-secret-6f1c2a" // the value of passedEnv
	hiddenVal  = "hidden-secret-93be0d" // the value of hiddenEnv
)

func TestMain(m *testing.M) {
	if os.Getenv(fixtureEnv) == "stdio" {
		runFixture(os.Args[len(os.Args)-1])
		os.Exit(0)
	}
	pidDir, err := os.MkdirTemp("", "mcpsource-pids-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(fixtureEnv, "stdio")
	os.Setenv(pidDirEnv, pidDir)
	os.Setenv(passedEnv, passedVal)
	os.Setenv(hiddenEnv, hiddenVal)
	code := m.Run()
	os.RemoveAll(pidDir)
	os.Exit(code)
}

// runFixture is the fixture process. Its last argument chooses how it
// behaves: "deaf" starts a "sleeper" child and never answers; "sleeper"
// sleeps; anything else serves newFixture. Each records its pid.
func runFixture(mode string) {
	if dir := os.Getenv(pidDirEnv); dir != "" {
		os.WriteFile(filepath.Join(dir, strconv.Itoa(os.Getpid())), nil, 0o644)
	}
	switch mode {
	case "deaf":
		exe, _ := os.Executable()
		child := exec.Command(exe, "-test.run=^$", "sleeper")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fixture:", err)
		}
		signal.Ignore(syscall.SIGTERM)
		time.Sleep(time.Minute)
	case "sleeper":
		time.Sleep(time.Minute)
	default:
		if err := newFixture(true, nil).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "fixture:", err)
		}
	}
}

// text is a result with one text content.
func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// rowsJSON is n records of about pad+40 bytes each.
func rowsJSON(n, pad int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"note":%q}`, i, strings.Repeat("x", pad))
	}
	b.WriteByte(']')
	return b.String()
}

// newFixture is the MCP server the tests call: one tool per behaviour.
// stdio enables the tools that only make sense in a process of its own.
// Closing release ends the calls of "sleep" in progress.
func newFixture(stdio bool, release <-chan struct{}) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1"}, nil)
	add := func(name string, h mcp.ToolHandler) {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, h)
	}
	args := func(req *mcp.CallToolRequest) map[string]any {
		var m map[string]any
		json.Unmarshal(req.Params.Arguments, &m)
		return m
	}
	add("structured", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		region, _ := args(req)["region"].(string)
		sc := map[string]any{"orders": []any{
			map[string]any{"id": 1, "amount": 1000000, "region": map[string]any{"name": region}},
			map[string]any{"id": 2, "amount": 12.5, "region": map[string]any{"name": region}},
		}}
		b, _ := json.Marshal(sc)
		return &mcp.CallToolResult{StructuredContent: sc, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
	})
	add("text", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(`[{"id": 9007199254740993, "amount": 12.50}, {"id": 2, "amount": 7}]`), nil
	})
	add("nested", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(`{"meta": {"n": 2}, "data": {"items": [{"a": 1}, {"a": 2}]}}`), nil
	})
	add("fail", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := text("quota exceeded for this account; leaked " + os.Getenv(passedEnv))
		r.IsError = true
		return r, nil
	})
	add("prose", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("Here are your orders: none today."), nil
	})
	add("scalar", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{StructuredContent: map[string]any{"count": 3}, Content: []mcp.Content{&mcp.TextContent{Text: `{"count":3}`}}}, nil
	})
	add("mixed", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(`[{"a": 1}, 2]`), nil
	})
	add("big", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n, _ := args(req)["n"].(float64)
		return text(rowsJSON(int(n), 1000)), nil
	})
	add("sleep", func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-ctx.Done():
		case <-release:
		case <-time.After(time.Minute):
		}
		return text(`[]`), nil
	})
	add("env", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var names []string
		for _, kv := range os.Environ() {
			names = append(names, strings.SplitN(kv, "=", 2)[0])
		}
		sort.Strings(names)
		vars := make([]map[string]string, len(names))
		for i, n := range names {
			vars[i] = map[string]string{"name": n}
		}
		b, _ := json.Marshal(map[string]any{"vars": vars})
		return text(string(b)), nil
	})
	if stdio {
		add("exit", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	}
	return s
}

package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bin is the selmem binary under test, built once by TestMain the way the
// Dockerfile builds it (CGO_ENABLED=0).
var bin string

func TestMain(m *testing.M) {
	if b := os.Getenv("SELMEM_E2E_BIN"); b != "" {
		// A prebuilt binary, e.g. an older release to compare behaviour with.
		bin = b
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "selmem-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "selmem")
	build := exec.Command("go", "build", "-o", bin, "github.com/selmem/selmem/cmd/selmem")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build selmem: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Protocol revisions every test runs in.
var eras = []string{"2026-07-28", "2025-11-25"}

// env is the environment of a selmem process with its own home.
func env(home string) []string {
	return append(os.Environ(), "SELMEM_HOME="+home, "SELMEM_LOG_LEVEL=debug", "SELMEM_AUTHOR=tester")
}

// syncBuffer collects a process's stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// command is `selmem serve` over stdio with its own home.
func command(home string) *exec.Cmd {
	cmd := exec.Command(bin, "serve")
	cmd.Env = env(home)
	return cmd
}

func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "selmem-e2e", Version: "v0"}, nil)
}

// connectStdio starts `selmem serve` over stdio and connects in protocol version.
func connectStdio(t *testing.T, home, version string) *mcp.ClientSession {
	t.Helper()
	cmd := command(home)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := newClient().Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect stdio: %v\nstderr:\n%s", err, stderr)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr)
		}
	})
	return cs
}

// httpServer is a running `selmem serve --http`.
type httpServer struct {
	cmd    *exec.Cmd
	url    string // the /mcp endpoint
	base   string
	stderr *syncBuffer
	done   chan struct{} // closed when the process has exited
	err    error         // its exit status, once done is closed
}

// wait waits up to d for the process to exit and returns its exit status.
func (h *httpServer) wait(d time.Duration) error {
	select {
	case <-h.done:
		return h.err
	case <-time.After(d):
		return fmt.Errorf("server did not exit within %v", d)
	}
}

var addrRE = regexp.MustCompile(`msg="serving MCP" transport=http addr=(\S+)`)

// startHTTP starts `selmem serve --http 127.0.0.1:0` and waits for /healthz.
// extraEnv are further VAR=value settings.
func startHTTP(t testing.TB, home string, extraEnv ...string) *httpServer {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0")
	cmd.Env = append(env(home), extraEnv...)
	pr, pw := io.Pipe()
	h := &httpServer{cmd: cmd, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = io.MultiWriter(h.stderr, pw)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { h.err = cmd.Wait(); pw.Close(); close(h.done) }()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case a := <-addr:
		h.base = "http://" + a
		h.url = h.base + "/mcp"
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("server did not start:\n%s", h.stderr)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if h.wait(10*time.Second) != nil {
			_ = cmd.Process.Kill()
		}
	})
	for i := 0; ; i++ {
		resp, err := http.Get(h.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if i > 100 {
			t.Fatalf("/healthz never answered: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return h
}

func connectHTTP(t testing.TB, url, version string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect http: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call runs a tool and returns its text, structured content and isError.
func call(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) (string, map[string]any, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	var sc map[string]any
	if res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(raw, &sc)
	}
	return resultText(res), sc, res.IsError
}

// commits counts the commits on main in home's memory repository.
func commits(t testing.TB, home string) int {
	t.Helper()
	out, err := exec.Command("git", "-C", filepath.Join(home, "memory"), "rev-list", "--count", "main").Output()
	if err != nil {
		t.Fatalf("git rev-list: %v", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// transports connects to a fresh home over each transport, in version.
func transports(t *testing.T, version string) map[string]func(t *testing.T) (*mcp.ClientSession, string) {
	return map[string]func(t *testing.T) (*mcp.ClientSession, string){
		"stdio": func(t *testing.T) (*mcp.ClientSession, string) {
			home := t.TempDir()
			return connectStdio(t, home, version), home
		},
		"http": func(t *testing.T) (*mcp.ClientSession, string) {
			home := t.TempDir()
			return connectHTTP(t, startHTTP(t, home).url, version), home
		},
	}
}

type step struct {
	name    string
	tool    string
	args    map[string]any
	isError bool
	want    []string // substrings of the text result
	exact   string   // the exact text, when set
	commits int      // commits the step adds
}

// steps exercise every tool's happy path and error paths, in order, on one
// memory.
func steps() []step {
	const task = "/memories/workspaces/sales/task.md"
	return []step{
		{name: "view root", tool: "memory_view", args: map[string]any{"path": "/memories"},
			want: []string{"Here're the files and directories up to 2 levels deep in /memories"}},
		{name: "create", tool: "memory_create", args: map[string]any{"path": task, "file_text": "# Rules\n- Amounts in EUR.\n- Weeks start on Monday.\n", "source": "user_confirmed", "confidence": 0.9},
			exact: "File created successfully at: " + task, commits: 1},
		{name: "create exists", tool: "memory_create", args: map[string]any{"path": task, "file_text": "x"}, isError: true,
			want: []string{"Error: File " + task + " already exists"}},
		{name: "view file", tool: "memory_view", args: map[string]any{"path": task},
			exact: "Here's the content of " + task + " with line numbers:\n     1\t# Rules\n     2\t- Amounts in EUR.\n     3\t- Weeks start on Monday.\n"},
		{name: "view range", tool: "memory_view", args: map[string]any{"path": task, "view_range": []int{2, 2}},
			exact: "Here's the content of " + task + " with line numbers:\n     2\t- Amounts in EUR.\n"},
		{name: "view bad range", tool: "memory_view", args: map[string]any{"path": task, "view_range": []int{3, 9}}, isError: true,
			want: []string{"Invalid `view_range` parameter"}},
		{name: "view range wrong type", tool: "memory_view", args: map[string]any{"path": task, "view_range": "1-2"}, isError: true,
			exact: "Error: view_range must be a list of integers, not a string."},
		{name: "view missing", tool: "memory_view", args: map[string]any{"path": "/memories/nope.md"}, isError: true,
			exact: "The path /memories/nope.md does not exist. Please provide a valid path."},
		{name: "view no path", tool: "memory_view", args: map[string]any{}, isError: true,
			want: []string{`missing required argument(s) "path"`}},
		{name: "view unknown arg", tool: "memory_view", args: map[string]any{"path": task, "rnage": 1}, isError: true,
			want: []string{`does not take the argument(s) "rnage"`, "path (required), view_range"}},
		{name: "view memory-tool command ignored", tool: "memory_view", args: map[string]any{"command": "view", "path": task},
			want: []string{"with line numbers"}},
		{name: "str_replace", tool: "memory_str_replace", args: map[string]any{"path": task, "old_str": "EUR", "new_str": "euros"},
			want: []string{"The memory file has been edited.", "- Amounts in euros."}, commits: 1},
		{name: "str_replace missing", tool: "memory_str_replace", args: map[string]any{"path": task, "old_str": "USD", "new_str": "x"}, isError: true,
			exact: "No replacement was performed, old_str `USD` did not appear verbatim in " + task + "."},
		{name: "str_replace ambiguous", tool: "memory_str_replace", args: map[string]any{"path": task, "old_str": "- ", "new_str": "* "}, isError: true,
			want: []string{"Multiple occurrences of old_str `- ` in lines: 2, 3"}},
		{name: "str_replace stale sha", tool: "memory_str_replace", args: map[string]any{"path": task, "old_str": "Monday", "new_str": "Sunday", "expected_sha": "0000000000000000000000000000000000000000"}, isError: true,
			want: []string{"has changed since it was read", "Nothing was written"}},
		{name: "insert", tool: "memory_insert", args: map[string]any{"path": task, "insert_line": 1, "insert_text": "- Round to cents."},
			exact: "The file " + task + " has been edited.", commits: 1},
		{name: "insert out of range", tool: "memory_insert", args: map[string]any{"path": task, "insert_line": 99, "insert_text": "x"}, isError: true,
			want: []string{"Invalid `insert_line` parameter: 99"}},
		{name: "insert fractional line", tool: "memory_insert", args: map[string]any{"path": task, "insert_line": 1.5, "insert_text": "x"}, isError: true,
			exact: "Error: insert_line must be an integer, not a number."},
		{name: "insert line as string", tool: "memory_insert", args: map[string]any{"path": task, "insert_line": "1", "insert_text": "x"}, isError: true,
			exact: "Error: insert_line must be an integer, not a string."},
		{name: "bad source", tool: "memory_create", args: map[string]any{"path": "/memories/notes/x.md", "file_text": "x", "source": "hearsay"}, isError: true,
			want: []string{`source "hearsay" is not a known provenance`, "user_confirmed"}},
		{name: "bad confidence", tool: "memory_create", args: map[string]any{"path": "/memories/notes/x.md", "file_text": "x", "confidence": 2}, isError: true,
			want: []string{"confidence 2 is outside [0, 1]"}},
		{name: "rename", tool: "memory_rename", args: map[string]any{"old_path": task, "new_path": "/memories/workspaces/sales/rules.md"},
			exact: "Successfully renamed " + task + " to /memories/workspaces/sales/rules.md", commits: 1},
		{name: "rename missing", tool: "memory_rename", args: map[string]any{"old_path": task, "new_path": "/memories/b.md"}, isError: true,
			exact: "Error: The path " + task + " does not exist"},
		{name: "search", tool: "memory_search", args: map[string]any{"query": "euros amounts", "workspace": "sales"},
			want: []string{"/memories/workspaces/sales/rules.md:1-"}},
		{name: "create in other words", tool: "memory_create", args: map[string]any{"path": "/memories/workspaces/sales/churn.md", "file_text": "# Churn\n- A customer is lost after 90 days without an order.\n"},
			want: []string{"File created successfully"}, commits: 1},
		// None of the query's words is in the memory; WordNet's synonym
		// of one is ("client": "customer").
		{name: "search in other words", tool: "memory_search", args: map[string]any{"query": "when is a client gone"},
			want: []string{"/memories/workspaces/sales/churn.md:1-"}},
		{name: "search nothing matched", tool: "memory_search", args: map[string]any{"query": "xylophone quasar"},
			want: []string{"No memory matched the query"}},
		{name: "search empty query", tool: "memory_search", args: map[string]any{"query": "  "}, isError: true,
			want: []string{"query is empty"}},
		{name: "search bad limit", tool: "memory_search", args: map[string]any{"query": "x", "limit": 1000}, isError: true,
			want: []string{"limit 1000 is out of range", "between 1 and 100"}},
		{name: "search bad scope", tool: "memory_search", args: map[string]any{"query": "x", "scope": "galaxy"}, isError: true,
			want: []string{`scope "galaxy" is not known`}},
		{name: "search too many types", tool: "memory_search", args: map[string]any{"query": "x", "types": strings.Split(strings.Repeat("t,", 20)+"t", ",")}, isError: true,
			want: []string{"21 types given; a search takes at most 16"}},
		{name: "search types wrong type", tool: "memory_search", args: map[string]any{"query": "x", "types": "task"}, isError: true,
			exact: "Error: types must be a list of strings, not a string."},
		{name: "history", tool: "memory_history", args: map[string]any{"path": "/memories/workspaces/sales/rules.md"},
			want: []string{"rename workspaces/sales/task.md -> workspaces/sales/rules.md", "Tool: memory_rename"}},
		{name: "history all", tool: "memory_history", args: map[string]any{"limit": 2},
			want: []string{"rename workspaces/sales/task.md"}},
		{name: "history bad limit", tool: "memory_history", args: map[string]any{"limit": -1}, isError: true,
			want: []string{"limit -1 is out of range"}},
		{name: "history missing", tool: "memory_history", args: map[string]any{"path": "/memories/never.md"}, isError: true,
			want: []string{"does not exist"}},
		{name: "revert bad commit", tool: "memory_revert", args: map[string]any{"path": task, "commit": "zz"}, isError: true,
			want: []string{`No commit "zz"`, "memory_history"}},
		{name: "delete", tool: "memory_delete", args: map[string]any{"path": "/memories/workspaces/sales/rules.md"},
			exact: "Successfully deleted /memories/workspaces/sales/rules.md", commits: 1},
		{name: "delete missing", tool: "memory_delete", args: map[string]any{"path": "/memories/workspaces/sales/rules.md"}, isError: true,
			exact: "Error: The path /memories/workspaces/sales/rules.md does not exist"},
		{name: "delete root", tool: "memory_delete", args: map[string]any{"path": "/memories"}, isError: true,
			want: []string{"Cannot delete the /memories directory itself"}},
	}
}

func TestServe_Tools(t *testing.T) {
	for _, version := range eras {
		for name, connect := range transports(t, version) {
			t.Run(version+"/"+name, func(t *testing.T) {
				t.Parallel()
				cs, home := connect(t)
				if ir := cs.InitializeResult(); ir != nil && ir.ProtocolVersion != "" && ir.ProtocolVersion != version {
					t.Errorf("negotiated %s, want %s", ir.ProtocolVersion, version)
				}
				var created string
				for _, s := range steps() {
					before := commits(t, home)
					text, sc, isErr := call(t, cs, s.tool, s.args)
					if isErr != s.isError {
						t.Errorf("%s: isError = %v, want %v; text: %s", s.name, isErr, s.isError, text)
					}
					if s.exact != "" && text != s.exact {
						t.Errorf("%s: text\n%q\nwant\n%q", s.name, text, s.exact)
					}
					for _, w := range s.want {
						if !strings.Contains(text, w) {
							t.Errorf("%s: text %q does not contain %q", s.name, text, w)
						}
					}
					if got := commits(t, home) - before; got != s.commits {
						t.Errorf("%s: %d commits, want %d", s.name, got, s.commits)
					}
					if s.commits > 0 {
						if c, _ := sc["commit"].(string); len(c) != 40 {
							t.Errorf("%s: structured output %v has no commit", s.name, sc)
						}
					}
					if s.name == "create" {
						created = sc["commit"].(string)
						if sha, _ := sc["sha"].(string); len(sha) != 40 {
							t.Errorf("create: no sha in %v", sc)
						}
					}
					if s.name == "search" && !isErr {
						hits, _ := sc["hits"].([]any)
						if len(hits) == 0 {
							t.Fatalf("search: no structured hits: %v", sc)
						}
						h := hits[0].(map[string]any)
						for _, k := range []string{"path", "heading", "start_line", "end_line", "snippet", "score", "source", "valid"} {
							if _, ok := h[k]; !ok {
								t.Errorf("search hit has no %s: %v", k, h)
							}
						}
					}
				}
				// Revert brings the deleted file back as it was when created.
				before := commits(t, home)
				text, _, isErr := call(t, cs, "memory_revert", map[string]any{"path": "/memories/workspaces/sales/task.md", "commit": created[:8]})
				if isErr || !strings.Contains(text, "Restored /memories/workspaces/sales/task.md") {
					t.Errorf("revert: %v %s", isErr, text)
				}
				if got := commits(t, home) - before; got != 1 {
					t.Errorf("revert made %d commits", got)
				}
				text, _, _ = call(t, cs, "memory_view", map[string]any{"path": "/memories/workspaces/sales/task.md"})
				if !strings.Contains(text, "- Amounts in EUR.") {
					t.Errorf("after revert: %s", text)
				}
				// Provenance in the commit trailers.
				out, err := exec.Command("git", "-C", filepath.Join(home, "memory"), "log", "-1", "--format=%an%n%B", "main").Output()
				if err != nil {
					t.Fatal(err)
				}
				wantSource := "Source: user_confirmed"
				if name == "http" {
					wantSource = "Source: inferred"
				}
				for _, w := range []string{"tester", "Tool: memory_revert", wantSource, "Author: tester"} {
					if !strings.Contains(string(out), w) {
						t.Errorf("last commit %q lacks %q", out, w)
					}
				}
			})
		}
	}
}

// TestServe_WriteGate checks that the write gate holds through MCP: every
// refusal is an isError result with a clear message, and nothing is
// committed.
func TestServe_WriteGate(t *testing.T) {
	home := t.TempDir()
	cs := connectStdio(t, home, eras[0])
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"traversal", "memory_create", map[string]any{"path": "/memories/../etc/passwd", "file_text": "x"}, "Error:"},
		{"encoded traversal", "memory_create", map[string]any{"path": "/memories/%2e%2e/x.md", "file_text": "x"}, "percent escape"},
		{"outside root", "memory_create", map[string]any{"path": "/etc/x.md", "file_text": "x"}, "outside the memory directory"},
		{"hidden", "memory_create", map[string]any{"path": "/memories/.git/config", "file_text": "x"}, "Error:"},
		{"rename out", "memory_rename", map[string]any{"old_path": "/memories/notes/a.md", "new_path": "/memories/../a.md"}, "Error:"},
		{"secret", "memory_create", map[string]any{"path": "/memories/notes/keys.md", "file_text": "- aws: AKIA" + "EXAMPLEFAKEKEY01\n"}, "Error:"},
		{"private key", "memory_create", map[string]any{"path": "/memories/notes/k.md", "file_text": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n"}, "Error:"},
		{"transcript", "memory_create", map[string]any{"path": "/memories/notes/chat.md", "file_text": strings.Repeat("User: what is the revenue?\nAssistant: Let me check the database.\n", 6)}, "Error:"},
		{"oversize", "memory_create", map[string]any{"path": "/memories/notes/big.md", "file_text": strings.Repeat("- a rule that is long enough\n", 20000)}, "Error:"},
	}
	// A file to edit, so that str_replace carries the secret too.
	if _, _, isErr := call(t, cs, "memory_create", map[string]any{"path": "/memories/notes/a.md", "file_text": "- ok\n"}); isErr {
		t.Fatal("seed create failed")
	}
	tests = append(tests, struct {
		name string
		tool string
		args map[string]any
		want string
	}{"secret via str_replace", "memory_str_replace", map[string]any{"path": "/memories/notes/a.md", "old_str": "ok", "new_str": "token ghp_0123456789abcdefghijABCDEFGHIJ0123456789"}, "Error:"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := commits(t, home)
			text, _, isErr := call(t, cs, tt.tool, tt.args)
			if !isErr {
				t.Fatalf("accepted: %s", text)
			}
			if !strings.Contains(text, tt.want) {
				t.Errorf("text %q does not contain %q", text, tt.want)
			}
			if strings.Contains(text, "AKIA"+"EXAMPLEFAKEKEY01") || strings.Contains(text, "ghp_0123") {
				t.Errorf("message echoes the secret: %s", text)
			}
			if strings.Contains(text, home) {
				t.Errorf("message leaks a host path: %s", text)
			}
			if after := commits(t, home); after != before {
				t.Errorf("%d commits after a refused write, want %d", after, before)
			}
			t.Logf("%s", text)
		})
	}
}

// TestServe_StdoutIsJSONRPC drives the server by hand and checks that every
// line it writes on stdout is a JSON-RPC message, while logs (debug level)
// go to stderr. Stdin stays open until every request is answered, as a host
// keeps it: closing it cancels requests still in flight.
func TestServe_StdoutIsJSONRPC(t *testing.T) {
	home := t.TempDir()
	cmd := exec.Command(bin, "serve")
	cmd.Env = env(home)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	stdin, stdout := startPiped(t, cmd)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_create","arguments":{"path":"/memories/notes/a.md","file_text":"- a\n"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"memory_create","arguments":{"path":"/memories/../x","file_text":"- a\n"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`,
	}, "\n") + "\n"
	if _, err := io.WriteString(stdin, in); err != nil {
		t.Fatal(err)
	}
	ids := map[float64]bool{}
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	deadline := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
	defer deadline.Stop()
	for len(ids) < 5 && sc.Scan() {
		l := sc.Text()
		out.WriteString(l + "\n")
		var msg struct {
			JSONRPC string   `json:"jsonrpc"`
			ID      *float64 `json:"id"`
		}
		if err := json.Unmarshal([]byte(l), &msg); err != nil || msg.JSONRPC != "2.0" {
			t.Errorf("stdout line is not JSON-RPC: %q", l)
			continue
		}
		if msg.ID != nil {
			ids[*msg.ID] = true
		}
	}
	stdin.Close()
	rest, _ := io.ReadAll(stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(rest)), "\n") {
		if l != "" && !strings.HasPrefix(l, `{"jsonrpc":"2.0"`) {
			t.Errorf("stdout line is not JSON-RPC: %q", l)
		}
	}
	for id := 1.0; id <= 5; id++ {
		if !ids[id] {
			t.Errorf("no response to request %v on stdout:\n%s", id, out.String())
		}
	}
	if !strings.Contains(stderr.String(), "serving MCP") {
		t.Errorf("no logs on stderr: %q", stderr)
	}
}

// servePiped runs selmem serve on home with input as its whole stdin, as a
// shell pipe does, and returns its stdout once it exited 0.
func servePiped(t *testing.T, home, input string) []byte {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Env = env(home)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	cmd.Stdin = strings.NewReader(input)
	timer := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr)
	}
	return out
}

// TestServe_StdinClosedAfterRequests writes requests and closes stdin at
// once, as a shell pipe does: each request is answered, the write included,
// before the server exits 0.
func TestServe_StdinClosedAfterRequests(t *testing.T) {
	home := t.TempDir()
	out := servePiped(t, home, strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"memory_create","arguments":{"path":"/memories/notes/piped.md","file_text":"- piped\n"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"piped"}}}`,
	}, "\n")+"\n")
	ids := map[float64]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var msg struct {
			ID *float64 `json:"id"`
		}
		if json.Unmarshal([]byte(l), &msg) == nil && msg.ID != nil {
			ids[*msg.ID] = true
		}
	}
	for id := 1.0; id <= 5; id++ {
		if !ids[id] {
			t.Errorf("no answer to request %v:\n%s", id, out)
		}
	}
	if got, err := exec.Command("git", "-C", filepath.Join(home, "memory"), "show", "main:notes/piped.md").Output(); err != nil || string(got) != "- piped\n" {
		t.Errorf("the piped write in git: %q, %v", got, err)
	}
}

// TestServe_StdioInvalidMessages pipes the messages MCP does not admit to
// the stdio transport between valid requests: each gets its error with a
// null id, in place of an answer to an id it should not trust, and the
// valid requests around them are answered, the last line too although it
// lacks its newline.
func TestServe_StdioInvalidMessages(t *testing.T) {
	lines := []string{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`}
	for _, m := range invalidMessages {
		lines = append(lines, m.body)
	}
	lines = append(lines, `{"jsonrpc":"2.0","id":"last","method":"ping"}`)
	out := servePiped(t, t.TempDir(), strings.Join(lines, "\n"))
	codes := map[int]int{}
	var answered []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var msg struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &msg); err != nil {
			t.Fatalf("stdout holds %q: %v", l, err)
		}
		switch {
		case string(msg.ID) == "null" && msg.Error != nil:
			codes[msg.Error.Code]++
		case msg.Error == nil:
			answered = append(answered, string(msg.ID))
		default:
			t.Errorf("an error to id %s: %s", msg.ID, l)
		}
	}
	want := map[int]int{}
	for _, m := range invalidMessages {
		want[m.code]++
	}
	if !maps.Equal(codes, want) {
		t.Errorf("errors with a null id by code %v, want %v:\n%s", codes, want, out)
	}
	if slices.Sort(answered); !slices.Equal(answered, []string{`"last"`, `1`}) {
		t.Errorf("answered ids %v, want \"last\" and 1:\n%s", answered, out)
	}
}

// TestServe_GracefulShutdown sends SIGTERM to a server after a write was
// acknowledged: the process exits 0 and the write is in git.
func TestServe_GracefulShutdown(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			var proc *os.Process
			var wait func() error
			var cs *mcp.ClientSession
			if transport == "http" {
				h := startHTTP(t, home)
				cs = connectHTTP(t, h.url, eras[0])
				proc = h.cmd.Process
				wait = func() error { return h.wait(15 * time.Second) }
			} else {
				cmd := exec.Command(bin, "serve")
				cmd.Env = env(home)
				stdin, _ := cmd.StdinPipe()
				stdout, _ := cmd.StdoutPipe()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				defer stdin.Close()
				r := bufio.NewReader(stdout)
				send := func(s string) string {
					if _, err := io.WriteString(stdin, s+"\n"); err != nil {
						t.Fatal(err)
					}
					if strings.Contains(s, `"id"`) {
						line, err := r.ReadString('\n')
						if err != nil {
							t.Fatal(err)
						}
						return line
					}
					return ""
				}
				send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
				send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				resp := send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_create","arguments":{"path":"/memories/notes/kept.md","file_text":"- kept\n"}}}`)
				if !strings.Contains(resp, "File created successfully") {
					t.Fatalf("create: %s", resp)
				}
				proc = cmd.Process
				wait = cmd.Wait
			}
			if cs != nil {
				if text, _, isErr := call(t, cs, "memory_create", map[string]any{"path": "/memories/notes/kept.md", "file_text": "- kept\n"}); isErr {
					t.Fatalf("create: %s", text)
				}
			}
			if err := proc.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if err := wait(); err != nil {
				t.Fatalf("exit after SIGTERM: %v", err)
			}
			out, err := exec.Command("git", "-C", filepath.Join(home, "memory"), "show", "main:notes/kept.md").Output()
			if err != nil || string(out) != "- kept\n" {
				t.Fatalf("acknowledged write not in git: %q %v", out, err)
			}
			if st, err := exec.Command("git", "-C", filepath.Join(home, "memory"), "status", "--porcelain").Output(); err != nil || len(st) != 0 {
				t.Errorf("working tree not clean after shutdown: %q %v", st, err)
			}
		})
	}
}

func TestServe_Healthcheck(t *testing.T) {
	h := startHTTP(t, t.TempDir())
	out, err := exec.Command(bin, "healthcheck", "--url", h.base+"/healthz").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Errorf("healthcheck: %v %s", err, out)
	}
	cmd := exec.Command(bin, "healthcheck", "--url", "http://127.0.0.1:1/healthz")
	cmd.Env = env(t.TempDir())
	if err := cmd.Run(); err == nil {
		t.Error("healthcheck of a closed port succeeded")
	}
}

func TestServe_Instructions(t *testing.T) {
	cs := connectStdio(t, t.TempDir(), "2025-11-25")
	ir := cs.InitializeResult()
	if ir == nil {
		t.Fatal("no initialize result")
	}
	for _, w := range []string{"memory://workspaces/{workspace}/context", "memory_view", "task specifications", "transcripts", "secrets", "one rule per bullet"} {
		if !strings.Contains(strings.ToLower(ir.Instructions), strings.ToLower(w)) {
			t.Errorf("instructions lack %q", w)
		}
	}
}

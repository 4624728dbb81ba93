package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// msg is one JSON-RPC message.
type msg map[string]any

func (m msg) isResponse(id int) bool {
	v, ok := m["id"].(float64)
	_, hasMethod := m["method"]
	return ok && v == float64(id) && !hasMethod
}

func (m msg) errCode() int {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return int(c)
}

func (m msg) errMessage() string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

func (m msg) String() string {
	b, _ := json.Marshal(map[string]any(m))
	return string(b)
}

// short is m's JSON, cut for a test message.
func (m msg) short() string {
	s := m.String()
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// wire is a raw JSON-RPC session with `selmem serve`, over stdio or
// streamable HTTP (protocol 2025-11-25), so that tests see exactly what the
// server sends.
type wire interface {
	// call sends a request or notification (id 0) and returns every message
	// that came back until its response (none for a notification): over
	// HTTP the whole response stream, over stdio the lines up to the
	// response.
	call(t *testing.T, id int, method string, params any) []msg
}

func encode(t *testing.T, id int, method string, params any) string {
	t.Helper()
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != 0 {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const initParams = `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}`

// httpWire is a session over streamable HTTP.
type httpWire struct {
	url, session string
}

func newHTTPWire(t *testing.T, url string) *httpWire {
	t.Helper()
	w := &httpWire{url: url}
	w.call(t, 1, "initialize", json.RawMessage(initParams))
	if w.session == "" {
		t.Fatal("no session id")
	}
	w.call(t, 0, "notifications/initialized", nil)
	return w
}

// post sends body with the session's headers and returns the response.
func (w *httpWire) post(t *testing.T, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, w.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if w.session != "" {
		req.Header.Set("Mcp-Session-Id", w.session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (w *httpWire) call(t *testing.T, id int, method string, params any) []msg {
	t.Helper()
	resp := w.post(t, encode(t, id, method, params))
	defer resp.Body.Close()
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		w.session = s
	}
	return readMessages(t, resp)
}

// readMessages reads a JSON body or an event stream to its end.
func readMessages(t *testing.T, resp *http.Response) []msg {
	t.Helper()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out []msg
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		var m msg
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		return []msg{m}
	}
	for _, line := range strings.Split(string(data), "\n") {
		if d, ok := strings.CutPrefix(line, "data:"); ok && strings.TrimSpace(d) != "" {
			var m msg
			if err := json.Unmarshal([]byte(strings.TrimSpace(d)), &m); err != nil {
				t.Fatalf("event %q: %v", d, err)
			}
			out = append(out, m)
		}
	}
	return out
}

// listen opens the session's standalone GET stream; its messages arrive on
// the channel until the test ends.
func (w *httpWire) listen(t *testing.T) <-chan msg {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, w.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", w.session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %s", resp.Status)
	}
	t.Cleanup(func() { resp.Body.Close() })
	ch := make(chan msg, 64)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.TrimSpace(d) != "" {
				var m msg
				if json.Unmarshal([]byte(strings.TrimSpace(d)), &m) == nil {
					ch <- m
				}
			}
		}
	}()
	return ch
}

// stdioWire is a session over stdio.
type stdioWire struct {
	stdin io.WriteCloser
	lines chan msg
}

// startPiped starts cmd with pipes to its stdin and from its stdout.
func startPiped(t *testing.T, cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdin, stdout
}

func newStdioWire(t *testing.T, home string, extraEnv ...string) *stdioWire {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(env(home), extraEnv...)
	stdin, stdout := startPiped(t, cmd)
	w := &stdioWire{stdin: stdin, lines: make(chan msg, 256)}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m msg
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				w.lines <- m
			}
		}
		close(w.lines)
	}()
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	w.call(t, 1, "initialize", json.RawMessage(initParams))
	w.call(t, 0, "notifications/initialized", nil)
	return w
}

func (w *stdioWire) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(w.stdin, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (w *stdioWire) call(t *testing.T, id int, method string, params any) []msg {
	t.Helper()
	w.send(t, encode(t, id, method, params))
	if id == 0 {
		return nil
	}
	return w.until(t, id)
}

// until reads messages up to the response to id.
func (w *stdioWire) until(t *testing.T, id int) []msg {
	t.Helper()
	var out []msg
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-w.lines:
			if !ok {
				t.Fatalf("stdout closed before the response to %d", id)
			}
			out = append(out, m)
			if m.isResponse(id) {
				return out
			}
		case <-deadline:
			t.Fatalf("no response to %d; got %v", id, out)
		}
	}
}

// wires starts a server in a fresh home over each transport.
func wires(t *testing.T, extraEnv ...string) map[string]func(t *testing.T) wire {
	return map[string]func(t *testing.T) wire{
		"stdio": func(t *testing.T) wire { return newStdioWire(t, t.TempDir(), extraEnv...) },
		"http": func(t *testing.T) wire {
			return newHTTPWire(t, startHTTP(t, t.TempDir(), extraEnv...).url)
		},
	}
}

// response returns the response to id among msgs.
func response(t *testing.T, msgs []msg, id int) msg {
	t.Helper()
	for _, m := range msgs {
		if m.isResponse(id) {
			return m
		}
	}
	t.Fatalf("no response to %d in %v", id, msgs)
	return nil
}

// updates counts the resources/updated notifications per URI in msgs.
func updates(msgs []msg) map[string]int {
	n := map[string]int{}
	for _, m := range msgs {
		if m["method"] == "notifications/resources/updated" {
			p, _ := m["params"].(map[string]any)
			u, _ := p["uri"].(string)
			n[u]++
		}
	}
	return n
}

func tool(name string, args map[string]any) map[string]any {
	return map[string]any{"name": name, "arguments": args}
}

const (
	taskPath   = "/memories/workspaces/demo/task.md"
	taskURI    = "memory://workspaces/demo/task"
	contextURI = "memory://workspaces/demo/context"
)

// TestServe_UpdatedOncePerChange is the regression test of issue 16's first
// finding: with two subscriptions, one write delivers one resources/updated
// per resource — over stdio, over HTTP on the tool call's stream when no GET
// stream is open, and over HTTP with a GET stream open.
func TestServe_UpdatedOncePerChange(t *testing.T) {
	subscribe := func(t *testing.T, w wire) {
		t.Helper()
		w.call(t, 2, "tools/call", tool("memory_create", map[string]any{"path": taskPath, "file_text": "- a\n"}))
		for i, u := range []string{taskURI, contextURI} {
			if r := response(t, w.call(t, 3+i, "resources/subscribe", map[string]any{"uri": u}), 3+i); r["error"] != nil {
				t.Fatalf("subscribe %s: %v", u, r)
			}
		}
	}
	insert := func(t *testing.T, w wire, id int) []msg {
		t.Helper()
		return w.call(t, id, "tools/call", tool("memory_insert", map[string]any{"path": taskPath, "insert_line": 1, "insert_text": fmt.Sprintf("- rule %d", id)}))
	}
	want := map[string]int{taskURI: 1, contextURI: 1}
	equal := func(a, b map[string]int) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

	t.Run("stdio", func(t *testing.T) {
		w := newStdioWire(t, t.TempDir())
		subscribe(t, w)
		for id := 10; id < 13; id++ {
			got := insert(t, w, id)
			// Over stdio the updates precede the response, and the ping
			// after it shows nothing more is queued.
			got = append(got, w.call(t, 100+id, "ping", nil)...)
			if u := updates(got); !equal(u, want) {
				t.Errorf("write %d: updates %v, want %v", id, u, want)
			}
		}
	})
	t.Run("http without GET stream", func(t *testing.T) {
		w := newHTTPWire(t, startHTTP(t, t.TempDir()).url)
		subscribe(t, w)
		for id := 10; id < 15; id++ {
			if u := updates(insert(t, w, id)); !equal(u, want) {
				t.Errorf("write %d: updates on the POST stream %v, want %v", id, u, want)
			}
		}
	})
	t.Run("http with GET stream", func(t *testing.T) {
		w := newHTTPWire(t, startHTTP(t, t.TempDir()).url)
		subscribe(t, w)
		stream := w.listen(t)
		checkStream(t, w, stream, insert, want)
	})
	t.Run("http write by another session", func(t *testing.T) {
		h := startHTTP(t, t.TempDir())
		writer, reader := newHTTPWire(t, h.url), newHTTPWire(t, h.url)
		subscribe(t, writer)
		subscribe(t, reader)
		stream := reader.listen(t)
		checkStream(t, reader, stream, func(t *testing.T, _ wire, id int) []msg {
			got := insert(t, writer, id)
			if u := updates(got); !equal(u, want) {
				t.Errorf("write %d: the writer's updates %v, want %v", id, u, want)
			}
			return nil
		}, want)
	})
}

// checkStream makes writes with insert and checks that the updates on their
// POST streams and on the GET stream add up to want for each.
func checkStream(t *testing.T, w *httpWire, stream <-chan msg, insert func(*testing.T, wire, int) []msg, want map[string]int) {
	t.Helper()
	add := func(got map[string]int, m msg) {
		for u, n := range updates([]msg{m}) {
			got[u] += n
		}
	}
	for id := 10; id < 15; id++ {
		got := updates(insert(t, w, id))
		deadline := time.After(10 * time.Second)
		for got[taskURI] < 1 || got[contextURI] < 1 {
			select {
			case m := <-stream:
				add(got, m)
			case <-deadline:
				t.Fatalf("write %d: updates %v, want %v", id, got, want)
			}
		}
		// A duplicate would have been sent before the ping's answer.
		w.call(t, 100+id, "ping", nil)
	drain:
		for {
			select {
			case m := <-stream:
				add(got, m)
			default:
				break drain
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("write %d: updates %v, want %v", id, got, want)
		}
	}
}

// hangingEndpoint is a REST endpoint that never answers: arrived is closed
// when a request comes, gone when its connection closes.
func hangingEndpoint(t *testing.T) (url string, arrived, gone <-chan struct{}) {
	t.Helper()
	a, g := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(a) })
		<-r.Context().Done()
		close(g)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/rows", a, g
}

// TestServe_CancelledGetsNoResponse is the regression test of issue 16's
// second finding: a request cancelled by notifications/cancelled is not
// answered, its work stops, and nothing is stored.
func TestServe_CancelledGetsNoResponse(t *testing.T) {
	const allow = "SELMEM_PROFILE_ALLOWED_HOSTS=127.0.0.1"
	for name, connect := range wires(t, allow) {
		t.Run(name, func(t *testing.T) {
			w := connect(t)
			url, arrived, gone := hangingEndpoint(t)
			args := tool("profile_source", map[string]any{"workspace": "demo", "name": "slow",
				"source": map[string]any{"kind": "rest", "url": url, "timeout_seconds": 300}})
			var got []msg
			done := make(chan struct{})
			switch w := w.(type) {
			case *httpWire:
				go func() {
					defer close(done)
					resp := w.post(t, encode(t, 30, "tools/call", args))
					defer resp.Body.Close()
					got = readMessages(t, resp)
				}()
			case *stdioWire:
				w.send(t, encode(t, 30, "tools/call", args))
				close(done)
			}
			<-arrived
			w.call(t, 0, "notifications/cancelled", map[string]any{"requestId": 30, "reason": "the user pressed stop"})
			<-gone // the work stopped
			<-done
			// Over stdio a response would come before those to later
			// requests of the same kind.
			got = append(got, w.call(t, 31, "tools/call", tool("memory_view", map[string]any{"path": "/memories"}))...)
			got = append(got, w.call(t, 32, "ping", nil)...)
			for _, m := range got {
				if m.isResponse(30) {
					t.Errorf("the cancelled request was answered: %v", m)
				}
			}
			r := response(t, w.call(t, 33, "tools/call", tool("memory_view", map[string]any{"path": "/memories/workspaces/demo/schemas/slow.md"})), 33)
			if !strings.Contains(r.String(), `"isError":true`) {
				t.Errorf("the cancelled profile was stored: %v", r)
			}
		})
	}
}

// TestServe_ErrorCodes is the regression test of issue 16's third finding
// (and the bad-cursor half of the sixth): each error carries the JSON-RPC
// code of protocol 2025-11-25 and a message without Go internals.
func TestServe_ErrorCodes(t *testing.T) {
	tests := []struct {
		name   string
		method string
		params any
		code   int
		want   string // in the message
	}{
		{"missing workspace", "resources/read", map[string]any{"uri": "memory://workspaces/nope/context"}, -32002, "no workspace with this name"},
		{"missing file", "resources/read", map[string]any{"uri": "memory://workspaces/demo/output"}, -32002, "no output.md"},
		{"unknown URI", "resources/read", map[string]any{"uri": "file:///etc/passwd"}, -32002, "file:///etc/passwd"},
		{"prompt without argument", "prompts/get", map[string]any{"name": "start_session", "arguments": map[string]any{}}, -32602, "workspace is required"},
		{"prompt of a missing workspace", "prompts/get", map[string]any{"name": "start_session", "arguments": map[string]any{"workspace": "nope"}}, -32602, "no workspace with this name"},
		{"unknown prompt", "prompts/get", map[string]any{"name": "nope"}, -32602, "nope"},
		{"unknown method", "nope/nope", map[string]any{}, -32601, "nope/nope"},
		{"params of the wrong shape", "resources/read", "memory://workspaces/demo/task", -32602, "resources/read"},
		{"bad cursor", "resources/list", map[string]any{"cursor": "Zm9v!"}, -32602, "list again without a cursor"},
		{"forged cursor", "tools/list", map[string]any{"cursor": "Zm9v"}, -32602, "list again without a cursor"},
	}
	for name, connect := range wires(t) {
		t.Run(name, func(t *testing.T) {
			w := connect(t)
			w.call(t, 2, "tools/call", tool("memory_create", map[string]any{"path": taskPath, "file_text": "- a\n"}))
			for i, tt := range tests {
				id := 10 + i
				r := response(t, w.call(t, id, tt.method, tt.params), id)
				if r.errCode() != tt.code {
					t.Errorf("%s: code %d, want %d: %s", tt.name, r.errCode(), tt.code, r.short())
				}
				m := r.errMessage()
				if !strings.Contains(m, tt.want) {
					t.Errorf("%s: message %q lacks %q", tt.name, m, tt.want)
				}
				for _, internal := range []string{"base64", "json:", "Go struct", "unmarshal", "request error", "panic"} {
					if strings.Contains(m, internal) {
						t.Errorf("%s: message %q carries Go internals (%s)", tt.name, m, internal)
					}
				}
			}
		})
	}
}

// TestServe_SessionStatus is the regression test of issue 16's fourth
// finding: a request without Mcp-Session-Id is answered 400, one with an
// unknown or ended session 404.
func TestServe_SessionStatus(t *testing.T) {
	h := startHTTP(t, t.TempDir())
	w := newHTTPWire(t, h.url)
	status := func(session string) int {
		t.Helper()
		c := &httpWire{url: h.url, session: session}
		resp := c.post(t, encode(t, 5, "tools/list", nil))
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status(""); got != http.StatusBadRequest {
		t.Errorf("no session id: %d, want 400", got)
	}
	if got := status("mcp-session-unknown"); got != http.StatusNotFound {
		t.Errorf("unknown session: %d, want 404", got)
	}
	if got := status(w.session); got != http.StatusOK {
		t.Errorf("open session: %d, want 200", got)
	}
	req, err := http.NewRequest(http.MethodDelete, h.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Mcp-Session-Id", w.session)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("DELETE of an open session: %d, want 200", resp.StatusCode)
	}
	if got := status(w.session); got != http.StatusNotFound {
		t.Errorf("ended session: %d, want 404", got)
	}

	// Other methods, DELETE of no open session, and a body that is not
	// JSON.
	open := newHTTPWire(t, h.url).session
	tests := []struct {
		name, method, session, ctype string
		want                         int
	}{
		{"DELETE of an ended session", http.MethodDelete, w.session, "", http.StatusNotFound},
		{"DELETE of a session never issued", http.MethodDelete, "mcp-session-unknown", "", http.StatusNotFound},
		{"DELETE without a session", http.MethodDelete, "", "", http.StatusBadRequest},
		{"PUT", http.MethodPut, open, "application/json", http.StatusMethodNotAllowed},
		{"PATCH", http.MethodPatch, open, "application/json", http.StatusMethodNotAllowed},
		{"POST of text", http.MethodPost, open, "text/plain", http.StatusUnsupportedMediaType},
		{"POST without a type", http.MethodPost, open, "", http.StatusUnsupportedMediaType},
		{"POST of JSON with a charset", http.MethodPost, open, "application/json; charset=utf-8", http.StatusOK},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(tt.method, h.url, strings.NewReader(encode(t, 9, "ping", nil)))
		if err != nil {
			t.Fatal(err)
		}
		if tt.session != "" {
			req.Header.Set("Mcp-Session-Id", tt.session)
		}
		if tt.ctype != "" {
			req.Header.Set("Content-Type", tt.ctype)
		}
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, resp.StatusCode, tt.want)
		}
	}
}

// TestServe_CompletionsAndLogging is the regression test of issue 16's
// fifth finding: completion/complete completes workspace, source and path
// arguments of templates and prompts, and logging/setLevel turns on log
// messages to the client, which never echo a secret.
func TestServe_CompletionsAndLogging(t *testing.T) {
	for name, connect := range wires(t) {
		t.Run(name, func(t *testing.T) {
			w := connect(t)
			for i, p := range []string{"/memories/workspaces/demo/task.md", "/memories/workspaces/dev/task.md", "/memories/workspaces/other/task.md", "/memories/workspaces/demo/schemas/orders.md", "/memories/workspaces/demo/schemas/customers.md"} {
				w.call(t, 2+i, "tools/call", tool("memory_create", map[string]any{"path": p, "file_text": "- a\n"}))
			}
			complete := func(id int, ref map[string]any, arg, value string, args map[string]any) []any {
				t.Helper()
				params := map[string]any{"ref": ref, "argument": map[string]any{"name": arg, "value": value}}
				if args != nil {
					params["context"] = map[string]any{"arguments": args}
				}
				r := response(t, w.call(t, id, "completion/complete", params), id)
				res, _ := r["result"].(map[string]any)
				c, _ := res["completion"].(map[string]any)
				vs, ok := c["values"].([]any)
				if !ok {
					t.Fatalf("completion/complete: %v", r)
				}
				return vs
			}
			tmpl := func(uri string) map[string]any { return map[string]any{"type": "ref/resource", "uri": uri} }
			tests := []struct {
				name  string
				ref   map[string]any
				arg   string
				value string
				args  map[string]any
				want  string
			}{
				{"workspace in a template", tmpl("memory://workspaces/{workspace}/context"), "workspace", "de", nil, "[demo dev]"},
				{"workspace in a prompt", map[string]any{"type": "ref/prompt", "name": "start_session"}, "workspace", "o", nil, "[other]"},
				{"source", tmpl("memory://workspaces/{workspace}/schemas/{source}"), "source", "c", map[string]any{"workspace": "demo"}, "[customers]"},
				{"path", map[string]any{"type": "ref/prompt", "name": "start_session"}, "path", "/memories/workspaces/d", nil, "[/memories/workspaces/demo/ /memories/workspaces/dev/]"},
				{"unknown prompt", map[string]any{"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "arg1", "x", nil, "[]"},
			}
			for i, tt := range tests {
				if got := fmt.Sprint(complete(20+i, tt.ref, tt.arg, tt.value, tt.args)); got != tt.want {
					t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
				}
			}

			logs := func(msgs []msg) []string {
				var out []string
				for _, m := range msgs {
					if m["method"] == "notifications/message" {
						out = append(out, m.String())
					}
				}
				return out
			}
			r := response(t, w.call(t, 40, "logging/setLevel", map[string]any{"level": "info"}), 40)
			if fmt.Sprint(r["result"]) != "map[]" {
				t.Fatalf("logging/setLevel: %v", r)
			}
			// Over stdio, log messages and responses are written by different
			// goroutines: a ping afterwards collects any that came late.
			got := append(w.call(t, 41, "tools/call", tool("memory_view", map[string]any{"path": "/memories"})), w.call(t, 141, "ping", nil)...)
			if l := logs(got); len(l) != 1 || !strings.Contains(l[0], "memory_view") || !strings.Contains(l[0], `"level":"info"`) {
				t.Errorf("log messages of a tool call at info: %v", l)
			}
			const secret = "AKIA" + "EXAMPLEFAKEKEY01"
			got = append(w.call(t, 42, "tools/call", tool("memory_create", map[string]any{"path": "/memories/notes/k.md", "file_text": "- aws: " + secret + "\n"})), w.call(t, 142, "ping", nil)...)
			if l := logs(got); len(l) != 1 || strings.Contains(l[0], secret) || !strings.Contains(l[0], `"level":"warning"`) {
				t.Errorf("log messages of a refused write: %v", l)
			}
			w.call(t, 43, "logging/setLevel", map[string]any{"level": "error"})
			got = append(w.call(t, 44, "tools/call", tool("memory_view", map[string]any{"path": "/memories"})), w.call(t, 144, "ping", nil)...)
			if l := logs(got); len(l) != 0 {
				t.Errorf("log messages below the level set: %v", l)
			}
		})
	}
}

// TestServe_Pagination is the regression test of issue 16's sixth finding:
// resources/list comes in pages of at most 50 with an opaque cursor, and
// the pages hold every resource once.
func TestServe_Pagination(t *testing.T) {
	h := startHTTP(t, t.TempDir())
	w := newHTTPWire(t, h.url)
	const workspaces = 30 // 61 resources: memory://workspaces, and context and task of each
	for i := range workspaces {
		p := fmt.Sprintf("/memories/workspaces/ws%02d/task.md", i)
		w.call(t, 100+i, "tools/call", tool("memory_create", map[string]any{"path": p, "file_text": "- a\n"}))
	}
	seen := map[string]int{}
	pages := 0
	cursor := ""
	for id := 200; ; id++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		r := response(t, w.call(t, id, "resources/list", params), id)
		res, _ := r["result"].(map[string]any)
		list, _ := res["resources"].([]any)
		if len(list) > 50 {
			t.Errorf("page of %d resources", len(list))
		}
		for _, x := range list {
			seen[x.(map[string]any)["uri"].(string)]++
		}
		pages++
		cursor, _ = res["nextCursor"].(string)
		if cursor == "" || pages > 10 {
			break
		}
		if strings.Contains(cursor, "workspaces") {
			t.Errorf("cursor %q is not opaque", cursor)
		}
	}
	// Two per workspace, memory://workspaces and memory://templates.
	if len(seen) != 2*workspaces+2 || pages < 2 {
		t.Errorf("%d resources in %d pages, want %d in 2 or more", len(seen), pages, 2*workspaces+2)
	}
	for uri, n := range seen {
		if n != 1 {
			t.Errorf("%s listed %d times", uri, n)
		}
	}
}

// TestServe_NotFoundPerRevision checks that a missing resource is answered
// with the code each protocol revision prescribes: -32002 up to 2025-11-25,
// invalid params (-32602) from 2026-07-28 on, over both transports.
func TestServe_NotFoundPerRevision(t *testing.T) {
	want := map[string]int64{"2025-11-25": -32002, "2026-07-28": -32602}
	for version, code := range want {
		for name, connect := range transports(t, version) {
			t.Run(version+"/"+name, func(t *testing.T) {
				cs, _ := connect(t)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory://workspaces/nope/context"})
				var je *jsonrpc.Error
				if !errors.As(err, &je) || je.Code != code {
					t.Errorf("read of a missing workspace: %v, want code %d", err, code)
				}
			})
		}
	}
}

package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/server"
)

const (
	legacyVersion = "2025-11-25"
	initBody      = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	pingBody      = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
)

// rawResponse is the part of an HTTP response the tests look at.
type rawResponse struct {
	status  int
	session string
	body    string
}

// postJSON posts body to url with header (name, value pairs).
func postJSON(t *testing.T, url, body string, header ...string) rawResponse {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawResponse{status: resp.StatusCode, session: resp.Header.Get("Mcp-Session-Id"), body: string(b)}
}

// countingBody writes a POST of total body bytes to addr over a raw
// connection, chunked or with Content-Length, and reads the response while
// it writes. It returns the status and how many body bytes the connection
// accepted before the server answered and hung up.
func countingBody(t *testing.T, addr string, chunked bool, total int64) (status int, sent int64) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	framing := fmt.Sprintf("Content-Length: %d\r\n", total)
	if chunked {
		framing = "Transfer-Encoding: chunked\r\n"
	}
	if _, err := fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%s\r\n", addr, framing); err != nil {
		t.Fatal(err)
	}
	var written atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		chunk := []byte(strings.Repeat("a", 32<<10))
		for written.Load() < total {
			var err error
			if chunked {
				_, err = fmt.Fprintf(conn, "%x\r\n%s\r\n", len(chunk), chunk)
			} else {
				_, err = conn.Write(chunk)
			}
			if err != nil {
				return
			}
			written.Add(int64(len(chunk)))
		}
		if chunked {
			_, _ = io.WriteString(conn, "0\r\n\r\n")
		}
	})
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	resp.Body.Close()
	conn.Close() // stops the writer if the server did not
	wg.Wait()
	return resp.StatusCode, written.Load()
}

// TestServe_HTTPBodyLimit sends bodies larger than http.max_body_bytes
// with and without Content-Length: each is refused with 413 long before
// the client has sent it all, and no session check reads it first.
func TestServe_HTTPBodyLimit(t *testing.T) {
	h := startHTTP(t, t.TempDir(), "SELMEM_HTTP_MAX_BODY_BYTES=65536")
	addr := strings.TrimPrefix(h.base, "http://")
	const total = 64 << 20
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			status, sent := countingBody(t, addr, chunked, total)
			if status != http.StatusRequestEntityTooLarge {
				t.Errorf("status %d, want 413", status)
			}
			// What the kernel buffers on loopback is not read by the server;
			// it is a few MiB at most, far below the body.
			if sent > total/4 {
				t.Errorf("the client could send %d of %d bytes: the server read the body", sent, total)
			}
		})
	}
	if r := postJSON(t, h.url, initBody); r.status != http.StatusOK {
		t.Errorf("an initialize under the cap: %d %s", r.status, r.body)
	}
}

// TestServe_HTTPSlowBody sends headers and part of a body, then nothing:
// the server hangs up after http.read_timeout.
func TestServe_HTTPSlowBody(t *testing.T) {
	h := startHTTP(t, t.TempDir(), "SELMEM_HTTP_READ_TIMEOUT=200ms")
	addr := strings.TrimPrefix(h.base, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":", addr); err != nil {
		t.Fatal(err)
	}
	// The deadline only keeps a broken server from hanging the test.
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	got, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("the server kept the connection open: %v (read %q)", err, got)
	}
	if !strings.Contains(string(got), " 408 ") {
		t.Errorf("answer before hanging up: %q, want 408", got)
	}
}

// TestServe_HTTPOrigin checks the Origin allowlist: pages of this machine
// and clients without Origin are served, other pages get 403, and
// http.allowed_origins replaces the default.
func TestServe_HTTPOrigin(t *testing.T) {
	def := startHTTP(t, t.TempDir())
	custom := startHTTP(t, t.TempDir(), "SELMEM_HTTP_ALLOWED_ORIGINS=https://app.example.com,http://localhost:8080")
	tests := []struct {
		name   string
		url    string
		origin string
		want   int
	}{
		{"no origin", def.url, "", http.StatusOK},
		{"localhost any port", def.url, "http://localhost:5173", http.StatusOK},
		{"localhost no port", def.url, "http://localhost", http.StatusOK},
		{"127.0.0.1 https", def.url, "https://127.0.0.1:8443", http.StatusOK},
		{"ipv6 loopback", def.url, "http://[::1]:3000", http.StatusOK},
		{"upper case", def.url, "HTTP://LOCALHOST:3000", http.StatusOK},
		{"foreign", def.url, "https://evil.example", http.StatusForbidden},
		{"localhost lookalike", def.url, "http://localhost.evil.example", http.StatusForbidden},
		{"null", def.url, "null", http.StatusForbidden},
		{"configured", custom.url, "https://app.example.com", http.StatusOK},
		{"configured port", custom.url, "http://localhost:8080", http.StatusOK},
		{"other port than configured", custom.url, "http://localhost:8081", http.StatusForbidden},
		{"configured: no origin", custom.url, "", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var header []string
			if tt.origin != "" {
				header = []string{"Origin", tt.origin}
			}
			if r := postJSON(t, tt.url, initBody, header...); r.status != tt.want {
				t.Errorf("status %d, want %d: %.120s", r.status, tt.want, r.body)
			}
		})
	}
	// DNS rebinding without Origin: a loopback connection must name a
	// loopback host, on every path.
	if r := postJSON(t, def.url, initBody, "Host", "rebound.example:8080"); r.status != http.StatusForbidden {
		t.Errorf("foreign Host on a loopback connection: %d, want 403", r.status)
	}
	base := strings.TrimSuffix(def.url, server.PathMCP)
	getStatus := func(path, host string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, path := range []string{server.PathArtifacts + "demo/dash/data.json", server.PathArtifacts + "demo/dash/", server.PathMetrics, server.PathHealth} {
		for _, host := range []string{"rebound.example:8080", "localhost.rebound.example", "127.0.0.1.rebound.example"} {
			if got := getStatus(path, host); got != http.StatusForbidden {
				t.Errorf("GET %s with Host %s on a loopback connection: %d, want 403", path, host, got)
			}
		}
	}
	for _, host := range []string{"localhost", "127.0.0.1:1234", "[::1]:80"} {
		if got := getStatus(server.PathHealth, host); got != http.StatusOK {
			t.Errorf("GET %s with Host %s: %d, want 200", server.PathHealth, host, got)
		}
	}
}

// clock is a settable clock for session idle times.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// listenHTTP serves a fresh home over HTTP in this process, with the
// default config changed by change and the clock now.
func listenHTTP(t *testing.T, change func(*server.HTTPConfig), now func() time.Time) (*server.HTTPServer, *mcpserver.MCPServer, string) {
	t.Helper()
	store, cfg := freshHome(t)
	change(&cfg.HTTP)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	srv := server.NewMCPServer(store, cfg, &server.Options{Transport: server.TransportHTTP})
	h, err := server.Listen(srv, cfg.HTTP, &server.HTTPOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	serveUntilCleanup(t, h, store)
	return h, srv, "http://" + h.Addr() + server.PathMCP
}

// freshHome opens a store in a new home and returns it with the default
// config for it, serving HTTP on a free loopback port.
func freshHome(t testing.TB) (*memstore.Store, server.Config) {
	t.Helper()
	home := t.TempDir()
	store, err := memstore.Open(context.Background(), home, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := server.DefaultConfig()
	cfg.Home = home
	cfg.HTTP.Addr = "127.0.0.1:0"
	return store, cfg
}

// serveUntilCleanup serves h until the test ends, then closes store.
func serveUntilCleanup(t testing.TB, h *server.HTTPServer, store *memstore.Store) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		_ = store.Close(context.Background())
	})
}

// openSession initialises a session over raw HTTP and returns its id.
func openSession(t *testing.T, url string) string {
	t.Helper()
	r := postJSON(t, url, initBody)
	if r.status != http.StatusOK || r.session == "" {
		t.Fatalf("initialize: %d %q %s", r.status, r.session, r.body)
	}
	return r.session
}

// TestHTTP_SessionCap fills http.max_sessions: the next initialize is
// refused with 503 and a JSON-RPC error naming the setting, and a session
// that ends makes room.
func TestHTTP_SessionCap(t *testing.T) {
	h, _, url := listenHTTP(t, func(c *server.HTTPConfig) { c.MaxSessions = 2 }, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	connect := func() (*mcp.ClientSession, error) {
		return newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	}
	first, err := connect()
	if err != nil {
		t.Fatal(err)
	}
	raw := openSession(t, url)
	if _, err := connect(); err == nil {
		t.Fatal("a third session was opened with http.max_sessions = 2")
	}
	r := postJSON(t, url, initBody)
	if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "http.max_sessions") || !strings.Contains(r.body, `"id":1`) {
		t.Errorf("initialize beyond the cap: %d %s", r.status, r.body)
	}
	// Requests on open sessions still work, and so do sessionless ones.
	if r := postJSON(t, url, pingBody, "Mcp-Session-Id", raw, "Mcp-Protocol-Version", legacyVersion); r.status != http.StatusOK {
		t.Errorf("ping on an open session: %d %s", r.status, r.body)
	}
	if _, err := first.ListTools(ctx, nil); err != nil {
		t.Errorf("tools/list on an open session: %v", err)
	}
	if err := first.Close(); err != nil { // DELETE ends the session
		t.Fatal(err)
	}
	if h.Sessions() != 1 {
		t.Errorf("%d sessions open after one of two ended", h.Sessions())
	}
	cs, err := connect()
	if err != nil {
		t.Fatalf("no room after a session ended: %v", err)
	}
	_ = cs.Close()
}

// TestHTTP_IdleSessionEviction drives the idle sweep with an injected
// clock: a session unused for http.session_idle_ttl is ended and its id
// answered 404, which frees its place under the cap; a session with an
// open event stream, or used recently, stays.
func TestHTTP_IdleSessionEviction(t *testing.T) {
	c := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	const ttl = 10 * time.Minute
	h, srv, url := listenHTTP(t, func(cfg *server.HTTPConfig) {
		cfg.MaxSessions = 2
		cfg.SessionIdleTTL = ttl
	}, c.Now)
	idle := openSession(t, url)
	streaming := openSession(t, url)
	if r := postJSON(t, url, initBody); r.status != http.StatusServiceUnavailable {
		t.Fatalf("cap not reached: %d", r.status)
	}

	// An open GET stream keeps its session.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", streaming)
	req.Header.Set("Mcp-Protocol-Version", legacyVersion)
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %v %v", err, stream)
	}

	// registered reports whether the MCP server still holds a session.
	registered := func(id string) bool {
		return !errors.Is(srv.DeleteSessionTools(id), mcpserver.ErrSessionNotFound)
	}
	if !registered(idle) {
		t.Fatal("the MCP server does not know an open session")
	}

	c.advance(ttl - time.Second)
	if n := h.SweepIdleSessions(); n != 0 {
		t.Errorf("swept %d sessions before the TTL", n)
	}
	c.advance(time.Second)
	if n := h.SweepIdleSessions(); n != 1 {
		t.Errorf("swept %d sessions at the TTL, want 1", n)
	}
	if registered(idle) {
		t.Error("the MCP server still holds the evicted session")
	}
	if r := postJSON(t, url, pingBody, "Mcp-Session-Id", idle, "Mcp-Protocol-Version", legacyVersion); r.status != http.StatusNotFound {
		t.Errorf("ping on an evicted session: %d, want 404", r.status)
	}
	if r := postJSON(t, url, pingBody, "Mcp-Session-Id", streaming, "Mcp-Protocol-Version", legacyVersion); r.status != http.StatusOK {
		t.Errorf("ping on the streaming session: %d %s", r.status, r.body)
	}
	// The evicted session's place is free again.
	fresh := openSession(t, url)

	// Once the stream ends, its session idles out like any other.
	cancel()
	stream.Body.Close()
	waitFor(t, func() bool {
		c.advance(ttl)
		h.SweepIdleSessions()
		return h.Sessions() == 0
	})
	for _, id := range []string{streaming, fresh} {
		if registered(id) {
			t.Errorf("the MCP server still holds evicted session %s", id)
		}
		if r := postJSON(t, url, pingBody, "Mcp-Session-Id", id, "Mcp-Protocol-Version", legacyVersion); r.status != http.StatusNotFound {
			t.Errorf("ping on an evicted session: %d, want 404", r.status)
		}
	}
}

// waitFor polls cond until it holds, for what the server does after a
// client hangs up.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("condition never held")
}

// TestHTTP_StreamNeedsSession: a GET event stream is only opened on an
// open session, so streams cannot create sessions around the cap.
func TestHTTP_StreamNeedsSession(t *testing.T) {
	_, _, url := listenHTTP(t, func(*server.HTTPConfig) {}, nil)
	tests := []struct {
		name, session string
		want          int
	}{
		{"no session", "", http.StatusBadRequest},
		{"unknown session", "mcp-session-0123456789", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", legacyVersion)
			if tt.session != "" {
				req.Header.Set("Mcp-Session-Id", tt.session)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
}

// TestHTTP_StreamOutlivesTimeouts: the read, write and idle timeouts bound
// request bodies and single writes, not the life of an event stream. With
// every timeout at 50ms, a GET stream opened long before still delivers a
// notification.
func TestHTTP_StreamOutlivesTimeouts(t *testing.T) {
	_, _, url := listenHTTP(t, func(c *server.HTTPConfig) {
		c.ReadTimeout, c.WriteTimeout, c.IdleTimeout = 50*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond
	}, nil)
	initialized := func(id string) {
		t.Helper()
		if r := postJSON(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", id, "Mcp-Protocol-Version", legacyVersion); r.status != http.StatusAccepted {
			t.Fatalf("initialized: %d %s", r.status, r.body)
		}
	}
	listener := openSession(t, url)
	initialized(listener)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", listener)
	req.Header.Set("Mcp-Protocol-Version", legacyVersion)
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %v %v", err, stream)
	}
	defer stream.Body.Close()
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stream.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()

	// Let every timeout pass many times over (a wait, not a measurement).
	time.Sleep(500 * time.Millisecond)

	writer := openSession(t, url)
	initialized(writer)
	create := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_create","arguments":{"path":"/memories/workspaces/demo/task.md","file_text":"- Amounts in EUR.\n"}}}`
	if r := postJSON(t, url, create, "Mcp-Session-Id", writer, "Mcp-Protocol-Version", legacyVersion); r.status != http.StatusOK || strings.Contains(r.body, `"isError":true`) {
		t.Fatalf("memory_create: %d %s", r.status, r.body)
	}
	for line := range lines {
		if strings.Contains(line, "notifications/resources/list_changed") {
			return
		}
	}
	t.Fatalf("the stream ended without the notification: %v", ctx.Err())
}

// holdRequest starts a POST on a raw connection as token (none when
// empty) and sends only
// part of its body, so that the server handles it until the connection is
// closed. The connection is closed at cleanup.
func holdRequest(t *testing.T, addr, token string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	if _, err := fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\n%sContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{", addr, auth); err != nil {
		t.Fatal(err)
	}
	return conn
}

// TestHTTP_RequestCap holds requests in flight: beyond
// http.max_requests_per_principal a principal's next request is refused
// with 503 naming the setting while another principal's is served; beyond
// http.max_requests everyone's is; a request that ends gives its slot back,
// refused ones hold none. Without http.auth only the cap in all applies.
func TestHTTP_RequestCap(t *testing.T) {
	srv := listenAuth(t, func(c *server.Config) {
		c.HTTP.Auth = testAuth(nil)
		c.HTTP.MaxRequests = 3
		c.HTTP.MaxRequestsPerPrincipal = 2
	}, nil)
	addr := strings.TrimPrefix(srv.base, "http://")
	inFlight := func(n int) { t.Helper(); waitFor(t, func() bool { return srv.h.Requests() == n }) }
	post := func(token string) (int, string) {
		t.Helper()
		resp, body := send(t, http.MethodPost, srv.url, token, initBody)
		return resp.StatusCode, body
	}
	refused := func(token, setting string) {
		t.Helper()
		status, body := post(token)
		if status != http.StatusServiceUnavailable || !strings.Contains(body, setting) || !strings.Contains(body, `"jsonrpc"`) {
			t.Errorf("beyond %s: %d %s", setting, status, body)
		}
	}

	alice := []net.Conn{holdRequest(t, addr, tokAlice), holdRequest(t, addr, tokAlice)}
	inFlight(2)
	refused(tokAlice, "http.max_requests_per_principal")
	if status, body := post(tokBob); status != http.StatusOK {
		t.Errorf("bob beside alice's held requests: %d %s", status, body)
	}
	holdRequest(t, addr, tokBob)
	inFlight(3)
	refused(tokBob, "http.max_requests")
	refused(tokAlice, "http.max_requests")

	_ = alice[0].Close()
	inFlight(2)
	if status, body := post(tokAlice); status != http.StatusOK {
		t.Errorf("alice after one of her requests ended: %d %s", status, body)
	}
	if n := srv.h.Requests(); n != 2 {
		t.Errorf("%d requests in flight after the served and refused ones, want the 2 held", n)
	}

	h, _, url := listenHTTP(t, func(c *server.HTTPConfig) { c.MaxRequests, c.MaxRequestsPerPrincipal = 2, 1 }, nil)
	local := strings.TrimPrefix(strings.TrimSuffix(url, server.PathMCP), "http://")
	holdRequest(t, local, "")
	holdRequest(t, local, "")
	waitFor(t, func() bool { return h.Requests() == 2 })
	if r := postJSON(t, url, initBody); r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "http.max_requests") {
		t.Errorf("without auth, beyond http.max_requests: %d %s", r.status, r.body)
	}
}

// TestHTTP_SessionCapPerPrincipal: with http.auth, a principal with
// http.max_sessions_per_principal sessions open is refused another (503
// naming the setting) while another principal opens one, until the cap in
// all refuses everyone; a session ended makes room. Without http.auth
// there is one principal, and only the cap in all applies.
func TestHTTP_SessionCapPerPrincipal(t *testing.T) {
	srv := listenAuth(t, func(c *server.Config) {
		c.HTTP.Auth = testAuth(nil)
		c.HTTP.MaxSessions = 3
		c.HTTP.MaxSessionsPerPrincipal = 2
	}, nil)
	initialize := func(token string) (int, string, string) {
		t.Helper()
		resp, body := send(t, http.MethodPost, srv.url, token, initBody)
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), body
	}
	refused := func(token, setting string) {
		t.Helper()
		if status, _, body := initialize(token); status != http.StatusServiceUnavailable || !strings.Contains(body, setting) {
			t.Errorf("beyond %s: %d %s", setting, status, body)
		}
	}
	var alice []string
	for range 2 {
		status, id, body := initialize(tokAlice)
		if status != http.StatusOK || id == "" {
			t.Fatalf("alice's session: %d %s", status, body)
		}
		alice = append(alice, id)
	}
	refused(tokAlice, "http.max_sessions_per_principal")
	if status, _, body := initialize(tokBob); status != http.StatusOK {
		t.Fatalf("bob beside alice's sessions: %d %s", status, body)
	}
	refused(tokBob, "http.max_sessions")
	if resp, body := send(t, http.MethodDelete, srv.url, tokAlice, "", "Mcp-Session-Id", alice[0]); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %d %s", resp.StatusCode, body)
	}
	if status, _, body := initialize(tokAlice); status != http.StatusOK {
		t.Errorf("alice after one of her sessions ended: %d %s", status, body)
	}

	h, _, url := listenHTTP(t, func(c *server.HTTPConfig) { c.MaxSessions, c.MaxSessionsPerPrincipal = 2, 1 }, nil)
	openSession(t, url)
	openSession(t, url)
	if n := h.Sessions(); n != 2 {
		t.Errorf("without auth, %d sessions open under a per-principal cap of 1 and a cap of 2, want 2", n)
	}
}

// TestHTTP_StreamCap: a session holds at most 8 event streams; the next
// GET is refused with 503, and a stream that ends makes room.
func TestHTTP_StreamCap(t *testing.T) {
	_, _, url := listenHTTP(t, func(*server.HTTPConfig) {}, nil)
	id := openSession(t, url)
	open := func() (*http.Response, context.CancelFunc) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", legacyVersion)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		t.Cleanup(func() { cancel(); resp.Body.Close() })
		return resp, cancel
	}
	var cancels []context.CancelFunc
	for range 8 {
		resp, cancel := open()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream %d: status %d", len(cancels)+1, resp.StatusCode)
		}
		cancels = append(cancels, cancel)
	}
	if resp, _ := open(); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a ninth stream: status %d, want 503", resp.StatusCode)
	}
	cancels[0]()
	waitFor(t, func() bool {
		resp, cancel := open()
		defer cancel()
		return resp.StatusCode == http.StatusOK
	})
}

// TestHTTP_StreamsEndWithTheirSession: DELETE of a session ends its open
// event streams, so a client cannot keep streams past both caps by ending
// sessions and opening new ones.
func TestHTTP_StreamsEndWithTheirSession(t *testing.T) {
	h, _, url := listenHTTP(t, func(*server.HTTPConfig) {}, nil)
	id := openSession(t, url)
	// A stream that stayed open fails the test when this expires.
	client := &http.Client{Timeout: 30 * time.Second}
	var bodies []io.ReadCloser
	for range 3 {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", legacyVersion)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream: status %d", resp.StatusCode)
		}
		bodies = append(bodies, resp.Body)
	}
	del, _ := http.NewRequest(http.MethodDelete, url, nil)
	del.Header.Set("Mcp-Session-Id", id)
	del.Header.Set("Mcp-Protocol-Version", legacyVersion)
	resp, err := http.DefaultClient.Do(del)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for i, b := range bodies {
		if _, err := io.ReadAll(b); err != nil {
			t.Errorf("stream %d after DELETE: %v", i+1, err)
		}
	}
	if n := h.Sessions(); n != 0 {
		t.Errorf("%d sessions open after DELETE, want 0", n)
	}
}

// invalidMessages are JSON-RPC messages MCP does not admit, with the
// error code each gets: -32600 (invalid request) for JSON, -32700 for
// text that is not JSON.
var invalidMessages = []struct {
	name, body string
	code       int
}{
	{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600},
	{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600},
	{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600},
	{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600},
	{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600},
	{"number method", `{"jsonrpc":"2.0","id":1,"method":5}`, -32600},
	{"no method, no result", `{"jsonrpc":"2.0","id":13}`, -32600},
	{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600},
	{"empty batch", `[]`, -32600},
	{"not an object", `"ping"`, -32600},
	{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, -32600},
	{"not JSON", `{"jsonrpc":"2.0",`, -32700},
}

// TestHTTP_InvalidMessages: JSON that is no JSON-RPC message MCP admits
// gets 400 and -32600 (invalid request), and text that is not JSON
// -32700, before any session is looked at.
func TestHTTP_InvalidMessages(t *testing.T) {
	_, _, url := listenHTTP(t, func(*server.HTTPConfig) {}, nil)
	id := openSession(t, url)
	for _, tt := range invalidMessages {
		t.Run(tt.name, func(t *testing.T) {
			r := postJSON(t, url, tt.body, "Mcp-Session-Id", id)
			if !strings.Contains(r.body, fmt.Sprintf(`"code":%d`, tt.code)) {
				t.Errorf("%d %s; want JSON-RPC error %d", r.status, r.body, tt.code)
			}
			if tt.code == -32600 && r.status != http.StatusBadRequest {
				t.Errorf("status %d, want 400", r.status)
			}
		})
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":"a","method":"ping"}`,
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	} {
		if r := postJSON(t, url, body, "Mcp-Session-Id", id); r.status != http.StatusOK && r.status != http.StatusAccepted {
			t.Errorf("%s: %d %s", body, r.status, r.body)
		}
	}
}

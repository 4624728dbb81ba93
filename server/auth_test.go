package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/server"
)

// testAudience is the aud selmem expects in OIDC tokens in these tests.
const testAudience = "selmem-test"

// Static tokens of the tests, as a client sends them.
const (
	tokAlice   = "smm_test-alice"
	tokBob     = "smm_test-bob"
	tokService = "smm_test-ci"
	tokAdmin   = "smm_test-root"
)

// issuer is a mock OIDC provider on loopback: selmem discovers it and reads
// its keys over HTTP, and the tests sign access tokens with its key.
type issuer struct{ m *mockoidc.MockOIDC }

func startIssuer(t testing.TB) *issuer {
	t.Helper()
	m, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	return &issuer{m: m}
}

// token signs an access token for sub with the issuer's key: issuer,
// audience testAudience and ten minutes of validity, then the claims of
// change (a nil value removes a claim).
func (i *issuer) token(t testing.TB, sub string, change jwt.MapClaims) string {
	t.Helper()
	now := time.Now()
	c := jwt.MapClaims{
		"iss": i.m.Issuer(), "aud": testAudience, "sub": sub,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(10 * time.Minute).Unix(),
	}
	for k, v := range change {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	tok, err := i.m.Keypair.SignJWT(c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// testAuth is the auth section of the tests: four static tokens, admins,
// and OIDC with the issuer (user from preferred_username).
func testAuth(iss *issuer) server.AuthConfig {
	a := server.DefaultConfig().HTTP.Auth
	a.Tokens = map[string]server.StaticToken{
		"alice": {SHA256: server.HashToken(tokAlice), User: "alice", Groups: []string{"finance"}},
		"bob":   {SHA256: server.HashToken(tokBob), User: "bob", Kind: server.TokenKindPerson},
		"ci":    {SHA256: server.HashToken(tokService), User: "ci-bot", Kind: server.TokenKindService},
		"root":  {SHA256: server.HashToken(tokAdmin), User: "root"},
	}
	a.Admins = []string{"root"}
	if iss != nil {
		a.OIDC.Issuer = iss.m.Issuer()
		a.OIDC.Audience = testAudience
		a.OIDC.UserClaim = "preferred_username"
		a.OIDC.AdminGroup = "selmem-admins"
	}
	return a
}

// authServer is selmem over HTTP in this process, with a test tool that
// answers the principal its handler sees.
type authServer struct {
	h     *server.HTTPServer
	base  string // http://host:port
	url   string // the MCP endpoint
	store *memstore.Store
	home  string
	logs  *syncBuffer
}

// whoamiTool is the test tool that returns the principal of its context.
const whoamiTool = "test_whoami"

// listenAuth serves a fresh home over HTTP with cfg changed by change;
// artifacts, when set, serves /artifacts/.
func listenAuth(t testing.TB, change func(*server.Config), artifacts http.Handler) *authServer {
	t.Helper()
	store, cfg := freshHome(t)
	cfg.Author = "tester"
	change(&cfg)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	srv := server.NewMCPServer(store, cfg, &server.Options{Transport: server.TransportHTTP})
	srv.AddTool(mcpgo.NewTool(whoamiTool, mcpgo.WithDescription("the caller's principal")),
		func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			p, ok := access.FromContext(ctx)
			if !ok {
				return mcpgo.NewToolResultError("no principal"), nil
			}
			b, _ := json.Marshal(p)
			return mcpgo.NewToolResultText(string(b)), nil
		})
	logs := &syncBuffer{}
	h, err := server.Listen(srv, cfg.HTTP, &server.HTTPOptions{
		Logger: slog.New(slog.NewTextHandler(logs, nil)), Artifacts: artifacts, LocalUser: cfg.Author,
	})
	if err != nil {
		t.Fatal(err)
	}
	serveUntilCleanup(t, h, store)
	base := "http://" + h.Addr()
	return &authServer{h: h, base: base, url: base + server.PathMCP, store: store, home: cfg.Home, logs: logs}
}

// bearer adds a bearer token to every request of an HTTP client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.next.RoundTrip(r)
}

// connectAs opens an MCP session with the official Go SDK, sending token.
func connectAs(t testing.TB, url, token string) (*mcp.ClientSession, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: url, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

// whoami returns the principal the test tool sees.
func whoami(t testing.TB, cs *mcp.ClientSession) access.Principal {
	t.Helper()
	text, _, isErr := call(t, cs, whoamiTool, nil)
	if isErr {
		t.Fatalf("%s: %s", whoamiTool, text)
	}
	var p access.Principal
	if err := json.Unmarshal([]byte(text), &p); err != nil {
		t.Fatalf("%s: %v: %s", whoamiTool, err, text)
	}
	return p
}

// send makes a request with an optional bearer token and header pairs and
// returns the response with its body read.
func send(t testing.TB, method, url, token, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestAuth_Principals sends each kind of token: a valid one opens a
// session whose tool calls see its principal; any other is answered 401
// with a WWW-Authenticate header pointing to the metadata.
func TestAuth_Principals(t *testing.T) {
	iss := startIssuer(t)
	srv := listenAuth(t, func(c *server.Config) { c.HTTP.Auth = testAuth(iss) }, nil)
	other, err := mockoidc.RandomKeypair(2048)
	if err != nil {
		t.Fatal(err)
	}
	forged, err := other.SignJWT(jwt.MapClaims{"iss": iss.m.Issuer(), "aud": testAudience, "sub": "eve", "preferred_username": "eve", "exp": time.Now().Add(time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		header  string // Authorization
		want    access.Principal
		invalid bool // 401 with error="invalid_token" (else 401 without it, when want is zero)
	}{
		{name: "static person", header: "Bearer " + tokAlice, want: access.Principal{User: "alice", Groups: []string{"finance"}, Kind: access.KindPerson}},
		{name: "static person, scheme in lower case", header: "bearer " + tokBob, want: access.Principal{User: "bob", Kind: access.KindPerson}},
		{name: "static service", header: "Bearer " + tokService, want: access.Principal{User: "ci-bot", Kind: access.KindService}},
		{name: "static admin", header: "Bearer " + tokAdmin, want: access.Principal{User: "root", Kind: access.KindPerson, Admin: true}},
		{name: "oidc", header: "Bearer " + iss.token(t, "u-1", jwt.MapClaims{"preferred_username": "carol", "groups": []string{"sales", "eng"}}),
			want: access.Principal{User: "carol", Groups: []string{"sales", "eng"}, Kind: access.KindPerson}},
		{name: "oidc admin group", header: "Bearer " + iss.token(t, "u-2", jwt.MapClaims{"preferred_username": "dave", "groups": []string{"selmem-admins"}}),
			want: access.Principal{User: "dave", Groups: []string{"selmem-admins"}, Kind: access.KindPerson, Admin: true}},
		{name: "oidc expired within the clock skew", header: "Bearer " + iss.token(t, "u-3", jwt.MapClaims{"preferred_username": "erin", "exp": time.Now().Add(-30 * time.Second).Unix()}),
			want: access.Principal{User: "erin", Kind: access.KindPerson}},
		{name: "no header"},
		{name: "basic auth", header: "Basic YWxpY2U6c2VjcmV0"},
		{name: "empty bearer", header: "Bearer "},
		{name: "unknown static token", header: "Bearer smm_nope", invalid: true},
		{name: "static token with a suffix", header: "Bearer " + tokAlice + "x", invalid: true},
		{name: "oidc expired", header: "Bearer " + iss.token(t, "u-4", jwt.MapClaims{"preferred_username": "frank", "exp": time.Now().Add(-5 * time.Minute).Unix()}), invalid: true},
		{name: "oidc wrong audience", header: "Bearer " + iss.token(t, "u-5", jwt.MapClaims{"preferred_username": "gina", "aud": "another-api"}), invalid: true},
		{name: "oidc wrong issuer", header: "Bearer " + iss.token(t, "u-6", jwt.MapClaims{"preferred_username": "hank", "iss": "https://idp.example.com"}), invalid: true},
		{name: "oidc signed by another key", header: "Bearer " + forged, invalid: true},
		{name: "oidc without the user claim", header: "Bearer " + iss.token(t, "u-7", nil), invalid: true},
		{name: "oidc user claim naming a path", header: "Bearer " + iss.token(t, "u-8", jwt.MapClaims{"preferred_username": "../bob"}), invalid: true},
		{name: "oidc not yet valid", header: "Bearer " + iss.token(t, "u-9", jwt.MapClaims{"preferred_username": "ivy", "nbf": time.Now().Add(time.Hour).Unix()}), invalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := send(t, http.MethodPost, srv.url, "", initBody, "Authorization", tt.header)
			if tt.want.User == "" {
				if resp.StatusCode != http.StatusUnauthorized {
					t.Fatalf("status %d, want 401: %s", resp.StatusCode, body)
				}
				ch := resp.Header.Get("WWW-Authenticate")
				wantMeta := `Bearer resource_metadata="` + srv.base + `/.well-known/oauth-protected-resource"`
				if !strings.HasPrefix(ch, wantMeta) {
					t.Errorf("WWW-Authenticate %q, want it to start with %q", ch, wantMeta)
				}
				if got := strings.Contains(ch, `error="invalid_token"`); got != tt.invalid {
					t.Errorf("WWW-Authenticate %q: error=invalid_token %v, want %v", ch, got, tt.invalid)
				}
				if resp.Header.Get("Mcp-Session-Id") != "" {
					t.Error("a session was opened")
				}
				return
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("initialize: status %d: %s", resp.StatusCode, body)
			}
			cs, err := connectAs(t, srv.url, strings.TrimSpace(tt.header[len("Bearer "):]))
			if err != nil {
				t.Fatal(err)
			}
			if got := whoami(t, cs); !equalPrincipal(got, tt.want) {
				t.Errorf("principal %+v, want %+v", got, tt.want)
			}
		})
	}
	if n := srv.h.Sessions(); n > len(tests) {
		t.Errorf("%d sessions open", n)
	}
	// The official client is refused too.
	if _, err := connectAs(t, srv.url, ""); err == nil {
		t.Error("an anonymous client connected")
	}
}

func equalPrincipal(a, b access.Principal) bool {
	return a.User == b.User && a.Kind == b.Kind && a.Admin == b.Admin && strings.Join(a.Groups, ",") == strings.Join(b.Groups, ",")
}

// TestAuth_ExpiredMidSession: every request is authenticated, not only
// initialize: an expired token of the session's own user is answered 401.
func TestAuth_ExpiredMidSession(t *testing.T) {
	iss := startIssuer(t)
	srv := listenAuth(t, func(c *server.Config) { c.HTTP.Auth = testAuth(iss) }, nil)
	tok := iss.token(t, "u", jwt.MapClaims{"preferred_username": "kim"})
	resp, body := send(t, http.MethodPost, srv.url, tok, initBody)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	sid := []string{"Mcp-Session-Id", resp.Header.Get("Mcp-Session-Id")}
	if resp, body := send(t, http.MethodPost, srv.url, tok, pingBody, sid...); resp.StatusCode != http.StatusOK {
		t.Fatalf("ping: %d %s", resp.StatusCode, body)
	}
	expired := iss.token(t, "u", jwt.MapClaims{"preferred_username": "kim", "exp": time.Now().Add(-time.Hour).Unix()})
	resp, _ = send(t, http.MethodPost, srv.url, expired, pingBody, sid...)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "expired") {
		t.Errorf("expired token: %d %q, want 401 saying the token expired", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

// TestAuth_Metadata checks the RFC 9728 document, at the bare well-known
// path and at the one derived from /mcp, and that it and /healthz need no
// token.
func TestAuth_Metadata(t *testing.T) {
	iss := startIssuer(t)
	tests := []struct {
		name     string
		change   func(*server.AuthConfig)
		resource string // "" is the server's own base + /mcp
		servers  []string
		scopes   []string
	}{
		{name: "oidc", change: func(*server.AuthConfig) {}, servers: []string{iss.m.Issuer()}},
		{name: "static tokens only", change: func(a *server.AuthConfig) { a.OIDC.Issuer = "" }},
		{name: "public URL and scopes", change: func(a *server.AuthConfig) {
			a.Resource = "https://selmem.example.com/mcp"
			a.Scopes = []string{"selmem"}
		}, resource: "https://selmem.example.com/mcp", servers: []string{iss.m.Issuer()}, scopes: []string{"selmem"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := listenAuth(t, func(c *server.Config) {
				c.HTTP.Auth = testAuth(iss)
				tt.change(&c.HTTP.Auth)
			}, nil)
			want := map[string]any{"resource": srv.url, "bearer_methods_supported": []any{"header"}, "resource_name": "selmem"}
			if tt.resource != "" {
				want["resource"] = tt.resource
			}
			if tt.servers != nil {
				want["authorization_servers"] = []any{tt.servers[0]}
			}
			if tt.scopes != nil {
				want["scopes_supported"] = []any{tt.scopes[0]}
			}
			for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
				resp, body := send(t, http.MethodGet, srv.base+path, "", "")
				if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
					t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
				}
				var got map[string]any
				if err := json.Unmarshal([]byte(body), &got); err != nil {
					t.Fatal(err)
				}
				if g, w := mustJSON(got), mustJSON(want); g != w {
					t.Errorf("GET %s:\n got %s\nwant %s", path, g, w)
				}
			}
			resp, _ := send(t, http.MethodPost, srv.url, "", initBody)
			ch := resp.Header.Get("WWW-Authenticate")
			if tt.resource != "" && !strings.Contains(ch, `resource_metadata="https://selmem.example.com/.well-known/oauth-protected-resource"`) {
				t.Errorf("WWW-Authenticate %q does not point to the public URL", ch)
			}
			if tt.scopes != nil && !strings.Contains(ch, `scope="selmem"`) {
				t.Errorf("WWW-Authenticate %q lacks the scopes", ch)
			}
			if resp, body := send(t, http.MethodGet, srv.base+server.PathHealth, "", ""); resp.StatusCode != http.StatusOK {
				t.Errorf("/healthz without a token: %d %s", resp.StatusCode, body)
			}
			if resp, _ := send(t, http.MethodGet, srv.base+"/elsewhere", "", ""); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("another path without a token: %d, want 401", resp.StatusCode)
			}
		})
	}
	// Without auth there is nothing to discover.
	srv := listenAuth(t, func(*server.Config) {}, nil)
	if resp, _ := send(t, http.MethodGet, srv.base+server.PathProtectedResource, "", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("metadata without auth: %d, want 404", resp.StatusCode)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestAuth_LoopbackOnly: without auth only loopback addresses are served,
// as the local owner; --insecure-no-auth serves another with a warning.
func TestAuth_LoopbackOnly(t *testing.T) {
	tests := []struct {
		name     string
		addr     string
		auth     bool
		insecure bool
		refused  bool
	}{
		{name: "loopback", addr: "127.0.0.1:0"},
		{name: "localhost", addr: "localhost:0"},
		{name: "every interface", addr: "0.0.0.0:0", refused: true},
		{name: "empty host", addr: ":0", refused: true},
		{name: "every interface with auth", addr: "0.0.0.0:0", auth: true},
		{name: "every interface, insecure", addr: "0.0.0.0:0", insecure: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := server.DefaultConfig()
			cfg.HTTP.Addr = tt.addr
			cfg.HTTP.InsecureNoAuth = tt.insecure
			if tt.auth {
				cfg.HTTP.Auth = testAuth(nil)
			}
			h, err := server.Listen(mcpserver.NewMCPServer("test", "1"), cfg.HTTP, nil)
			if tt.refused {
				if err == nil {
					t.Fatal("Listen accepted")
				}
				for _, w := range []string{"not a loopback address", "http.auth", "--insecure-no-auth"} {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- h.Serve(ctx) }()
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
	// The warning, and the local owner as principal.
	srv := listenAuth(t, func(c *server.Config) {
		c.HTTP.Addr = "0.0.0.0:0"
		c.HTTP.InsecureNoAuth = true
	}, nil)
	_, port, err := net.SplitHostPort(srv.h.Addr())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := connectAs(t, "http://127.0.0.1:"+port+server.PathMCP, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := whoami(t, cs), access.Local("tester"); !equalPrincipal(got, want) {
		t.Errorf("principal %+v, want %+v", got, want)
	}
	if !strings.Contains(srv.logs.String(), "level=WARN msg=\"INSECURE: serving without authentication") {
		t.Errorf("no warning logged:\n%s", srv.logs)
	}
}

// TestAuth_SessionBound: a session serves only the principal that opened
// it; another principal's token on it is answered 404, as for an unknown
// session, and does not end it.
func TestAuth_SessionBound(t *testing.T) {
	srv := listenAuth(t, func(c *server.Config) { c.HTTP.Auth = testAuth(nil) }, nil)
	resp, body := send(t, http.MethodPost, srv.url, tokAlice, initBody)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	id := resp.Header.Get("Mcp-Session-Id")
	sid := []string{"Mcp-Session-Id", id}
	tests := []struct {
		name, method, token, body string
		want                      int
	}{
		{"another user's POST", http.MethodPost, tokBob, pingBody, http.StatusNotFound},
		{"a service token's POST", http.MethodPost, tokService, pingBody, http.StatusNotFound},
		{"an admin's POST", http.MethodPost, tokAdmin, pingBody, http.StatusNotFound},
		{"another user's GET stream", http.MethodGet, tokBob, "", http.StatusNotFound},
		{"another user's DELETE", http.MethodDelete, tokBob, "", http.StatusNotFound},
		{"no token", http.MethodPost, "", pingBody, http.StatusUnauthorized},
		{"the owner's POST", http.MethodPost, tokAlice, pingBody, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := send(t, tt.method, srv.url, tt.token, tt.body, sid...)
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tt.want, body)
			}
		})
	}
	if resp, _ := send(t, http.MethodDelete, srv.url, tokAlice, "", sid...); resp.StatusCode != http.StatusOK {
		t.Errorf("the owner's DELETE: %d", resp.StatusCode)
	}
	if n := srv.h.Sessions(); n != 0 {
		t.Errorf("%d sessions open after the owner's DELETE", n)
	}
}

// TestAuth_Artifacts: artifact pages need a token, and their handler sees
// the principal in the request context.
func TestAuth_Artifacts(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := access.FromContext(r.Context())
		if !ok {
			http.Error(w, "no principal", http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, p.String())
	})
	srv := listenAuth(t, func(c *server.Config) { c.HTTP.Auth = testAuth(nil) }, echo)
	for _, tt := range []struct{ token, want string }{{tokAlice, "alice"}, {tokService, "service ci-bot"}} {
		resp, body := send(t, http.MethodGet, srv.base+"/artifacts/ws/report/", tt.token, "")
		if resp.StatusCode != http.StatusOK || body != tt.want {
			t.Errorf("GET /artifacts/ as %s: %d %q, want %q", tt.want, resp.StatusCode, body, tt.want)
		}
	}
	if resp, _ := send(t, http.MethodGet, srv.base+"/artifacts/ws/report/", "", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /artifacts/ without a token: %d, want 401", resp.StatusCode)
	}
	// Without auth, the local owner.
	local := listenAuth(t, func(*server.Config) {}, echo)
	if resp, body := send(t, http.MethodGet, local.base+"/artifacts/ws/report/", "", ""); body != "tester" {
		t.Errorf("GET /artifacts/ without auth: %d %q, want the local owner", resp.StatusCode, body)
	}
}

// TestAuth_IssuerDown: with the issuer unreachable, an OIDC token is
// answered 503 (not 401: the token may be fine) and static tokens work.
func TestAuth_IssuerDown(t *testing.T) {
	iss := startIssuer(t)
	tok := iss.token(t, "u", jwt.MapClaims{"preferred_username": "lee"})
	auth := testAuth(iss)
	auth.OIDC.Timeout = 2 * time.Second
	if err := iss.m.Shutdown(); err != nil {
		t.Fatal(err)
	}
	srv := listenAuth(t, func(c *server.Config) { c.HTTP.Auth = auth }, nil)
	if resp, body := send(t, http.MethodPost, srv.url, tok, initBody); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("OIDC token with the issuer down: %d %s, want 503", resp.StatusCode, body)
	}
	if resp, body := send(t, http.MethodPost, srv.url, tokAlice, initBody); resp.StatusCode != http.StatusOK {
		t.Errorf("static token with the issuer down: %d %s", resp.StatusCode, body)
	}
}

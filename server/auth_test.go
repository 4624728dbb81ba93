package server_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
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
		{name: "oidc alg none", header: "Bearer " + unsigned(t, iss), invalid: true},
		{name: "oidc HS256 keyed with the issuer's public key", header: "Bearer " + hmacWithPublicKey(t, iss), invalid: true},
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

// forgedClaims are the claims of the forged tokens: a valid issuer,
// audience and expiry.
func forgedClaims(t testing.TB, iss *issuer) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"iss": iss.m.Issuer(), "aud": testAudience, "sub": "eve",
		"preferred_username": "eve", "exp": time.Now().Add(time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// unsigned is a token with alg none.
func unsigned(t testing.TB, iss *issuer) string {
	return base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + forgedClaims(t, iss) + "."
}

// hmacWithPublicKey is a token signed with HS256 keyed with the issuer's
// public key, which a verifier confusing algorithms would accept.
func hmacWithPublicKey(t testing.TB, iss *issuer) string {
	t.Helper()
	pub, err := x509.MarshalPKIXPublicKey(&iss.m.Keypair.PrivateKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	kid, err := iss.m.Keypair.KeyID()
	if err != nil {
		t.Fatal(err)
	}
	signed := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT","kid":"`+kid+`"}`)) +
		"." + forgedClaims(t, iss)
	mac := hmac.New(sha256.New, pub)
	mac.Write([]byte(signed))
	return signed + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func equalPrincipal(a, b access.Principal) bool {
	return a.User == b.User && a.Kind == b.Kind && a.Admin == b.Admin && strings.Join(a.Groups, ",") == strings.Join(b.Groups, ",")
}

// TestAuth_OIDCUserNames: an OIDC user is named by the configured claim
// only when the issuer vouches for it and it cannot pass for someone else:
// an email that is not verified, a static token's user (ignoring case) or
// a name with control characters is refused with 401 invalid_token, and
// the log says why.
func TestAuth_OIDCUserNames(t *testing.T) {
	iss := startIssuer(t)
	servers := map[string]*authServer{}
	for _, c := range []string{"email", "preferred_username"} {
		servers[c] = listenAuth(t, func(cfg *server.Config) {
			cfg.HTTP.Auth = testAuth(iss)
			cfg.HTTP.Auth.OIDC.UserClaim = c
		}, nil)
	}
	tests := []struct {
		name   string
		claim  string // http.auth.oidc.user_claim
		claims jwt.MapClaims
		want   access.Principal // zero: refused
		reason string           // in the log line of a refusal
	}{
		{name: "verified email", claim: "email", claims: jwt.MapClaims{"email": "kim@example.com", "email_verified": true},
			want: access.Principal{User: "kim@example.com", Kind: access.KindPerson}},
		{name: `email_verified "true"`, claim: "email", claims: jwt.MapClaims{"email": "kim@example.com", "email_verified": "true"},
			want: access.Principal{User: "kim@example.com", Kind: access.KindPerson}},
		{name: "unverified email", claim: "email", claims: jwt.MapClaims{"email": "kim@example.com", "email_verified": false},
			reason: "email_verified is not true"},
		{name: "email without email_verified", claim: "email", claims: jwt.MapClaims{"email": "kim@example.com"},
			reason: "email_verified is not true"},
		{name: "unverified email naming an admin", claim: "email", claims: jwt.MapClaims{"email": "root", "email_verified": false},
			reason: "email_verified is not true"},
		{name: "verified email naming a static user", claim: "email", claims: jwt.MapClaims{"email": "root", "email_verified": true},
			reason: `OIDC user \"root\" (claim email) is the user of static token http.auth.tokens.root`},
		{name: "static user", claim: "preferred_username", claims: jwt.MapClaims{"preferred_username": "alice"},
			reason: "is the user of static token http.auth.tokens.alice"},
		{name: "static user in other case", claim: "preferred_username", claims: jwt.MapClaims{"preferred_username": "Ci-Bot"},
			reason: "is the user of static token http.auth.tokens.ci"},
		{name: "a user without a static token", claim: "preferred_username", claims: jwt.MapClaims{"preferred_username": "olga"},
			want: access.Principal{User: "olga", Kind: access.KindPerson}},
		{name: "newline", claim: "preferred_username", claims: jwt.MapClaims{"preferred_username": "mallory\nApproved-by: olga"},
			reason: "control character"},
		{name: "carriage return", claim: "preferred_username", claims: jwt.MapClaims{"preferred_username": "mal\rlory"},
			reason: "control character"},
		{name: "bidi override", claim: "preferred_username", claims: jwt.MapClaims{"preferred_username": "\u202eecila"},
			reason: "control character"},
		{name: "line separator", claim: "preferred_username", claims: jwt.MapClaims{"preferred_username": "a\u2028b"},
			reason: "control character"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := servers[tt.claim]
			tok := iss.token(t, fmt.Sprint("u-", i), tt.claims)
			resp, body := send(t, http.MethodPost, srv.url, tok, initBody)
			if tt.want.User == "" {
				if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
					t.Fatalf("status %d %q, want 401 invalid_token: %.200s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
				}
				if logs := srv.logs.String(); !strings.Contains(logs, tt.reason) {
					t.Errorf("the log does not say %q:\n%s", tt.reason, logs)
				}
				return
			}
			cs, err := connectAs(t, srv.url, tok)
			if err != nil {
				t.Fatal(err)
			}
			if got := whoami(t, cs); !equalPrincipal(got, tt.want) {
				t.Errorf("principal %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestAuth_JunkTokens sends anonymous tokens that no key of the issuer
// verifies: a made-up key ID, none, the issuer's key ID with a junk
// signature. Each is refused, none makes selmem fetch the issuer's keys
// again (which go-oidc's RemoteKeySet did for every one), and the log
// holds a bounded number of WARN lines for them.
func TestAuth_JunkTokens(t *testing.T) {
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	var fetches atomic.Int64
	if err := m.AddMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == mockoidc.JWKSEndpoint {
				fetches.Add(1)
			}
			next.ServeHTTP(w, r)
		})
	}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	iss := &issuer{m: m}
	srv := listenAuth(t, func(c *server.Config) { c.HTTP.Auth = testAuth(iss) }, nil)
	if resp, body := send(t, http.MethodPost, srv.url, iss.token(t, "u", jwt.MapClaims{"preferred_username": "kim"}), initBody); resp.StatusCode != http.StatusOK {
		t.Fatalf("a valid token: %d %s", resp.StatusCode, body)
	}
	if got := fetches.Load(); got != 1 {
		t.Fatalf("%d fetches of the issuer's keys for the first token, want 1", got)
	}
	kid, err := m.Keypair.KeyID()
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	junk := func(header string) string {
		return b64([]byte(header)) + "." + b64([]byte(`{}`)) + "." + b64([]byte("sig"))
	}
	const each = 50
	tokens := map[string]string{
		"made-up kid":  junk(`{"alg":"RS256","kid":"made-up"}`),
		"no kid":       junk(`{"alg":"RS256"}`),
		"issuer's kid": junk(`{"alg":"RS256","kid":"` + kid + `"}`),
	}
	for name, tok := range tokens {
		for range each {
			if resp, body := send(t, http.MethodPost, srv.url, tok, initBody); resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("%s: %d %s, want 401", name, resp.StatusCode, body)
			}
		}
	}
	// The first token fetched the keys just now, within the refetch
	// interval: none of the junk may fetch them again.
	if got := fetches.Load() - 1; got > 0 {
		t.Errorf("%d junk tokens made selmem fetch the issuer's keys %d times, want 0", len(tokens)*each, got)
	}
	if got, limit := strings.Count(srv.logs.String(), "level=WARN msg=\"refused an unauthenticated request"), 20; got > limit {
		t.Errorf("%d WARN lines for %d refused tokens, want at most %d", got, len(tokens)*each, limit)
	}
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

// eventStream is a GET event stream of a session, read until it ends.
type eventStream struct {
	session string
	ended   chan struct{} // closed when the server ends the stream
	endedAt time.Time     // set before ended is closed
}

// openEventStream initialises a session with token and opens its event
// stream, with the same token.
func openEventStream(t *testing.T, url, token string) *eventStream {
	t.Helper()
	resp, body := send(t, http.MethodPost, url, token, initBody)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	es := &eventStream{session: resp.Header.Get("Mcp-Session-Id"), ended: make(chan struct{})}
	hdr := []string{"Mcp-Session-Id", es.session, "MCP-Protocol-Version", legacyVersion}
	send(t, http.MethodPost, url, token, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr...)
	stream := getEventStream(t, url, token, es.session)
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("GET: %d", stream.StatusCode)
	}
	go func() {
		_, _ = io.Copy(io.Discard, stream.Body)
		es.endedAt = time.Now()
		close(es.ended)
	}()
	return es
}

// getEventStream opens the event stream of session with token; the test's
// end closes it.
func getEventStream(t *testing.T, url, token, session string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("MCP-Protocol-Version", legacyVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestAuth_StreamEndsWithItsToken: an event stream (GET) is authenticated
// when it opens; it ends when the OIDC token it was opened with stops
// being accepted (expiry plus clock skew), so that its client comes back
// with a fresh token. One opened with a static token, which does not
// expire, stays open.
func TestAuth_StreamEndsWithItsToken(t *testing.T) {
	iss := startIssuer(t)
	srv := listenAuth(t, func(c *server.Config) {
		c.HTTP.Auth = testAuth(iss)
		c.HTTP.Auth.OIDC.ClockSkew = time.Second
	}, nil)
	exp := time.Unix(time.Now().Add(3*time.Second).Unix(), 0) // a JWT's exp is in seconds
	kim := openEventStream(t, srv.url, iss.token(t, "u-k", jwt.MapClaims{"preferred_username": "kim", "exp": exp.Unix()}))
	alice := openEventStream(t, srv.url, tokAlice)
	select {
	case <-kim.ended:
		if until := exp.Add(time.Second); kim.endedAt.Before(until.Add(-100 * time.Millisecond)) {
			t.Errorf("the stream ended at %v, before its token expired (%v with the clock skew)", kim.endedAt, until)
		}
	case <-time.After(time.Until(exp) + 10*time.Second):
		t.Fatal("the stream is still open 10s after its token expired")
	}
	select {
	case <-alice.ended:
		t.Error("the stream opened with a static token ended")
	default:
	}
	fresh := iss.token(t, "u-k", jwt.MapClaims{"preferred_username": "kim"})
	if resp := getEventStream(t, srv.url, fresh, kim.session); resp.StatusCode != http.StatusOK {
		t.Errorf("GET with a fresh token on the same session: %d", resp.StatusCode)
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

package server

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
)

func TestIsLoopbackAddr(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:8080", true},
		{"127.1.2.3:0", true},
		{"[::1]:8080", true},
		{"localhost:8080", true},
		{"LOCALHOST:1", true},
		{"0.0.0.0:8080", false},
		{":8080", false},
		{"[::]:8080", false},
		{"10.0.0.5:8080", false},
		{"selmem.internal:8080", false},
		{"localhost.example.com:80", false},
		{"127.0.0.1", false}, // no port: not an address Listen accepts
	}
	for _, tt := range tests {
		if got := isLoopbackAddr(tt.addr); got != tt.want {
			t.Errorf("isLoopbackAddr(%q) = %v, want %v", tt.addr, got, tt.want)
		}
	}
}

func TestClaims(t *testing.T) {
	claims := map[string]any{
		"sub":          "u1",
		"realm_access": map[string]any{"roles": []any{"a", "b", 3}},
		"group":        "solo",
	}
	if got := claim(claims, "realm_access.roles"); len(claimStrings(got)) != 2 {
		t.Errorf("nested claim: %v", got)
	}
	if got := claimStrings(claim(claims, "group")); len(got) != 1 || got[0] != "solo" {
		t.Errorf("string claim: %v", got)
	}
	if got := claim(claims, "sub.x"); got != nil {
		t.Errorf("path through a string: %v", got)
	}
	if got := claimStrings(claim(claims, "missing")); got != nil {
		t.Errorf("missing claim: %v", got)
	}
}

func TestCheckUserName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"alice", true},
		{"kim@example.com", true},
		{"Zoë O'Brien", true},
		{"李雷", true},
		{"", false},
		{".", false},
		{"..", false},
		{"../bob", false},
		{`a\b`, false},
		{" alice", false},
		{"alice\t", false},
		{"mallory\nApproved-by: olga", false},
		{"mallory\r", false},
		{"a\x00b", false},
		{"a\x1bb", false},
		{"a\x7fb", false},
		{"a\u0085b", false}, // NEL
		{"a\u2028b", false}, // line separator
		{"\u202eecila", false},
		{"al\u200bice", false}, // zero-width space
		{"a\xffb", false},      // not UTF-8
	}
	for _, tt := range tests {
		if err := checkUserName(tt.name); (err == nil) != tt.ok {
			t.Errorf("checkUserName(%q) = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

// jwksServer serves a key set the test changes, and counts its fetches.
type jwksServer struct {
	*httptest.Server
	set     atomic.Pointer[[]byte]
	fetches atomic.Int64
}

func newJWKSServer(t *testing.T) *jwksServer {
	t.Helper()
	s := &jwksServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		s.fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(*s.set.Load())
	}))
	t.Cleanup(s.Close)
	return s
}

// publish makes keys the key set.
func (s *jwksServer) publish(t *testing.T, keys ...*mockoidc.Keypair) {
	t.Helper()
	var set jose.JSONWebKeySet
	for _, k := range keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PrivateKey.PublicKey, KeyID: kid(t, k), Algorithm: "RS256", Use: "sig"})
	}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	s.set.Store(&b)
}

func kid(t *testing.T, k *mockoidc.Keypair) string {
	t.Helper()
	id, err := k.KeyID()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// signWith signs a token with k's key and the key ID kid ("": none).
func signWith(t *testing.T, k *mockoidc.Keypair, kid string) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"sub": "alice"})
	if kid == "" {
		delete(tok.Header, "kid")
	} else {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(k.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestIssuerKeys: the issuer's key set is fetched again only for a token
// whose key it does not hold, at most once per refetch interval, never for
// a held key whose signature is wrong, and when it is older than its
// maximum age; a key the issuer rotates in is accepted once the interval
// has passed, and one it withdraws is refused once the set has aged.
func TestIssuerKeys(t *testing.T) {
	var a, b, c *mockoidc.Keypair
	for _, k := range []**mockoidc.Keypair{&a, &b, &c} {
		var err error
		if *k, err = mockoidc.RandomKeypair(2048); err != nil {
			t.Fatal(err)
		}
	}
	srv := newJWKSServer(t)
	srv.publish(t, a)
	now := time.Unix(1e9, 0)
	k := &issuerKeys{url: srv.URL, client: srv.Client(), timeout: 5 * time.Second, algs: []jose.SignatureAlgorithm{jose.RS256},
		refetch: 30 * time.Second, maxAge: 5 * time.Minute, now: func() time.Time { return now }}
	const interval = 31 * time.Second
	steps := []struct {
		name    string
		advance time.Duration
		publish []*mockoidc.Keypair // the issuer's new key set, if any
		token   string
		repeat  int // times the token is sent (0: once)
		ok      bool
		fetches int64 // in all, after the step
	}{
		{name: "first use", token: signWith(t, a, kid(t, a)), ok: true, fetches: 1},
		{name: "unknown kids", token: signWith(t, b, "made-up"), repeat: 100, fetches: 1},
		{name: "no kid, no key verifies", token: signWith(t, b, ""), repeat: 100, fetches: 1},
		{name: "held kid, wrong key", token: signWith(t, b, kid(t, a)), repeat: 100, fetches: 1},
		{name: "held kid, wrong key, after the interval", advance: interval, token: signWith(t, b, kid(t, a)), fetches: 1},
		{name: "rotated key", publish: []*mockoidc.Keypair{a, b}, token: signWith(t, b, kid(t, b)), ok: true, fetches: 2},
		{name: "held key after the rotation", token: signWith(t, a, kid(t, a)), ok: true, fetches: 2},
		{name: "rotated key within the interval", publish: []*mockoidc.Keypair{c}, token: signWith(t, c, kid(t, c)), fetches: 2},
		{name: "rotated key after the interval", advance: interval, token: signWith(t, c, kid(t, c)), ok: true, fetches: 3},
		{name: "no kid, a held key", token: signWith(t, c, ""), ok: true, fetches: 3},
		{name: "withdrawn key, once the set has aged", advance: 5 * time.Minute, publish: []*mockoidc.Keypair{b},
			token: signWith(t, c, kid(t, c)), fetches: 4},
	}
	for _, st := range steps {
		now = now.Add(st.advance)
		if st.publish != nil {
			srv.publish(t, st.publish...)
		}
		for i := range max(st.repeat, 1) {
			payload, err := k.VerifySignature(t.Context(), st.token)
			if (err == nil) != st.ok {
				t.Fatalf("%s (%d): %q %v, want ok %v", st.name, i, payload, err, st.ok)
			}
		}
		if got, want := srv.fetches.Load(), st.fetches; got != want {
			t.Errorf("%s: %d fetches of the key set in all, want %d", st.name, got, want)
		}
	}
}

// TestRefusalLog: the first refusalLogBurst refusals a minute are logged at
// WARN, the rest at DEBUG, and the next minute's first line counts those.
func TestRefusalLog(t *testing.T) {
	var l refusalLog
	now := time.Unix(1e9, 0)
	warn := 0
	for i := range 100 {
		lvl, demoted, last := l.level(now)
		if lvl == slog.LevelWarn {
			warn++
		}
		if demoted != 0 || last != (i == refusalLogBurst-1) {
			t.Fatalf("refusal %d: demoted %d, last %v", i, demoted, last)
		}
	}
	if warn != refusalLogBurst {
		t.Errorf("%d of 100 refusals at WARN, want %d", warn, refusalLogBurst)
	}
	if lvl, demoted, _ := l.level(now.Add(time.Minute)); lvl != slog.LevelWarn || demoted != 100-refusalLogBurst {
		t.Errorf("a minute later: %v, %d demoted, want WARN and %d", lvl, demoted, 100-refusalLogBurst)
	}
}

package server

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
)

// BenchmarkAuthenticate measures what authentication adds to each HTTP
// request: a static token among 100 configured, and an OIDC access token
// (RS256 signature, claims) once the issuer's keys are cached.
func BenchmarkAuthenticate(b *testing.B) {
	m, err := mockoidc.Run()
	if err != nil {
		b.Fatal(err)
	}
	defer m.Shutdown()
	cfg := defaultAuthConfig()
	for i := range 100 {
		cfg.Tokens[fmt.Sprint("t", i)] = StaticToken{SHA256: HashToken(fmt.Sprint("smm_", i)), User: fmt.Sprint("u", i)}
	}
	cfg.OIDC.Issuer, cfg.OIDC.Audience = m.Issuer(), "selmem"
	a := newAuthenticator(cfg, "")
	jwtTok, err := m.Keypair.SignJWT(jwt.MapClaims{"iss": m.Issuer(), "aud": "selmem", "sub": "alice", "exp": time.Now().Add(time.Hour).Unix()})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name, token string
		uncached    bool
	}{{"static", "smm_99", false}, {"oidc", jwtTok, false}, {"oidc-first-use", jwtTok, true}} {
		b.Run(tc.name, func(b *testing.B) {
			r, _ := http.NewRequest(http.MethodPost, "/mcp", nil)
			r.Header.Set("Authorization", "Bearer "+tc.token)
			if _, _, f := a.authenticate(r); f != nil {
				b.Fatal(f.reason)
			}
			for b.Loop() {
				if tc.uncached {
					clear(a.oidc.verified)
				}
				if _, _, f := a.authenticate(r); f != nil {
					b.Fatal(f.reason)
				}
			}
		})
	}
}

// TestOIDCVerifiedCache: a verified token is remembered while it stands,
// and no longer once it has expired.
func TestOIDCVerifiedCache(t *testing.T) {
	m, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown()
	cfg := defaultAuthConfig().OIDC
	cfg.Issuer, cfg.Audience, cfg.ClockSkew = m.Issuer(), "selmem", 0
	o := newOIDCVerifier(cfg)
	now := time.Now()
	o.now = func() time.Time { return now }
	tok, err := m.Keypair.SignJWT(jwt.MapClaims{"iss": m.Issuer(), "aud": "selmem", "sub": "alice", "exp": now.Add(time.Minute).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if p, _, f := o.verify(t.Context(), tok); f != nil || p.User != "alice" {
			t.Fatalf("verify %d: %+v %+v", i, p, f)
		}
	}
	if len(o.verified) != 1 {
		t.Errorf("%d cached tokens, want 1", len(o.verified))
	}
	now = now.Add(2 * time.Minute)
	if _, _, f := o.verify(t.Context(), tok); f == nil || f.reason != "token expired" {
		t.Errorf("expired cached token: %+v, want refused as expired", f)
	}
}

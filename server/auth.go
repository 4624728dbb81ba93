package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/selmem/selmem/memstore/access"
)

// Log keys of authentication.
const (
	logKeyUser   = "user"
	logKeyReason = "reason"
	logKeyIssuer = "issuer"
)

// HashToken returns what http.auth.tokens.<name>.sha256 holds for token:
// the lowercase hex SHA-256 of its bytes.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// authFailure is why a request carries no valid principal.
type authFailure struct {
	status int    // 401, or 503 when the issuer cannot be reached
	given  bool   // a bearer token was presented
	reason string // for the client (error_description) and the log
}

// authenticator turns a request's bearer token into a principal: a static
// token by its hash, else an OIDC access token by the issuer's keys.
// Without authentication configured every request acts as the local owner.
type authenticator struct {
	enabled bool
	local   access.Principal
	policy  access.Policy
	static  []staticPrincipal
	oidc    *oidcVerifier // nil without an issuer
}

// staticPrincipal is one configured token.
type staticPrincipal struct {
	hash [sha256.Size]byte
	p    access.Principal
}

func newAuthenticator(cfg AuthConfig, localUser string) *authenticator {
	if localUser == "" {
		localUser = "selmem"
	}
	a := &authenticator{enabled: cfg.Enabled(), local: access.Local(localUser), policy: cfg.Policy()}
	for _, t := range cfg.Tokens {
		var sp staticPrincipal
		if b, err := hex.DecodeString(t.SHA256); err != nil || len(b) != len(sp.hash) {
			continue // Validate refuses it
		} else {
			copy(sp.hash[:], b)
		}
		kind := access.KindPerson
		if t.Kind == TokenKindService {
			kind = access.KindService
		}
		sp.p = a.admin(access.Principal{User: t.User, Groups: slices.Clone(t.Groups), Kind: kind})
		a.static = append(a.static, sp)
	}
	if cfg.OIDC.Issuer != "" {
		a.oidc = newOIDCVerifier(cfg.OIDC)
	}
	return a
}

// admin marks p as an org admin when the policy names it.
func (a *authenticator) admin(p access.Principal) access.Principal {
	p.Admin = a.policy.IsAdmin(p)
	return p
}

// authenticate returns the principal of r, or why there is none.
func (a *authenticator) authenticate(r *http.Request) (access.Principal, *authFailure) {
	if !a.enabled {
		return a.local, nil
	}
	token, ok := bearerToken(r.Header)
	if !ok {
		return access.Principal{}, &authFailure{status: http.StatusUnauthorized, reason: "no bearer token"}
	}
	if p, ok := a.staticToken(token); ok {
		return p, nil
	}
	if a.oidc != nil && strings.Count(token, ".") == 2 {
		p, f := a.oidc.verify(r.Context(), token)
		if f != nil {
			return access.Principal{}, f
		}
		return a.admin(p), nil
	}
	return access.Principal{}, &authFailure{status: http.StatusUnauthorized, given: true, reason: "unknown token"}
}

// staticToken looks token up among the configured hashes, comparing every
// one in constant time.
func (a *authenticator) staticToken(token string) (access.Principal, bool) {
	sum := sha256.Sum256([]byte(token))
	found := -1
	for i := range a.static {
		if subtle.ConstantTimeCompare(sum[:], a.static[i].hash[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return access.Principal{}, false
	}
	return a.static[found].p, true
}

// bearerToken returns the token of an "Authorization: Bearer" header.
func bearerToken(h http.Header) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}

// oidcVerifier checks OIDC access tokens. The issuer is discovered on first
// use (and again after a failure, at most every discoveryRetry), so that
// selmem starts while the issuer is unreachable.
type oidcVerifier struct {
	cfg    OIDCConfig
	client *http.Client
	now    func() time.Time

	mu       sync.Mutex
	v        *oidc.IDTokenVerifier
	lastErr  error
	failedAt time.Time

	// verified remembers tokens already checked, by hash, so that the
	// requests of a session do not verify a signature each.
	cacheMu  sync.Mutex
	verified map[[sha256.Size]byte]verifiedToken
}

// verifiedToken is a checked token's principal and how long it stands.
type verifiedToken struct {
	p     access.Principal
	until time.Time
}

// Bounds of the verified-token cache: an entry stands until its token
// expires (plus the clock skew) and at most verifiedTTL, so that a key the
// issuer withdraws stops being trusted soon; at verifiedMax entries the
// cache starts over.
const (
	verifiedTTL = 5 * time.Minute
	verifiedMax = 10000
)

// discoveryRetry is how long a failed discovery is remembered.
const discoveryRetry = 5 * time.Second

func newOIDCVerifier(cfg OIDCConfig) *oidcVerifier {
	return &oidcVerifier{cfg: cfg, client: &http.Client{Timeout: cfg.Timeout}, now: time.Now,
		verified: map[[sha256.Size]byte]verifiedToken{}}
}

// verifier returns the token verifier, discovering the issuer if needed.
func (o *oidcVerifier) verifier(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.v != nil {
		return o.v, nil
	}
	if o.lastErr != nil && o.now().Sub(o.failedAt) < discoveryRetry {
		return nil, o.lastErr
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.cfg.Timeout)
	defer cancel()
	prov, err := oidc.NewProvider(oidc.ClientContext(dctx, o.client), o.cfg.Issuer)
	if err != nil {
		o.lastErr, o.failedAt = fmt.Errorf("discover OIDC issuer %s: %w", o.cfg.Issuer, err), o.now()
		return nil, o.lastErr
	}
	skew := o.cfg.ClockSkew
	o.v = prov.VerifierContext(oidc.ClientContext(context.Background(), o.client), &oidc.Config{
		ClientID: o.cfg.Audience,
		// A token is accepted until ClockSkew after its expiry.
		Now: func() time.Time { return o.now().Add(-skew) },
	})
	o.lastErr = nil
	return o.v, nil
}

// verify checks token's signature, issuer, audience and expiry and returns
// its principal, named by the configured claims.
func (o *oidcVerifier) verify(ctx context.Context, token string) (access.Principal, *authFailure) {
	key := sha256.Sum256([]byte(token))
	now := o.now()
	o.cacheMu.Lock()
	vt, ok := o.verified[key]
	o.cacheMu.Unlock()
	if ok && now.Before(vt.until) {
		return vt.p, nil
	}
	p, expiry, f := o.verifyToken(ctx, token)
	if f == nil {
		o.cacheMu.Lock()
		if len(o.verified) >= verifiedMax {
			clear(o.verified)
		}
		until := expiry.Add(o.cfg.ClockSkew)
		if limit := now.Add(verifiedTTL); limit.Before(until) {
			until = limit
		}
		o.verified[key] = verifiedToken{p: p, until: until}
		o.cacheMu.Unlock()
	}
	return p, f
}

// verifyToken checks token against the issuer's keys and returns its
// principal and expiry.
func (o *oidcVerifier) verifyToken(ctx context.Context, token string) (access.Principal, time.Time, *authFailure) {
	fail := func(f *authFailure) (access.Principal, time.Time, *authFailure) {
		return access.Principal{}, time.Time{}, f
	}
	v, err := o.verifier(ctx)
	if err != nil {
		return fail(&authFailure{status: http.StatusServiceUnavailable, given: true, reason: err.Error()})
	}
	vctx, cancel := context.WithTimeout(ctx, o.cfg.Timeout)
	defer cancel()
	tok, err := v.Verify(vctx, token)
	if err != nil {
		var expired *oidc.TokenExpiredError
		if errors.As(err, &expired) {
			return fail(&authFailure{status: http.StatusUnauthorized, given: true, reason: "token expired"})
		}
		return fail(&authFailure{status: http.StatusUnauthorized, given: true, reason: "invalid token: " + err.Error()})
	}
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return fail(&authFailure{status: http.StatusUnauthorized, given: true, reason: "invalid token claims"})
	}
	user, _ := claim(claims, o.cfg.UserClaim).(string)
	if err := checkUserName(user); err != nil {
		return fail(&authFailure{status: http.StatusUnauthorized, given: true,
			reason: fmt.Sprintf("claim %s (http.auth.oidc.user_claim) %v", o.cfg.UserClaim, err)})
	}
	groups := claimStrings(claim(claims, o.cfg.GroupsClaim))
	p := access.Principal{User: user, Groups: groups, Kind: access.KindPerson}
	p.Admin = o.cfg.AdminGroup != "" && slices.Contains(groups, o.cfg.AdminGroup)
	return p, tok.Expiry, nil
}

// claim returns the claim at a dotted path (realm_access.roles), or nil.
func claim(claims map[string]any, path string) any {
	var cur any = claims
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

// claimStrings reads a groups claim: a list of strings, or one string.
func claimStrings(v any) []string {
	switch v := v.(type) {
	case string:
		if v == "" {
			return nil
		}
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

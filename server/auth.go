package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/selmem/selmem/memstore/access"
)

// Log keys of authentication.
const (
	logKeyUser   = "user"
	logKeyReason = "reason"
	logKeyIssuer = "issuer"
	logKeyPath   = "path"
	// logKeyAtDebug counts the refused requests of the previous minute
	// logged at DEBUG (refusalLog).
	logKeyAtDebug = "refused_at_debug"
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

	refusals refusalLog // the level of the log lines of refused requests
}

// staticPrincipal is one configured token.
type staticPrincipal struct {
	name string // its key under http.auth.tokens
	hash [sha256.Size]byte
	p    access.Principal
}

func newAuthenticator(cfg AuthConfig, localUser string) *authenticator {
	if localUser == "" {
		localUser = "selmem"
	}
	a := &authenticator{enabled: cfg.Enabled(), local: access.Local(localUser), policy: cfg.Policy()}
	for name, t := range cfg.Tokens {
		sp := staticPrincipal{name: name}
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

// authenticate returns the principal of r and when its token stops being
// accepted (an OIDC token's expiry plus the clock skew; zero for a static
// token, which does not expire), or why there is none.
func (a *authenticator) authenticate(r *http.Request) (access.Principal, time.Time, *authFailure) {
	if !a.enabled {
		return a.local, time.Time{}, nil
	}
	token, ok := bearerToken(r.Header)
	if !ok {
		return access.Principal{}, time.Time{}, &authFailure{status: http.StatusUnauthorized, reason: "no bearer token"}
	}
	if p, ok := a.staticToken(token); ok {
		return p, time.Time{}, nil
	}
	if a.oidc != nil && strings.Count(token, ".") == 2 {
		p, expires, f := a.oidc.verify(r.Context(), token)
		if f != nil {
			return access.Principal{}, time.Time{}, f
		}
		if name, taken := a.staticUser(p.User); taken {
			// Static users and OIDC users share one namespace (users/<u>/,
			// ACL entries, http.auth.admins): an issuer's account must
			// not become the user a static token was configured for.
			return access.Principal{}, time.Time{}, &authFailure{status: http.StatusUnauthorized, given: true,
				reason: fmt.Sprintf("OIDC user %q (claim %s) is the user of static token http.auth.tokens.%s; "+
					"an OIDC user may not take a static token's user name", p.User, a.oidc.cfg.UserClaim, name)}
		}
		return a.admin(p), expires, nil
	}
	return access.Principal{}, time.Time{}, &authFailure{status: http.StatusUnauthorized, given: true, reason: "unknown token"}
}

// staticUser returns the name of a static token whose user is user,
// ignoring letter case (users/Alice/ and users/alice/ are one directory on
// some file systems).
func (a *authenticator) staticUser(user string) (tokenName string, ok bool) {
	for _, sp := range a.static {
		if strings.EqualFold(sp.p.User, user) {
			return sp.name, true
		}
	}
	return "", false
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
	// keysRefetch is how often at most the issuer's keys are fetched for
	// tokens signed by a key not among them: jwksRefetch, unless a test
	// shortens it before the first token.
	keysRefetch time.Duration

	mu       sync.Mutex
	v        *oidc.IDTokenVerifier
	keys     *issuerKeys
	lastErr  error
	failedAt time.Time

	// verified remembers tokens already checked, by hash, so that the
	// requests of a session do not verify a signature each.
	cacheMu  sync.Mutex
	verified map[[sha256.Size]byte]verifiedToken
}

// verifiedToken is a checked token's principal, when the token stops
// being accepted, and how long the entry stands.
type verifiedToken struct {
	p       access.Principal
	expires time.Time
	until   time.Time
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
		keysRefetch: jwksRefetch, verified: map[[sha256.Size]byte]verifiedToken{}}
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
	var meta struct {
		JWKSURL string   `json:"jwks_uri"`
		Algs    []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := prov.Claims(&meta); err != nil || meta.JWKSURL == "" {
		o.lastErr, o.failedAt = fmt.Errorf("discover OIDC issuer %s: no jwks_uri in its configuration", o.cfg.Issuer), o.now()
		return nil, o.lastErr
	}
	algs := signingAlgs(meta.Algs)
	o.keys = &issuerKeys{url: meta.JWKSURL, client: o.client, timeout: o.cfg.Timeout,
		refetch: o.keysRefetch, maxAge: jwksMaxAge, now: func() time.Time { return o.now() }}
	for _, a := range algs {
		o.keys.algs = append(o.keys.algs, jose.SignatureAlgorithm(a))
	}
	skew := o.cfg.ClockSkew
	o.v = oidc.NewVerifier(o.cfg.Issuer, o.keys, &oidc.Config{
		ClientID:             o.cfg.Audience,
		SupportedSigningAlgs: algs,
		// A token is accepted until ClockSkew after its expiry.
		Now: func() time.Time { return o.now().Add(-skew) },
	})
	o.lastErr = nil
	return o.v, nil
}

// signingAlgs returns the asymmetric signature algorithms among those an
// issuer publishes, RS256 (which every issuer supports) when none: never
// HMAC or none, whose key a client could know.
func signingAlgs(published []string) []string {
	known := []string{oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512,
		oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA}
	var algs []string
	for _, a := range published {
		if slices.Contains(known, a) && !slices.Contains(algs, a) {
			algs = append(algs, a)
		}
	}
	if len(algs) == 0 {
		algs = []string{oidc.RS256}
	}
	return algs
}

// verify checks token's signature, issuer, audience and expiry and returns
// its principal, named by the configured claims, and when the token stops
// being accepted: its expiry plus the clock skew.
func (o *oidcVerifier) verify(ctx context.Context, token string) (access.Principal, time.Time, *authFailure) {
	key := sha256.Sum256([]byte(token))
	now := o.now()
	o.cacheMu.Lock()
	vt, ok := o.verified[key]
	o.cacheMu.Unlock()
	if ok && now.Before(vt.until) {
		return vt.p, vt.expires, nil
	}
	p, expiry, f := o.verifyToken(ctx, token)
	if f != nil {
		return access.Principal{}, time.Time{}, f
	}
	expires := expiry.Add(o.cfg.ClockSkew)
	o.cacheMu.Lock()
	if len(o.verified) >= verifiedMax {
		clear(o.verified)
	}
	until := expires
	if limit := now.Add(verifiedTTL); limit.Before(until) {
		until = limit
	}
	o.verified[key] = verifiedToken{p: p, expires: expires, until: until}
	o.cacheMu.Unlock()
	return p, expires, nil
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
	if o.cfg.UserClaim == "email" && !emailVerified(claims["email_verified"]) {
		// Many issuers let anyone register an account with any address;
		// only one the issuer has verified names its owner.
		return fail(&authFailure{status: http.StatusUnauthorized, given: true,
			reason: "claim email (http.auth.oidc.user_claim) is not verified: the token's email_verified is not true"})
	}
	if err := checkUserName(user); err != nil {
		return fail(&authFailure{status: http.StatusUnauthorized, given: true,
			reason: fmt.Sprintf("claim %s (http.auth.oidc.user_claim) %v", o.cfg.UserClaim, err)})
	}
	groups := claimStrings(claim(claims, o.cfg.GroupsClaim))
	p := access.Principal{User: user, Groups: groups, Kind: access.KindPerson}
	p.Admin = o.cfg.AdminGroup != "" && slices.Contains(groups, o.cfg.AdminGroup)
	return p, tok.Expiry, nil
}

// emailVerified reads an email_verified claim: true, or the string "true"
// that some issuers send (as go-oidc's UserInfo accepts).
func emailVerified(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		return v == "true"
	}
	return false
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

// Bounds of fetching the issuer's key set: a token signed by a key not in
// the set fetches it again at most every jwksRefetch; a set older than
// jwksMaxAge is fetched again on its next use, so that a key the issuer
// withdraws stops being trusted; a set document may be jwksMaxBytes long.
const (
	jwksRefetch  = 30 * time.Second
	jwksMaxAge   = verifiedTTL
	jwksMaxBytes = 1 << 20
)

// issuerKeys is the issuer's key set (its jwks_uri) for oidc.NewVerifier.
// go-oidc's RemoteKeySet fetches the set again for every token whose
// signature no cached key verifies, so that every anonymous request with a
// made-up kid costs a request to the issuer. issuerKeys fetches it again
// only for a token whose kid is not in the set (or, without a kid, that no
// key verifies), at most once per refetch interval, and never for a token
// whose key it holds but whose signature is wrong. A key the issuer rotates
// in is fetched by the first token signed with it once the interval has
// passed since the last fetch.
type issuerKeys struct {
	url     string
	client  *http.Client
	timeout time.Duration
	algs    []jose.SignatureAlgorithm
	refetch time.Duration
	maxAge  time.Duration
	now     func() time.Time

	fetchMu sync.Mutex // held while fetching: one fetch at a time

	mu        sync.Mutex
	keys      []jose.JSONWebKey
	fetchedAt time.Time // of the last fetch, successful or not
	fetchErr  error     // of the last fetch
}

var _ oidc.KeySet = (*issuerKeys)(nil)

// VerifySignature returns the payload of token when a key of the issuer
// verifies its signature. The verifier has checked its algorithm already.
func (k *issuerKeys) VerifySignature(ctx context.Context, token string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(token, k.algs)
	if err != nil {
		return nil, fmt.Errorf("malformed token: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("a token needs exactly one signature")
	}
	kid := jws.Signatures[0].Header.KeyID
	k.mu.Lock()
	keys, stale := k.keys, k.now().Sub(k.fetchedAt) >= k.maxAge
	k.mu.Unlock()
	if stale && k.fetchMu.TryLock() {
		// A failed fetch keeps the keys held: the issuer may be down.
		keys, _ = k.refreshLocked(ctx)
		k.fetchMu.Unlock()
	}
	payload, known := verifyWithKeys(jws, keys, kid)
	switch {
	case payload != nil:
		return payload, nil
	case known:
		return nil, errors.New("the signature does not verify with the issuer's key " + kid)
	}
	k.fetchMu.Lock()
	keys, err = k.refreshLocked(ctx)
	k.fetchMu.Unlock()
	if payload, _ := verifyWithKeys(jws, keys, kid); payload != nil {
		return payload, nil
	}
	if err != nil {
		return nil, err
	}
	if kid != "" {
		return nil, fmt.Errorf("key %q is not among the issuer's keys", kid)
	}
	return nil, errors.New("no key of the issuer verifies the signature")
}

// verifyWithKeys returns the payload of jws when one of keys with its kid
// (any key when kid is "") verifies it, and whether keys hold kid.
func verifyWithKeys(jws *jose.JSONWebSignature, keys []jose.JSONWebKey, kid string) (payload []byte, known bool) {
	for i := range keys {
		if kid != "" && keys[i].KeyID != kid {
			continue
		}
		known = kid != ""
		if p, err := jws.Verify(&keys[i]); err == nil {
			return p, true
		}
	}
	return nil, known
}

// refreshLocked fetches the key set unless it was fetched, or tried,
// within the refetch interval, and returns the keys held then and the
// error of the last fetch. The caller holds fetchMu, so that requests that
// wait for a fetch in progress use its keys instead of fetching again.
func (k *issuerKeys) refreshLocked(ctx context.Context) ([]jose.JSONWebKey, error) {
	k.mu.Lock()
	if !k.fetchedAt.IsZero() && k.now().Sub(k.fetchedAt) < k.refetch {
		defer k.mu.Unlock()
		return k.keys, k.fetchErr
	}
	k.mu.Unlock()
	keys, err := k.fetch(ctx)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.fetchedAt, k.fetchErr = k.now(), err
	if err == nil {
		k.keys = keys
	}
	return k.keys, err
}

// fetch reads the key set. Keys of a type or curve go-jose does not know,
// private, symmetric and encryption keys are skipped, not the whole set
// (RFC 7517 section 5). A client hanging up does not cut the fetch short:
// the next request would only have to wait for the interval.
func (k *issuerKeys) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch the issuer's keys: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch the issuer's keys: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, jwksMaxBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("fetch the issuer's keys from %s: %w", k.url, err)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("fetch the issuer's keys from %s: %s", k.url, resp.Status)
	case len(body) > jwksMaxBytes:
		return nil, fmt.Errorf("fetch the issuer's keys from %s: larger than %d bytes", k.url, jwksMaxBytes)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("the issuer's keys from %s: %w", k.url, err)
	}
	var keys []jose.JSONWebKey
	for _, raw := range set.Keys {
		var key jose.JSONWebKey
		if json.Unmarshal(raw, &key) != nil || !key.IsPublic() || key.Use == "enc" {
			continue
		}
		keys = append(keys, key)
	}
	return keys, nil
}

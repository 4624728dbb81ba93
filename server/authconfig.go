package server

import (
	"encoding/hex"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/selmem/selmem/memstore/access"
)

// AuthConfig configures who may use selmem over HTTP: static bearer tokens,
// OIDC access tokens, or both, and the org admins.
type AuthConfig struct {
	// Tokens are the static bearer tokens, by a name of the admin's
	// choosing (for logs and rotation), each stored as the SHA-256 of the
	// token (`selmem token create` prints one); env
	// SELMEM_HTTP_AUTH_TOKENS, JSON.
	Tokens map[string]StaticToken `mapstructure:"tokens" yaml:"tokens"`
	// Admins are the org admins: user names or "group:<name>". They own
	// every workspace and may write org/. Env SELMEM_HTTP_AUTH_ADMINS,
	// comma-separated.
	Admins []string `mapstructure:"admins" yaml:"admins"`
	// OIDC validates access tokens (JWTs) against an issuer's keys.
	OIDC OIDCConfig `mapstructure:"oidc" yaml:"oidc"`
	// Resource is the URL clients use to reach the MCP endpoint, e.g.
	// https://selmem.example.com/mcp, published in the protected-resource
	// metadata (RFC 9728); "" derives it from each request's Host.
	Resource string `mapstructure:"resource" yaml:"resource"`
	// Scopes are the OAuth scopes published in the metadata, if any.
	Scopes []string `mapstructure:"scopes" yaml:"scopes"`
}

// StaticToken is one configured bearer token: its hash and who it acts as.
type StaticToken struct {
	// SHA256 is the lowercase hex SHA-256 of the token; the token itself
	// is never stored.
	SHA256 string   `mapstructure:"sha256" yaml:"sha256" json:"sha256"`
	User   string   `mapstructure:"user" yaml:"user" json:"user"`
	Groups []string `mapstructure:"groups" yaml:"groups,omitempty" json:"groups,omitempty"`
	// Kind is person (default) or service: a service token cannot vouch
	// for content as user_confirmed.
	Kind string `mapstructure:"kind" yaml:"kind,omitempty" json:"kind,omitempty"`
}

// OIDCConfig validates OIDC access tokens (JWTs): signature against the
// issuer's published keys, issuer, audience and expiry.
type OIDCConfig struct {
	// Issuer is the issuer URL (its /.well-known/openid-configuration is
	// read); "" turns OIDC off. It is set by the admin, so it is reached
	// without the profile's outbound policy.
	Issuer string `mapstructure:"issuer" yaml:"issuer"`
	// Audience must be among the token's aud claim (the client or API
	// identifier the issuer puts there for selmem).
	Audience string `mapstructure:"audience" yaml:"audience"`
	// ClockSkew is how long after its expiry a token is still accepted.
	ClockSkew time.Duration `mapstructure:"clock_skew" yaml:"clock_skew"`
	// UserClaim names the claim holding the user name: sub (default),
	// preferred_username or email; a dotted path reaches a nested claim.
	UserClaim string `mapstructure:"user_claim" yaml:"user_claim"`
	// GroupsClaim names the claim holding the groups (a list of strings
	// or one string); a missing claim is no groups.
	GroupsClaim string `mapstructure:"groups_claim" yaml:"groups_claim"`
	// AdminGroup, when set, makes members of that group org admins.
	AdminGroup string `mapstructure:"admin_group" yaml:"admin_group"`
	// Timeout bounds each request to the issuer (discovery and keys).
	Timeout time.Duration `mapstructure:"timeout" yaml:"timeout"`
}

// Token kinds, for StaticToken.Kind.
const (
	TokenKindPerson  = "person"
	TokenKindService = "service"
)

// defaultAuthConfig is the auth section used when nothing is set: no
// authentication, OIDC settings ready for an issuer.
func defaultAuthConfig() AuthConfig {
	return AuthConfig{
		Tokens: map[string]StaticToken{},
		Admins: []string{},
		Scopes: []string{},
		OIDC:   OIDCConfig{ClockSkew: 60 * time.Second, UserClaim: "sub", GroupsClaim: "groups", Timeout: 10 * time.Second},
	}
}

// Enabled reports whether any authentication is configured.
func (a AuthConfig) Enabled() bool { return len(a.Tokens) > 0 || a.OIDC.Issuer != "" }

// Policy is the org-wide access policy: the configured admins, plus the
// OIDC admin group.
func (a AuthConfig) Policy() access.Policy {
	admins := slices.Clone(a.Admins)
	if g := a.OIDC.AdminGroup; g != "" && a.OIDC.Issuer != "" {
		admins = append(admins, "group:"+g)
	}
	return access.Policy{Admins: admins}
}

// validate appends what is wrong with the auth section, by config key.
func (a AuthConfig) validate(bad func(key, format string, args ...any)) {
	seen := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(a.Tokens)) {
		t, key := a.Tokens[name], "http.auth.tokens."+name
		if strings.TrimSpace(name) == "" {
			bad("http.auth.tokens", "a token has an empty name")
		}
		if b, err := hex.DecodeString(t.SHA256); err != nil || len(b) != 32 || t.SHA256 != strings.ToLower(t.SHA256) {
			bad(key+".sha256", "must be the 64 lowercase hex digits of the token's SHA-256 (selmem token create prints it)")
		} else if other, dup := seen[t.SHA256]; dup {
			bad(key+".sha256", "is the same token as http.auth.tokens.%s", other)
		}
		seen[t.SHA256] = name
		if err := checkUserName(t.User); err != nil {
			bad(key+".user", "%v", err)
		}
		for _, g := range t.Groups {
			if strings.TrimSpace(g) == "" || strings.HasPrefix(g, "group:") {
				bad(key+".groups", "%q is not a group name (write it without group:)", g)
			}
		}
		switch t.Kind {
		case "", TokenKindPerson, TokenKindService:
		default:
			bad(key+".kind", "%q is not one of person, service", t.Kind)
		}
	}
	for _, e := range a.Admins {
		g, isGroup := strings.CutPrefix(e, "group:")
		if strings.TrimSpace(e) == "" || (isGroup && strings.TrimSpace(g) == "") {
			bad("http.auth.admins", "%q is neither a user nor group:<name>", e)
		}
	}
	if a.Resource != "" {
		if u, err := url.Parse(a.Resource); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" {
			bad("http.auth.resource", "%q is not an absolute http(s) URL without a fragment", a.Resource)
		}
	}
	o := a.OIDC
	if o.Issuer == "" {
		return
	}
	if u, err := url.Parse(o.Issuer); err != nil || u.Host == "" || !(u.Scheme == "https" || (u.Scheme == "http" && isLoopbackHost(u.Hostname()))) {
		bad("http.auth.oidc.issuer", "%q is not an https URL (http only on loopback)", o.Issuer)
	}
	if o.Audience == "" {
		bad("http.auth.oidc.audience", "must be set: the aud value the issuer puts in tokens meant for selmem")
	}
	if o.ClockSkew < 0 || o.ClockSkew > 10*time.Minute {
		bad("http.auth.oidc.clock_skew", "must be between 0 and 10m")
	}
	if o.UserClaim == "" {
		bad("http.auth.oidc.user_claim", "must be set (sub, preferred_username or email)")
	}
	if o.GroupsClaim == "" {
		bad("http.auth.oidc.groups_claim", "must be set (groups)")
	}
	if o.Timeout <= 0 {
		bad("http.auth.oidc.timeout", "must be > 0")
	}
}

// checkUserName accepts a user name that can name users/<u>/ and stand as
// a commit's author and in its trailers: not empty, no path separators,
// no surrounding space, valid UTF-8 without control or format characters
// (a newline would start a trailer of its own; a bidi override would make
// a name read as another).
func checkUserName(u string) error {
	switch {
	case u == "":
		return fmt.Errorf("must be set")
	case u == "." || u == ".." || strings.ContainsAny(u, "/\\") || strings.TrimSpace(u) != u:
		return fmt.Errorf("%q cannot name a directory users/<user>/", u)
	case !utf8.ValidString(u) || strings.IndexFunc(u, unprintable) >= 0:
		return fmt.Errorf("%q holds a control character or is not valid UTF-8", u)
	}
	return nil
}

// unprintable reports whether r is a control character (NUL, newline,
// DEL...), a format character (bidi overrides, zero-width spaces) or a
// line or paragraph separator.
func unprintable(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp)
}

// redacted hides the token hashes: they are not secrets, but nothing that
// reads the effective config needs them.
func (a AuthConfig) redacted() AuthConfig {
	if len(a.Tokens) == 0 {
		return a
	}
	toks := make(map[string]StaticToken, len(a.Tokens))
	for name, t := range a.Tokens {
		t.SHA256 = "REDACTED"
		toks[name] = t
	}
	a.Tokens = toks
	return a
}

// isLoopbackHost reports whether host is "localhost" or a loopback IP
// address (127.0.0.0/8, ::1).
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

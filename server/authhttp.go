package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/memstore/access"
)

// PathProtectedResource is where the OAuth protected-resource metadata
// (RFC 9728) is published when authentication is configured.
const PathProtectedResource = mcpserver.WellKnownProtectedResourcePath

// checkListenAddr refuses to serve a non-loopback address without
// authentication, unless InsecureNoAuth says to.
func checkListenAddr(cfg HTTPConfig) error {
	if cfg.Auth.Enabled() || cfg.InsecureNoAuth || isLoopbackAddr(cfg.Addr) {
		return nil
	}
	return fmt.Errorf("http.addr %q is not a loopback address and no authentication is configured: "+
		"anyone who reaches it could read and change every workspace. Configure http.auth.tokens "+
		"(selmem token create) or http.auth.oidc, or serve on 127.0.0.1, or pass --insecure-no-auth "+
		"(http.insecure_no_auth) to serve without authentication anyway", cfg.Addr)
}

// isLoopbackAddr reports whether a listen address binds only loopback:
// host localhost, 127.0.0.0/8 or ::1. An empty host binds every interface.
func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && isLoopbackHost(host)
}

// withAuth establishes the principal of every request but the health check
// and the well-known documents, which are public: a request without a
// valid token is answered 401 with a WWW-Authenticate header pointing to
// the protected-resource metadata.
func (h *HTTPServer) withAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == PathHealth || strings.HasPrefix(r.URL.Path, "/.well-known/") {
			next.ServeHTTP(w, r)
			return
		}
		p, expires, f := h.auth.authenticate(r)
		if f != nil {
			h.refuseAuth(w, r, f)
			return
		}
		ctx := access.WithPrincipal(r.Context(), p)
		if !expires.IsZero() {
			ctx = context.WithValue(ctx, tokenExpiryKey{}, expires)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

type tokenExpiryKey struct{}

// tokenExpiry returns when the token that authenticated the request of ctx
// stops being accepted; ok is false for a token that does not expire
// (static tokens, no authentication).
func tokenExpiry(ctx context.Context) (t time.Time, ok bool) {
	t, ok = ctx.Value(tokenExpiryKey{}).(time.Time)
	return t, ok
}

// refusalLogBurst is how many refused requests a minute are logged at
// WARN; the rest are logged at DEBUG, so that a flood of junk tokens does
// not flood the log.
const refusalLogBurst = 20

// refusalLog decides the level of the log line of a refused request.
type refusalLog struct {
	mu     sync.Mutex
	window time.Time // start of the current minute
	n      int       // refusals in it
}

// level returns the level of the next refusal's line; the first line of a
// window says how many of the previous one went to DEBUG (demoted), the
// last WARN line of a window that the rest will (last).
func (l *refusalLog) level(now time.Time) (lvl slog.Level, demoted int, last bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.window) >= time.Minute {
		demoted = max(l.n-refusalLogBurst, 0)
		l.window, l.n = now, 0
	}
	l.n++
	if l.n > refusalLogBurst {
		return slog.LevelDebug, 0, false
	}
	return slog.LevelWarn, demoted, l.n == refusalLogBurst
}

// refuseAuth answers a request without a valid principal.
func (h *HTTPServer) refuseAuth(w http.ResponseWriter, r *http.Request, f *authFailure) {
	if f.status == http.StatusServiceUnavailable {
		h.log.Error("cannot check an OIDC token", logKeyReason, f.reason)
		w.Header().Set("Retry-After", "30")
		http.Error(w, "Service Unavailable: the OIDC issuer cannot be reached to check the token", f.status)
		return
	}
	lvl, demoted, last := h.auth.refusals.level(time.Now())
	args := []any{logKeyReason, f.reason, logKeyPath, r.URL.Path}
	if demoted > 0 {
		args = append(args, logKeyAtDebug, demoted)
	}
	msg := "refused an unauthenticated request"
	if last {
		msg += fmt.Sprintf(" (%d this minute: more are logged at DEBUG)", refusalLogBurst)
	}
	h.log.Log(r.Context(), lvl, msg, args...)
	challenge := fmt.Sprintf("Bearer resource_metadata=%q", h.baseURL(r)+PathProtectedResource)
	if len(h.cfg.Auth.Scopes) > 0 {
		challenge += fmt.Sprintf(", scope=%q", strings.Join(h.cfg.Auth.Scopes, " "))
	}
	if f.given {
		desc := "the token is not valid here"
		if f.reason == "token expired" {
			desc = "the token expired"
		}
		challenge += fmt.Sprintf(`, error="invalid_token", error_description=%q`, desc)
	}
	w.Header().Set("WWW-Authenticate", challenge)
	http.Error(w, "Unauthorized: send Authorization: Bearer <token> (a selmem token or an access token from the issuer in "+PathProtectedResource+")", http.StatusUnauthorized)
}

// baseURL is scheme://host of the server as clients reach it: from
// http.auth.resource, else from the request.
func (h *HTTPServer) baseURL(r *http.Request) string {
	if u, err := url.Parse(h.cfg.Auth.Resource); err == nil && h.cfg.Auth.Resource != "" {
		return u.Scheme + "://" + u.Host
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// serveResourceMetadata publishes the protected-resource metadata (RFC
// 9728): the MCP endpoint as the resource, the OIDC issuer as its
// authorization server, bearer tokens in the header.
func (h *HTTPServer) serveResourceMetadata(w http.ResponseWriter, r *http.Request) {
	md := mcpserver.ProtectedResourceMetadataConfig{
		Resource:               h.cfg.Auth.Resource,
		BearerMethodsSupported: []string{"header"},
		ScopesSupported:        h.cfg.Auth.Scopes,
		ResourceName:           Name,
	}
	if md.Resource == "" {
		md.Resource = h.baseURL(r) + PathMCP
	}
	if iss := h.cfg.Auth.OIDC.Issuer; iss != "" {
		md.AuthorizationServers = []string{iss}
	}
	mcpserver.NewProtectedResourceMetadataHandler(md).ServeHTTP(w, r)
}

// principalContext is the transport's HTTPContextFunc: the context of every
// MCP request carries the principal withAuth established. Should a request
// reach the transport without one, it acts as nobody (no user, no groups,
// not a person), never as the local owner.
func principalContext(ctx context.Context, r *http.Request) context.Context {
	p, ok := access.FromContext(r.Context())
	if !ok {
		p = access.Principal{Kind: access.KindService}
	}
	return access.WithPrincipal(ctx, p)
}

// principalOf returns the principal withAuth put into r's context.
func principalOf(r *http.Request) access.Principal {
	p, _ := access.FromContext(r.Context())
	return p
}

// sessionOwner is how a session remembers the principal that initialised
// it: kind and user. Groups and admin standing may change between tokens
// of the same user; the user may keep the session.
func sessionOwner(p access.Principal) string { return string(p.Kind) + ":" + p.User }

// refuseForeignSession answers 404 and returns true when session id was
// initialised by another principal than r's. 404 rather than 403: it tells
// the caller nothing about whether the id exists, and it is what a client
// that switched tokens must hear to start a session of its own.
func (h *HTTPServer) refuseForeignSession(w http.ResponseWriter, r *http.Request, id string) bool {
	if id == "" || h.sessions.allows(id, sessionOwner(principalOf(r))) {
		return false
	}
	h.log.Warn("refused a request on another principal's session", logKeyUser, principalOf(r).String())
	http.Error(w, "Not Found: unknown or expired session; initialize a new one", http.StatusNotFound)
	return true
}

// bindingWriter binds the session an initialize creates to its principal
// as the response headers are sent, before the client can learn its id.
type bindingWriter struct {
	http.ResponseWriter
	bind  func(id string)
	bound bool
}

func (b *bindingWriter) commit() {
	if !b.bound {
		b.bound = true
		if id := b.Header().Get(mcpserver.HeaderKeySessionID); id != "" {
			b.bind(id)
		}
	}
}

func (b *bindingWriter) WriteHeader(code int) {
	b.commit()
	b.ResponseWriter.WriteHeader(code)
}

func (b *bindingWriter) Write(p []byte) (int, error) {
	b.commit()
	return b.ResponseWriter.Write(p)
}

// Flush sends buffered data.
func (b *bindingWriter) Flush() {
	b.commit()
	_ = http.NewResponseController(b.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (b *bindingWriter) Unwrap() http.ResponseWriter { return b.ResponseWriter }

// logAuth says at start how requests are authenticated; serving a
// non-loopback address without authentication is a loud warning.
func (h *HTTPServer) logAuth() {
	a := h.cfg.Auth
	switch {
	case a.Enabled():
		h.log.Info("authentication on", "static_tokens", len(a.Tokens), logKeyIssuer, a.OIDC.Issuer)
	case !isLoopbackAddr(h.cfg.Addr):
		h.log.Warn("INSECURE: serving without authentication on a non-loopback address (--insecure-no-auth): "+
			"anyone who reaches it acts as the local owner and can read, change and delete every workspace",
			logKeyAddr, h.Addr(), logKeyUser, h.auth.local.User)
	}
}

// discoverIssuer discovers the OIDC issuer in the background, so that a
// wrong or unreachable issuer shows in the log at start.
func (h *HTTPServer) discoverIssuer(ctx context.Context) {
	if h.auth.oidc == nil {
		return
	}
	go func() {
		if _, err := h.auth.oidc.verifier(ctx); err != nil {
			h.log.Error("OIDC issuer not reachable yet; tokens are checked once it is", logKeyErr, err)
		}
	}()
}

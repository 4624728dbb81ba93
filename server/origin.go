package server

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// originPattern is one entry of http.allowed_origins.
type originPattern struct {
	any      bool   // "*": every origin
	scheme   string // lower case
	host     string // lower case, IPv6 in brackets
	port     string // "" for none
	anyPort  bool   // ":*"
	original string
}

// parseOriginPattern parses "*", "scheme://host", "scheme://host:port" or
// "scheme://host:*".
func parseOriginPattern(s string) (originPattern, error) {
	p := originPattern{original: s}
	if s == "*" {
		p.any = true
		return p, nil
	}
	rest, anyPort := strings.CutSuffix(s, ":*")
	p.anyPort = anyPort
	u, err := url.Parse(rest)
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return p, fmt.Errorf("%q is not an origin like https://example.com, http://localhost:8080 or http://localhost:*", s)
	}
	if anyPort && u.Port() != "" {
		return p, fmt.Errorf("%q has two ports", s)
	}
	p.scheme = strings.ToLower(u.Scheme)
	p.host, p.port = splitOriginHost(u)
	return p, nil
}

// splitOriginHost returns u's host (IPv6 in brackets) and port, lower case.
func splitOriginHost(u *url.URL) (host, port string) {
	host = strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host, u.Port()
}

// match reports whether the parsed Origin header u matches p.
func (p originPattern) match(u *url.URL) bool {
	if p.any {
		return true
	}
	host, port := splitOriginHost(u)
	return strings.ToLower(u.Scheme) == p.scheme && host == p.host && (p.anyPort || port == p.port)
}

// originPolicy decides which Origin headers are accepted.
type originPolicy []originPattern

// newOriginPolicy parses patterns (already checked by Config.Validate).
func newOriginPolicy(patterns []string) (originPolicy, error) {
	var pol originPolicy
	for _, s := range patterns {
		p, err := parseOriginPattern(s)
		if err != nil {
			return nil, fmt.Errorf("http.allowed_origins: %w", err)
		}
		pol = append(pol, p)
	}
	return pol, nil
}

// allowed reports whether a request with this Origin header may proceed.
// No Origin means no browser page sent it (curl, an SDK client): allowed.
// "null" and anything unparsable are foreign.
func (pol originPolicy) allowed(origin string) bool {
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return false
	}
	for _, p := range pol {
		if p.match(u) {
			return true
		}
	}
	return false
}

// withLoopbackHost refuses, with 403, a request that arrives on a loopback
// connection but names a host that is not loopback: a page whose domain an
// attacker rebound to 127.0.0.1 after it loaded. The MCP endpoint has the
// same check in its transport; this one guards every path (artifacts and
// their data, metrics) before authentication. A request on any other
// address passes: a rebound page reaches only loopback servers.
func withLoopbackHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		if ok && local != nil && isLoopbackHost(hostOf(local.String())) && !isLoopbackHost(hostOf(r.Host)) {
			http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostOf returns the host of addr, a host or host:port.
func hostOf(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

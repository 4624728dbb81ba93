package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Limits of the HTTP client.
const (
	// MaxRedirects is how many redirects a request follows.
	MaxRedirects = 5
	// DialTimeout bounds one connection attempt.
	DialTimeout = 10 * time.Second
)

// HTTPOptions configure Policy.HTTPClient.
type HTTPOptions struct {
	// Credentials are the names of configured credentials to attach, each
	// only to the hosts it is bound to.
	Credentials []string
	// TLSClientConfig, when set, is the TLS configuration of every
	// connection (a client certificate for mTLS, a private CA). It is
	// cloned; the policy's address check applies as always.
	TLSClientConfig *tls.Config
}

// ConnectError is a connection to an allowed target that failed. It does
// not say how (refused, timed out, reset, TLS): that would let a caller
// probe ports of the hosts it may reach.
type ConnectError struct {
	Host string
	err  error
}

func (e *ConnectError) Error() string {
	return fmt.Sprintf("the connection to %s failed; check the URL and that the service is up", e.Host)
}

// Cause returns the network's error, for the operator's log. It is not
// returned by Unwrap, so that errors.Is cannot tell a timeout from a
// refusal either.
func (e *ConnectError) Cause() error { return e.err }

// NameError is a named credential or connection that cannot be used.
type NameError struct {
	Kind string // credential or connection
	Name string
	Msg  string
	Key  string // the setting to fix
}

func (e *NameError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s %q %s", e.Kind, e.Name, e.Msg)
	}
	return fmt.Sprintf("%s %q %s; ask the user to configure it under %s", e.Kind, e.Name, e.Msg, e.Key)
}

// notConfigured is the NameError for a name that configured lacks.
func notConfigured[V any](kind, name, key string, configured map[string]V) *NameError {
	msg := "is not configured (none are)"
	if len(configured) > 0 {
		msg = "is not configured (configured: " + strings.Join(slices.Sorted(maps.Keys(configured)), ", ") + ")"
	}
	return &NameError{Kind: kind, Name: name, Msg: msg, Key: key}
}

// boundCredential is a credential with its secret, ready to attach.
type boundCredential struct {
	header, value string
	hosts         []allowed // name or address entries with optional port
	allowHTTP     bool
}

// matches reports whether the credential goes with a request to u.
func (b boundCredential) matches(u *url.URL) bool {
	if u.Scheme != "https" && !(u.Scheme == "http" && b.allowHTTP) {
		return false
	}
	host := canonicalHost(u.Hostname())
	port := urlPort(u)
	for _, h := range b.hosts {
		if h.port != 0 && h.port != port {
			continue
		}
		if h.name != "" && h.name == host {
			return true
		}
		if h.name == "" {
			if a, err := netip.ParseAddr(host); err == nil && h.prefix.Contains(a.Unmap()) {
				return true
			}
		}
	}
	return false
}

// urlPort is u's port, or the scheme's default.
func urlPort(u *url.URL) int {
	if p, err := strconv.Atoi(u.Port()); err == nil {
		return p
	}
	if u.Scheme == "https" {
		return 443
	}
	return 80
}

// credential looks up a named credential and its secret.
func (p *Policy) credential(name string) (boundCredential, error) {
	key := p.cfg.key("credentials")
	c, ok := p.cfg.Credentials[name]
	if !ok {
		return boundCredential{}, notConfigured("credential", name, key, p.cfg.Credentials)
	}
	v, ok := p.cfg.lookupEnv(c.Env)
	if !ok || v == "" {
		e := &NameError{Kind: "credential", Name: name, Msg: "has no secret: its environment variable " + c.Env + " is not set", Key: key + "." + name + ".env"}
		if p.adhoc[name] {
			e.Key = ""
		}
		return boundCredential{}, e
	}
	b := boundCredential{header: c.Header, value: c.Prefix + v, allowHTTP: c.AllowHTTP}
	if b.header == "" {
		b.header = DefaultHeader
	}
	for _, h := range c.Hosts {
		host, port, _ := parseHostPort(h) // validated
		e := allowed{name: host, port: port}
		if a, err := netip.ParseAddr(host); err == nil {
			e = allowed{prefix: netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), port: port}
		}
		b.hosts = append(b.hosts, e)
	}
	return b, nil
}

// HTTPClient returns a client that enforces the policy on every request
// and redirect, and attaches o.Credentials to their hosts only. It uses no
// proxy. Time limits come from the request's context.
func (p *Policy) HTTPClient(o *HTTPOptions) (*http.Client, error) {
	var creds []boundCredential
	var tlsConfig *tls.Config
	if o != nil {
		if o.TLSClientConfig != nil {
			tlsConfig = o.TLSClientConfig.Clone()
		}
		for _, name := range o.Credentials {
			b, err := p.credential(name)
			if err != nil {
				return nil, err
			}
			creds = append(creds, b)
		}
	}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            p.DialContext,
		ForceAttemptHTTP2:      true,
		TLSClientConfig:        tlsConfig,
		TLSHandshakeTimeout:    DialTimeout,
		MaxResponseHeaderBytes: 1 << 20,
		MaxIdleConns:           4,
		IdleConnTimeout:        30 * time.Second,
	}
	return &http.Client{
		Transport: &credentialTransport{base: tr, creds: creds},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return fmt.Errorf("stopped after %d redirects", MaxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("refused: a redirect to a %s URL", req.URL.Scheme)
			}
			if _, err := p.Precheck(req.URL.Hostname(), urlPort(req.URL)); err != nil {
				var re *RefusedError
				if errors.As(err, &re) {
					r := *re
					r.Target = "the redirect to " + re.Target
					return &r
				}
				return err
			}
			return nil
		},
	}, nil
}

// credentialTransport sets or removes each credential's header on every
// request it sends, redirects included, by the request's own URL: a
// credential never follows a redirect to a host it is not bound to.
type credentialTransport struct {
	base  http.RoundTripper
	creds []boundCredential
}

func (t *credentialTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.creds) == 0 {
		return t.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	for _, c := range t.creds {
		r.Header.Del(c.header)
	}
	for _, c := range t.creds {
		if c.matches(r.URL) {
			r.Header.Set(c.header, c.value)
		}
	}
	return t.base.RoundTrip(r)
}

// DialContext dials network address addr ("host:port") after the policy's
// check: the name is resolved once and a checked address is dialled.
// Failures to connect to an allowed address are a *ConnectError.
func (p *Policy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("bad port in %q", addr)
	}
	addrs, err := p.Resolve(ctx, host, port)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: DialTimeout}
	var last error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, &ConnectError{Host: host, err: last}
}

// Explain turns an error of a request made with a policy client into a
// message that says what the policy refused, or only that the connection
// failed: never how the network answered a refused or allowed target.
// Context errors after the connection was made are returned as they are.
func Explain(err error) error {
	var (
		re *RefusedError
		ce *ConnectError
		ne *ResolveError
		cr *NameError
	)
	switch {
	case errors.As(err, &re):
		return re
	case errors.As(err, &cr):
		return cr
	case errors.As(err, &ne):
		return ne
	case errors.As(err, &ce):
		return ce
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return err
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if strings.HasPrefix(ue.Err.Error(), "stopped after") || strings.HasPrefix(ue.Err.Error(), "refused:") {
			return ue.Err
		}
		host := ue.URL
		if u, perr := url.Parse(ue.URL); perr == nil {
			host = u.Host
		}
		return &ConnectError{Host: host, err: ue.Err}
	}
	return err
}

package mcpsource

import (
	"errors"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/selmem/selmem/internal/egress"
)

// recordingTransport counts response bodies against a budget and keeps
// the first failure of a round trip and the first HTTP error status, which
// the session's own errors do not carry.
type recordingTransport struct {
	base http.RoundTripper
	b    *budget

	mu     sync.Mutex
	err    error // explained by egress: says nothing the policy hides
	status int
}

func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		t.record(explainWire(req, err))
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	// 404 and 405 answer a DELETE or GET a server need not support.
	if resp.StatusCode >= 400 && t.status == 0 && req.Method == http.MethodPost {
		t.status = resp.StatusCode
	}
	resp.Body = &countingReadCloser{r: resp.Body, b: t.b}
	return resp, nil
}

// record keeps err if it is the first failure.
func (t *recordingTransport) record(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		t.err = err
	}
}

// failure returns what went wrong on the wire, if anything did.
func (t *recordingTransport) failure() (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status, t.err
}

// httpTransport is the session's transport to s.URL: a policy client (the
// address check, s.Credential bound to its hosts, the TLS settings) whose
// responses are counted against b.
func (s Server) httpTransport(policy *egress.Policy, b *budget) (mcp.Transport, *recordingTransport, error) {
	tlsConfig, err := s.tlsConfig()
	if err != nil {
		return nil, nil, err
	}
	o := &egress.HTTPOptions{TLSClientConfig: tlsConfig}
	if s.Credential != "" {
		o.Credentials = []string{s.Credential}
	}
	client, err := policy.HTTPClient(o)
	if err != nil {
		return nil, nil, err
	}
	rec := &recordingTransport{base: client.Transport, b: b}
	client.Transport = rec
	check := client.CheckRedirect
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		err := check(req, via)
		if err != nil {
			rec.record(err) // the policy's own words: no URL in them
		}
		return err
	}
	return &mcp.StreamableClientTransport{
		Endpoint:             s.URL,
		HTTPClient:           client,
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
		MaxEventSize:         -1, // b bounds it
	}, rec, nil
}

// explainWire is a round trip's failure as the policy explains it, or, for
// a failure after the connection was made (a reset, a closed connection),
// only that the connection failed.
func explainWire(req *http.Request, err error) error {
	err = egress.Explain(err)
	var (
		re *egress.RefusedError
		ce *egress.ConnectError
		ne *egress.ResolveError
	)
	if errors.As(err, &re) || errors.As(err, &ce) || errors.As(err, &ne) {
		return err
	}
	return &egress.ConnectError{Host: req.URL.Host}
}

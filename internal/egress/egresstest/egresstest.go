// Package egresstest holds test helpers for the outbound policy: a
// loopback HTTP server that records what reaches it, so that a test can
// assert that a refused target received nothing and that a secret never
// arrived.
package egresstest

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Recorder is a loopback HTTP server that records the headers of every
// request it receives.
type Recorder struct {
	*httptest.Server
	mu      sync.Mutex
	headers []http.Header
}

// NewRecorder starts a Recorder, closed when tb ends. h answers each
// request; nil answers one JSON record, [{"a":1}].
func NewRecorder(tb testing.TB, h http.HandlerFunc) *Recorder {
	tb.Helper()
	r := &Recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.headers = append(r.headers, req.Header.Clone())
		r.mu.Unlock()
		if h != nil {
			h(w, req)
			return
		}
		fmt.Fprint(w, `[{"a":1}]`)
	}))
	tb.Cleanup(r.Close)
	return r
}

// Requests returns the headers of the requests received so far.
func (r *Recorder) Requests() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// Port is the port the server listens on.
func (r *Recorder) Port() string {
	_, p, _ := net.SplitHostPort(r.Listener.Addr().String())
	return p
}

// Addr is the server's host:port.
func (r *Recorder) Addr() string { return r.Listener.Addr().String() }

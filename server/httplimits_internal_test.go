package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/memstore/access"
)

// probeWriter records, as its response starts, how many streams the relay
// holds for one session: the request is then in flight, and any stream it
// added is still registered.
type probeWriter struct {
	*httptest.ResponseRecorder
	probe   func() int
	streams int // -1 until the response starts
}

func (p *probeWriter) look() {
	if p.streams < 0 {
		p.streams = p.probe()
	}
}

func (p *probeWriter) WriteHeader(code int) {
	p.look()
	p.ResponseRecorder.WriteHeader(code)
}

func (p *probeWriter) Write(b []byte) (int, error) {
	p.look()
	return p.ResponseRecorder.Write(b)
}

// TestServeMCP_SessionIDOfAnotherPrincipal sends every kind of request with
// the session ID of alice's session: none made as bob may be attached to
// her session's streams, where her notifications (resources/updated,
// list_changed) would be written onto his response. An initialize starts a
// session of its own whatever ID it carries; any other request is answered
// 404. alice's own requests, the control, are attached.
func TestServeMCP_SessionIDOfAnotherPrincipal(t *testing.T) {
	cfg := DefaultConfig().HTTP
	cfg.Addr = "127.0.0.1:0"
	cfg.Auth.Tokens = map[string]StaticToken{"alice": {SHA256: HashToken("a"), User: "alice"}}
	h, err := Listen(mcpserver.NewMCPServer("test", "1", mcpserver.WithResourceCapabilities(true, true)), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.ln.Close() })
	alice := access.Principal{User: "alice", Kind: access.KindPerson}
	bob := access.Principal{User: "bob", Kind: access.KindPerson}
	serve := func(p access.Principal, method, body string, header ...string) *probeWriter {
		t.Helper()
		r := httptest.NewRequestWithContext(access.WithPrincipal(context.Background(), p), method, PathMCP, strings.NewReader(body))
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		r.Header.Set("Accept", "application/json, text/event-stream")
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		w := &probeWriter{ResponseRecorder: httptest.NewRecorder(), streams: -1}
		sid := r.Header.Get(mcpserver.HeaderKeySessionID)
		w.probe = func() int {
			h.relay.mu.Lock()
			defer h.relay.mu.Unlock()
			return len(h.relay.streams[sid])
		}
		h.serveMCP(w, r)
		return w
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	w := serve(alice, http.MethodPost, initialize)
	sid := w.Header().Get(mcpserver.HeaderKeySessionID)
	if w.Code != http.StatusOK || sid == "" {
		t.Fatalf("alice's initialize: %d %q %s", w.Code, sid, w.Body)
	}
	tests := []struct {
		name    string
		as      access.Principal
		method  string
		body    string
		status  int
		streams int  // alice's session's streams while the request is in flight
		newID   bool // the answer opens another session
	}{
		{name: "initialize", as: bob, method: http.MethodPost, body: initialize, status: http.StatusOK, newID: true},
		{name: "request", as: bob, method: http.MethodPost, body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, status: http.StatusNotFound},
		{name: "notification", as: bob, method: http.MethodPost, body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, status: http.StatusNotFound},
		{name: "response", as: bob, method: http.MethodPost, body: `{"jsonrpc":"2.0","id":7,"result":{"ok":true}}`, status: http.StatusNotFound},
		{name: "event stream", as: bob, method: http.MethodGet, status: http.StatusNotFound},
		{name: "delete", as: bob, method: http.MethodDelete, status: http.StatusNotFound},
		{name: "the owner's initialize", as: alice, method: http.MethodPost, body: initialize, status: http.StatusOK, newID: true},
		{name: "the owner's request", as: alice, method: http.MethodPost, body: `{"jsonrpc":"2.0","id":3,"method":"ping"}`, status: http.StatusOK, streams: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := serve(tt.as, tt.method, tt.body, mcpserver.HeaderKeySessionID, sid, "MCP-Protocol-Version", "2025-11-25")
			if got, want := w.Code, tt.status; got != want {
				t.Errorf("status %d, want %d: %s", got, want, w.Body)
			}
			if got, want := w.streams, tt.streams; got != want {
				t.Errorf("alice's session had %d streams while the request was in flight, want %d", got, want)
			}
			id := w.Header().Get(mcpserver.HeaderKeySessionID)
			if tt.newID && (id == "" || id == sid) {
				t.Errorf("answered with session ID %q, want a new session (alice's is %q)", id, sid)
			}
			if id != "" && !h.sessions.allows(id, sessionOwner(tt.as)) {
				t.Errorf("session %q is not %s's", id, tt.as)
			}
		})
	}
	if !h.sessions.allows(sid, sessionOwner(alice)) || !h.sessions.touch(sid) {
		t.Error("alice's session is no longer hers")
	}
}

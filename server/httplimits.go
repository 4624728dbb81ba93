package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/resources"
)

// Log keys of the HTTP limits.
const (
	logKeyOrigin = "origin"
	logKeyLimit  = "limit"
	logKeyCount  = "count"
	logKeyOpen   = "open"
)

// serveMCP applies the limits of the HTTP config to a request on PathMCP
// and hands it to the streamable HTTP transport: a foreign Origin is
// refused (403), a session opened by another principal is answered as
// unknown (404), a POST body is read within the size cap (413) and the
// read timeout (408) before anything else looks at it, an initialize beyond
// the session cap is refused (503), and a session's use is recorded for
// idle eviction.
func (h *HTTPServer) serveMCP(w http.ResponseWriter, r *http.Request) {
	if origin := r.Header.Get("Origin"); !h.origins.allowed(origin) {
		h.log.Warn("refused a request from a foreign origin", logKeyOrigin, origin)
		http.Error(w, "Forbidden: origin not allowed (see http.allowed_origins)", http.StatusForbidden)
		return
	}
	switch r.Method {
	case http.MethodPost:
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			http.Error(w, "Unsupported Media Type: send JSON-RPC as application/json", http.StatusUnsupportedMediaType)
			return
		}
		h.servePost(w, r)
	case http.MethodGet:
		h.serveGet(w, r)
	case http.MethodDelete:
		h.serveDelete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// serveDelete ends a session of the principal's: 400 without a session ID,
// 404 for one that is not open (never issued, or ended already).
func (h *HTTPServer) serveDelete(w http.ResponseWriter, r *http.Request) {
	if mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
		h.mcp.ServeHTTP(w, r) // sessionless protocol: the transport answers
		return
	}
	id := r.Header.Get(mcpserver.HeaderKeySessionID)
	switch {
	case id == "":
		http.Error(w, "Bad Request: Mcp-Session-Id header required", http.StatusBadRequest)
	case h.refuseForeignSession(w, r, id):
	case !h.sessions.touch(id):
		http.Error(w, "Not Found: unknown or expired session", http.StatusNotFound)
	default:
		h.mcp.ServeHTTP(w, r)
	}
}

// servePost takes a request slot (503 beyond http.max_requests or
// http.max_requests_per_principal), reads the body within the limits,
// admits an initialize only below the session caps (and drops any session
// ID it carries: it starts a new session), refuses a request
// without a session ID (400; an unknown ID is answered 404 by the
// transport) and records the use of an existing session. The transport writes through a streamWriter, which
// withholds or corrects the response as the protocol hooks decided and
// carries the session's notifications (see relay).
func (h *HTTPServer) servePost(w http.ResponseWriter, r *http.Request) {
	owner := sessionOwner(principalOf(r))
	ok, limitKey := h.slots.acquire(owner)
	if !ok {
		h.log.Warn("refused a request: too many in flight", logKeyLimit, limitKey, logKeyUser, principalOf(r).String())
		writeBusyError(w, nil, "1",
			fmt.Sprintf("too many requests in flight (%s): wait for an answer before sending more, or retry shortly", limitKey))
		return
	}
	defer h.slots.release(owner)
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if reason := invalidMessage(body); reason != "" {
		writeRPCError(w, http.StatusBadRequest, nil, mcp.INVALID_REQUEST, reason)
		return
	}
	env := parseEnvelope(r.Header, body)
	id := r.Header.Get(mcpserver.HeaderKeySessionID)
	switch {
	case env.modern:
		id = "" // sessionless protocol: the header means nothing
	case env.method == string(mcp.MethodInitialize):
		// An initialize starts a new session; a client sends it without
		// a session ID (a 404 tells it to "start a new session by sending
		// a new InitializeRequest without a session ID attached"), and
		// mcp-go ignores one. The header is dropped rather than checked:
		// neither the relay nor the transport may take it for the session
		// this request belongs to, and another principal's ID is refused
		// no differently from an unknown one.
		id = ""
		r.Header.Del(mcpserver.HeaderKeySessionID)
		if ok, limitKey := h.sessions.reserve(owner); !ok {
			h.log.Warn("refused a new session: too many open", logKeyLimit, limitKey, logKeyUser, principalOf(r).String())
			writeBusyError(w, body, "60",
				fmt.Sprintf("too many open sessions (%s): close unused sessions or retry later", limitKey))
			return
		}
		defer h.sessions.release(owner)
		w = &bindingWriter{ResponseWriter: w, bind: func(id string) { h.sessions.bind(id, owner) }}
	case h.refuseForeignSession(w, r, id):
		return
	case id == "":
		// mcp-go v1.2.1 answers 404, which tells a client its session
		// expired; the header is missing, so the request is malformed.
		http.Error(w, "Bad Request: Mcp-Session-Id header required; send initialize first", http.StatusBadRequest)
		return
	default:
		h.sessions.touch(id) // an unknown id is answered 404 by the transport
	}
	sw := newStreamWriter(w, env.modern)
	sw.jsonOnly = !acceptsEventStream(r.Header.Get("Accept"))
	if id != "" {
		h.relay.add(id, sw, false)
		defer h.relay.remove(id, sw)
	}
	ctx := resources.WithNotifier(withGate(r.Context(), sw), h.relay)
	h.mcp.ServeHTTP(sw, r.WithContext(ctx))
	sw.finish()
}

// readBody reads a POST body of at most MaxBodyBytes within ReadTimeout.
// When it cannot, it answers (413, 408 or 400), the connection is closed
// and ok is false. A declared Content-Length over the cap is refused before
// a byte of the body is read; a chunked body is cut off at the cap.
func (h *HTTPServer) readBody(w http.ResponseWriter, r *http.Request) (body []byte, ok bool) {
	limit := h.cfg.MaxBodyBytes
	if r.ContentLength > limit {
		h.refuseBody(w, http.StatusRequestEntityTooLarge, limit)
		return nil, false
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(h.cfg.ReadTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err == nil {
		_ = rc.SetReadDeadline(time.Time{})
		return body, true
	}
	// The deadline stays: net/http must not wait for the rest of the body.
	var tooLarge *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &tooLarge):
		h.refuseBody(w, http.StatusRequestEntityTooLarge, limit)
	case errors.As(err, &netErr) && netErr.Timeout():
		h.refuseBody(w, http.StatusRequestTimeout, limit)
	default:
		h.refuseBody(w, http.StatusBadRequest, limit)
	}
	return nil, false
}

// refuseBody answers a request whose body was not read whole, and closes
// the connection so that the rest of it is never read.
func (h *HTTPServer) refuseBody(w http.ResponseWriter, status int, limit int64) {
	w.Header().Set("Connection", "close")
	var msg string
	switch status {
	case http.StatusRequestEntityTooLarge:
		msg = fmt.Sprintf("request body larger than %d bytes (http.max_body_bytes)", limit)
	case http.StatusRequestTimeout:
		msg = fmt.Sprintf("request body not received within %v (http.read_timeout)", h.cfg.ReadTimeout)
	default:
		msg = "request body could not be read"
	}
	h.log.Warn("refused a request body", "status", status, logKeyLimit, msg)
	http.Error(w, msg, status)
}

// serveGet opens an event stream only on an open session with fewer than
// maxStreams open (503 beyond), keeps the session from idling out while
// the stream is open, and ends the stream when the session ends or the
// bearer token it was opened with expires. A GET without a session would
// make the transport create one outside the session cap.
func (h *HTTPServer) serveGet(w http.ResponseWriter, r *http.Request) {
	if mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
		h.mcp.ServeHTTP(w, r) // sessionless protocol: the transport answers
		return
	}
	id := r.Header.Get(mcpserver.HeaderKeySessionID)
	if id == "" {
		http.Error(w, "Bad Request: Mcp-Session-Id header required; send initialize first", http.StatusBadRequest)
		return
	}
	if h.refuseForeignSession(w, r, id) {
		return
	}
	open, full, ended := h.sessions.streamOpened(id)
	switch {
	case !open:
		http.Error(w, "Not Found: unknown or expired session; initialize a new one", http.StatusNotFound)
		return
	case full:
		h.log.Warn("refused an event stream: too many open on its session", logKeyLimit, maxStreams)
		w.Header().Set("Retry-After", "60")
		http.Error(w, fmt.Sprintf("Service Unavailable: this session already has %d event streams open; close one first", maxStreams),
			http.StatusServiceUnavailable)
		return
	}
	defer h.sessions.streamClosed(id)
	// The stream ends with its session (DELETE, eviction), not only with
	// its client: else a client could hold streams past both caps. It
	// ends too when the token that opened it stops being accepted, as
	// every request is authenticated anew: the client reconnects with a
	// fresh token, or stops hearing from the session.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if expires, ok := tokenExpiry(r.Context()); ok {
		var cancelExpired context.CancelFunc
		ctx, cancelExpired = context.WithDeadline(ctx, expires)
		defer cancelExpired()
	}
	go func() {
		select {
		case <-ended:
			cancel()
		case <-ctx.Done():
		}
	}()
	sw := newStreamWriter(w, false)
	h.relay.add(id, sw, true)
	defer h.relay.remove(id, sw)
	h.mcp.ServeHTTP(sw, r.WithContext(ctx))
	sw.finish()
}

// envelope is what the HTTP layer reads of a POSTed message.
type envelope struct {
	method string
	modern bool // protocol revision 2026-07-28 or later: no sessions
}

// parseEnvelope reads the method of a POSTed message and whether it belongs
// to a sessionless protocol revision (2026-07-28 on, by header or _meta).
func parseEnvelope(header http.Header, body []byte) envelope {
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Meta *mcp.Meta `json:"_meta"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &msg)
	return envelope{
		method: msg.Method,
		modern: mcp.IsModernProtocol(header.Get(mcp.HeaderProtocolVersion)) ||
			mcp.IsModernProtocol(msg.Params.Meta.ProtocolVersion()),
	}
}

// writeBusyError answers a request a cap refused: 503, Retry-After
// seconds, and a JSON-RPC error with msg, carrying the id of the request in
// body (null when the body was not read).
func writeBusyError(w http.ResponseWriter, body []byte, retryAfter, msg string) {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(body, &req)
	w.Header().Set("Retry-After", retryAfter)
	writeRPCError(w, http.StatusServiceUnavailable, req.ID, mcp.INTERNAL_ERROR, msg)
}

// writeRPCError answers with status and a JSON-RPC error carrying id
// (null when empty).
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(rpcError(id, code, msg))
}

// rpcError is a JSON-RPC error response, one line: to id, or null when
// id is empty.
func rpcError(id json.RawMessage, code int, msg string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	type rpcErr struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	resp, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcErr          `json:"error"`
	}{"2.0", id, rpcErr{code, msg}})
	return append(resp, '\n')
}

// invalidMessage says why body, valid JSON, is no JSON-RPC message MCP
// admits, or returns "": a batch (MCP has none since 2025-06-18), not an
// object, another jsonrpc than "2.0", a method that is not a string, an id
// that is neither a string nor an integer (null included), or neither a
// method nor a response's result or error. Text that is not JSON is left
// to the transport, which answers -32700.
func invalidMessage(body []byte) string {
	body = bytes.TrimSpace(body)
	if !json.Valid(body) {
		return ""
	}
	if body[0] == '[' {
		return "batches are not supported: send one JSON-RPC message per request"
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return "a JSON-RPC message is a JSON object"
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		return `jsonrpc must be "2.0"`
	}
	if id, ok := m["id"]; ok && !validID(id) {
		return "id must be a string or an integer"
	}
	method, hasMethod := m["method"]
	_, hasID := m["id"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	switch {
	case hasMethod && (len(method) == 0 || method[0] != '"'):
		return "method must be a string"
	case !hasMethod && !(hasID && (hasResult || hasError)):
		return "a message needs a method, or an id with a result or an error"
	}
	return ""
}

// validID reports whether a JSON-RPC id is a string or an integer.
func validID(id json.RawMessage) bool {
	if len(id) > 0 && id[0] == '"' {
		return true
	}
	var n json.Number
	if json.Unmarshal(id, &n) != nil {
		return false
	}
	_, err := n.Int64()
	return err == nil
}

// withWriteDeadlines gives every write of a response WriteTimeout to
// complete, so that a client that stops reading is disconnected, while an
// event stream that writes now and then lives as long as its client.
func (h *HTTPServer) withWriteDeadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: h.cfg.WriteTimeout}
		next.ServeHTTP(dw, r)
		dw.arm() // bounds the server's final flush of the response
	})
}

// deadlineWriter sets the connection's write deadline before each write.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (d *deadlineWriter) arm() { _ = d.rc.SetWriteDeadline(time.Now().Add(d.timeout)) }

func (d *deadlineWriter) Write(p []byte) (int, error) {
	d.arm()
	return d.ResponseWriter.Write(p)
}

// Flush sends buffered data within the write timeout.
func (d *deadlineWriter) Flush() {
	d.arm()
	_ = d.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/selmem/selmem/resources"
)

// This file holds what selmem puts between mcp-go (v1.2.1) and the wire:
// mcp-go decides what to answer, and the transports below decide whether
// and how an answer goes out, so that:
//
//   - a cancelled request gets no response (the specification says the
//     server should not answer one; mcp-go always does);
//   - a handler's error carries the JSON-RPC code the negotiated revision
//     prescribes (mcp-go answers -32603 for every handler error) and no Go
//     internals;
//   - notifications selmem sends over streamable HTTP reach a stream the
//     client listens on, exactly once (see relay).
//
// The protocol hooks (hooks.go) learn the outcome of each request while
// mcp-go handles it and record it in the request's responseGate, which the
// transport applies when mcp-go writes the response.

// responseGate is where the hooks record what must happen to the response
// of a request: nothing (no record), no response at all, or another error.
type responseGate interface {
	// cancel withholds the response to id.
	cancel(id any)
	// replaceError sends code and msg instead of the error mcp-go made for id.
	replaceError(id any, code int, msg string)
}

type gateKey struct{}

// withGate returns ctx carrying g.
func withGate(ctx context.Context, g responseGate) context.Context {
	return context.WithValue(ctx, gateKey{}, g)
}

// gateFrom returns the gate of the request ctx belongs to, or nil.
func gateFrom(ctx context.Context) responseGate {
	g, _ := ctx.Value(gateKey{}).(responseGate)
	return g
}

// idKey is a JSON-RPC id as a map key: its JSON text, with numbers as
// encoding/json writes them (1.0 and 1 are the same request).
func idKey(id any) string {
	if raw, ok := id.(json.RawMessage); ok {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return string(raw)
		}
		id = v
	}
	if r, ok := id.(mcp.RequestId); ok {
		id = r.Value()
	}
	switch n := id.(type) {
	case int:
		id = float64(n)
	case int64:
		id = float64(n)
	}
	b, _ := json.Marshal(id)
	return string(b)
}

// outcome is what happens to one response.
type outcome struct {
	drop bool
	code int
	msg  string
}

// outcomes records outcomes by request id; it is the gate logic shared by
// the transports.
type outcomes struct {
	mu sync.Mutex
	m  map[string]outcome
}

func (o *outcomes) set(id any, oc outcome) {
	if id == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]outcome{}
	}
	if prev, ok := o.m[idKey(id)]; ok && prev.drop {
		return // cancelled stays cancelled
	}
	o.m[idKey(id)] = oc
}

func (o *outcomes) cancel(id any) { o.set(id, outcome{drop: true}) }

func (o *outcomes) replaceError(id any, code int, msg string) {
	o.set(id, outcome{code: code, msg: msg})
}

// rpcMessage is the part of a JSON-RPC message the gate reads.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	} `json:"error,omitempty"`
}

// resultID reads the id of a result response from the head of msg, as
// mcp-go writes it: {"jsonrpc":"2.0","id":…,"result":…}. ok is false for
// anything else (a request, a notification, an error, another order),
// which apply decodes whole.
func resultID(msg []byte) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var version string
	var id json.RawMessage
	for _, key := range []string{"jsonrpc", "id", "result"} {
		t, err := dec.Token()
		if err != nil || t != key {
			return nil, false
		}
		switch key {
		case "jsonrpc":
			if dec.Decode(&version) != nil || version != "2.0" {
				return nil, false
			}
		case "id":
			if dec.Decode(&id) != nil || len(id) == 0 || id[0] == '{' || id[0] == '[' || string(id) == "null" {
				return nil, false
			}
		}
	}
	return id, true
}

// verdict is what apply decided about one message.
type verdict struct {
	response bool   // the message is a response (result or error)
	id       string // then, the id of the request it answers (idKey)
	keep     bool   // it goes out
	replaced int    // the JSON-RPC error code it now carries, when replaced; else 0
}

// apply applies the recorded outcome to one JSON message and returns what
// goes out.
func (o *outcomes) apply(msg []byte) ([]byte, verdict) {
	if id, ok := resultID(msg); ok {
		// A result: only a cancellation changes it, and reading its head
		// spares decoding a large result (a view's data) whole.
		key := idKey(id)
		o.mu.Lock()
		oc, found := o.m[key]
		delete(o.m, key)
		o.mu.Unlock()
		if found && oc.drop {
			return nil, verdict{response: true, id: key}
		}
		return msg, verdict{response: true, id: key, keep: true}
	}
	var m rpcMessage
	if json.Unmarshal(msg, &m) != nil || m.Method != "" || len(m.ID) == 0 || (m.Result == nil && m.Error == nil) {
		return msg, verdict{keep: true}
	}
	key := idKey(m.ID)
	o.mu.Lock()
	oc, ok := o.m[key]
	delete(o.m, key)
	o.mu.Unlock()
	switch {
	case !ok:
		return msg, verdict{response: true, id: key, keep: true}
	case oc.drop:
		return nil, verdict{response: true, id: key}
	case m.Error == nil:
		return msg, verdict{response: true, id: key, keep: true}
	}
	m.Error.Code, m.Error.Message, m.Error.Data = oc.code, oc.msg, nil
	b, err := json.Marshal(m)
	if err != nil {
		return msg, verdict{response: true, id: key, keep: true}
	}
	if bytes.HasSuffix(msg, []byte("\n")) {
		b = append(b, '\n')
	}
	return b, verdict{response: true, id: key, keep: true, replaced: oc.code}
}

// lineWriter is the gate of the stdio transport: mcp-go writes each message
// as one line in one Write, and lineWriter applies the outcomes to the
// responses among them. It is also the transport's resources.Notifier: a
// resources/updated goes out as soon as the write that caused it has
// returned, so it precedes the tool call's response (mcp-go's own queue
// has a consumer of its own and gives no such order).
type lineWriter struct {
	outcomes
	w        io.Writer
	answered func(id string) // told of each response, written or withheld

	mu sync.Mutex // one line at a time on w
}

var (
	_ responseGate       = (*lineWriter)(nil)
	_ resources.Notifier = (*lineWriter)(nil)
)

func (l *lineWriter) Write(p []byte) (int, error) {
	out, v := l.apply(p)
	if v.response && l.answered != nil {
		defer l.answered(v.id)
	}
	if !v.keep {
		return len(p), nil
	}
	if err := l.writeLine(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// refuse answers a line that is no JSON-RPC message MCP admits: -32600,
// with a null id (its id, if any, cannot be trusted).
func (l *lineWriter) refuse(reason string) {
	_ = l.writeLine(rpcError(nil, mcp.INVALID_REQUEST, reason))
}

// Notify writes n on stdout; stdio has one session, whatever its ID.
func (l *lineWriter) Notify(_ string, n mcp.JSONRPCNotification) error {
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	return l.writeLine(append(b, '\n'))
}

func (l *lineWriter) writeLine(b []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.w.Write(b)
	return err
}

// streamWriter is the response writer selmem hands mcp-go for a POST or GET
// on the MCP endpoint. For a POST it is the request's gate: it withholds or
// rewrites the response as recorded and can carry notifications on the
// request's stream, upgrading a JSON response to an event stream when the
// first one comes. For a GET it carries notifications on the standalone
// stream. Every write goes through mu, so events never interleave.
//
// mcp-go sets headers through Header() under a lock of its own, from the
// request's goroutine and its notification forwarder, while the relay may
// start an event stream from another goroutine. So mcp-go's headers go to
// a map of their own (hdr), read only from mcp-go's calls and copied to
// the wire's when mcp-go sends them (adopt); the relay touches only the
// wire's, under mu.
type streamWriter struct {
	outcomes
	w      http.ResponseWriter
	hdr    http.Header // the headers mcp-go sets
	rc     *http.ResponseController
	modern bool // a 2026-07-28 request: HTTP status follows the JSON-RPC error
	// jsonOnly: the client's Accept header excludes event streams, so a
	// notification never turns the response into one.
	jsonOnly bool

	mu          sync.Mutex
	wroteHeader bool // headers are on the wire
	sse         bool // the wire is an event stream
	pending     int  // status of a JSON response held until its body comes
	done        bool // the response is complete: nothing more may be written
}

var (
	_ responseGate = (*streamWriter)(nil)
	_ http.Flusher = (*streamWriter)(nil)
)

func newStreamWriter(w http.ResponseWriter, modern bool) *streamWriter {
	return &streamWriter{w: w, hdr: http.Header{}, rc: http.NewResponseController(w), modern: modern}
}

// Header is mcp-go's header map of the response, sent with its status.
func (s *streamWriter) Header() http.Header { return s.hdr }

// adopt copies mcp-go's headers to the wire's. Callers hold mu and are
// mcp-go's own calls, or come after mcp-go is done.
func (s *streamWriter) adopt() {
	h := s.w.Header()
	for k, v := range s.hdr {
		h[k] = slices.Clone(v)
	}
}

// WriteHeader sends the status, except for a JSON response, whose status
// waits for its body: the body may be withheld or carry another error.
func (s *streamWriter) WriteHeader(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wroteHeader || s.done {
		return
	}
	ct := s.hdr.Get("Content-Type")
	if strings.HasPrefix(ct, "application/json") {
		s.pending = code
		return
	}
	s.adopt()
	s.sendHeader(code)
}

func (s *streamWriter) sendHeader(code int) {
	s.w.WriteHeader(code)
	s.wroteHeader = true
	s.sse = strings.HasPrefix(s.w.Header().Get("Content-Type"), "text/event-stream")
}

// upgrade starts an event stream. Callers hold mu.
func (s *streamWriter) upgrade() {
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Del("Content-Length")
	s.sendHeader(http.StatusOK)
}

// Write writes mcp-go's output: a JSON body (one message) or SSE events.
func (s *streamWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return len(p), nil
	}
	jsonBody := strings.HasPrefix(s.hdr.Get("Content-Type"), "application/json")
	switch {
	case s.pending != 0 && !s.wroteHeader:
		// A JSON response not yet started.
		out, v := s.apply(p)
		s.adopt()
		if !v.keep {
			s.upgrade() // an event stream that ends without the response
			s.done = true
			return len(p), nil
		}
		status := s.pending
		if v.replaced != 0 && s.modern {
			status = statusForCode(v.replaced)
		}
		s.sendHeader(status)
		s.done = v.response
		if _, err := s.w.Write(out); err != nil {
			return 0, err
		}
		return len(p), nil
	case s.sse && jsonBody:
		// mcp-go writes a JSON response after selmem started an event
		// stream on its own: send it as the stream's last event.
		out, v := s.apply(bytes.TrimSpace(p))
		s.done = true
		if v.keep {
			if err := writeEvent(s.w, out); err != nil {
				return 0, err
			}
		}
		return len(p), nil
	case s.sse:
		if data, ok := eventData(p); ok {
			if !s.modern && relayed(data) {
				return len(p), nil
			}
			out, v := s.apply(data)
			if v.response {
				s.done = true
			}
			if !v.keep {
				return len(p), nil
			}
			if !bytes.Equal(out, data) {
				if err := writeEvent(s.w, out); err != nil {
					return 0, err
				}
				return len(p), nil
			}
		}
	}
	if !s.wroteHeader {
		s.adopt()
		s.wroteHeader = true
	}
	return s.w.Write(p)
}

// Flush sends what was written; before the headers, nothing was.
func (s *streamWriter) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wroteHeader {
		_ = s.rc.Flush()
	}
}

// notify writes one notification event on the stream, starting an event
// stream if nothing was sent yet. It reports false when the stream cannot
// carry it: the response is complete or is being sent as JSON.
func (s *streamWriter) notify(data []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || s.pending != 0 || s.jsonOnly && !s.sse {
		return false
	}
	if !s.wroteHeader {
		s.upgrade()
	}
	if !s.sse {
		return false
	}
	if writeEvent(s.w, data) != nil {
		s.done = true
		return false
	}
	if s.rc.Flush() != nil {
		s.done = true
		return false
	}
	return true
}

// finish ends the response once mcp-go returned: a JSON status still held
// is sent, and nothing more is written.
func (s *streamWriter) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending != 0 && !s.wroteHeader {
		s.adopt()
		s.sendHeader(s.pending)
	}
	s.done = true
}

// acceptsEventStream reports whether an Accept header admits an event
// stream: it is absent, or one of its media ranges is text/event-stream,
// text/* or */*.
func acceptsEventStream(accept string) bool {
	if strings.TrimSpace(accept) == "" {
		return true
	}
	for _, r := range strings.Split(accept, ",") {
		mt, _, err := mime.ParseMediaType(r)
		if err == nil && (mt == "text/event-stream" || mt == "text/*" || mt == "*/*") {
			return true
		}
	}
	return false
}

// writeEvent writes one SSE message event.
func writeEvent(w io.Writer, data []byte) error {
	_, err := io.WriteString(w, "event: message\ndata: "+string(bytes.TrimSpace(data))+"\n\n")
	return err
}

// eventData returns the data of one SSE event as mcp-go writes it
// ("event: message\ndata: {...}\n\n", one Write per event).
func eventData(p []byte) ([]byte, bool) {
	var data []byte
	found := false
	for _, line := range bytes.Split(p, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimSpace(d)...)
			found = true
		}
	}
	return data, found
}

// statusForCode is the HTTP status of a JSON-RPC error in protocol revision
// 2026-07-28, as mcp-go maps it.
func statusForCode(code int) int {
	switch code {
	case mcp.METHOD_NOT_FOUND:
		return http.StatusNotFound
	case mcp.INVALID_REQUEST, mcp.INVALID_PARAMS, mcp.PARSE_ERROR, mcp.HEADER_MISMATCH,
		mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, mcp.UNSUPPORTED_PROTOCOL_VERSION:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

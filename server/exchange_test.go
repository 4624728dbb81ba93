package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

const (
	resultOf7 = `{"jsonrpc":"2.0","id":7,"result":{}}` + "\n"
	errorOf7  = `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"request error: json: cannot unmarshal"}}` + "\n"
	note      = `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"memory://workspaces/demo/task"}}`
)

// writeJSON writes body the way mcp-go writes a JSON response.
func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// writeSSE writes body as one event the way mcp-go does, starting the
// stream first if needed.
func writeSSE(w http.ResponseWriter, start bool, body string) {
	if start {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
	}
	_, _ = w.Write([]byte("event: message\ndata: " + strings.TrimSpace(body) + "\n\n"))
	w.(http.Flusher).Flush()
}

func TestStreamWriter(t *testing.T) {
	tests := []struct {
		name   string
		modern bool
		run    func(s *streamWriter)
		status int
		ctype  string
		body   string
	}{
		{"JSON response passes", false, func(s *streamWriter) { writeJSON(s, 200, resultOf7) },
			200, "application/json", resultOf7},
		{"cancelled JSON response is withheld", false, func(s *streamWriter) {
			s.cancel(7.0)
			writeJSON(s, 200, resultOf7)
		}, 200, "text/event-stream", ""},
		{"JSON error replaced", false, func(s *streamWriter) {
			s.replaceError(7.0, mcp.INVALID_PARAMS, "plain")
			writeJSON(s, 200, errorOf7)
		}, 200, "application/json", `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"plain"}}` + "\n"},
		{"modern status follows the replaced code", true, func(s *streamWriter) {
			s.replaceError(7.0, mcp.INVALID_PARAMS, "plain")
			writeJSON(s, 200, errorOf7)
		}, 400, "application/json", `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"plain"}}` + "\n"},
		{"notification upgrades to an event stream; the JSON response follows as an event", false, func(s *streamWriter) {
			if !s.notify([]byte(note)) {
				panic("notify refused")
			}
			writeJSON(s, 200, resultOf7)
		}, 200, "text/event-stream", "event: message\ndata: " + note + "\n\nevent: message\ndata: " + strings.TrimSpace(resultOf7) + "\n\n"},
		{"cancelled SSE response is withheld", false, func(s *streamWriter) {
			s.cancel(7.0)
			writeSSE(s, true, note)
			writeSSE(s, false, resultOf7)
		}, 200, "text/event-stream", "event: message\ndata: " + note + "\n\n"},
		{"SSE error replaced", false, func(s *streamWriter) {
			s.replaceError(7.0, mcp.RESOURCE_NOT_FOUND, "gone")
			writeSSE(s, true, errorOf7)
		}, 200, "text/event-stream", "event: message\ndata: " + `{"jsonrpc":"2.0","id":7,"error":{"code":-32002,"message":"gone"}}` + "\n\n"},
		{"nothing after the response", false, func(s *streamWriter) {
			writeSSE(s, true, resultOf7)
			if s.notify([]byte(note)) {
				panic("notify after the response")
			}
		}, 200, "text/event-stream", "event: message\ndata: " + strings.TrimSpace(resultOf7) + "\n\n"},
		{"a client that accepts only JSON gets no event stream", false, func(s *streamWriter) {
			s.jsonOnly = true
			if s.notify([]byte(note)) {
				panic("notify upgraded a JSON-only response")
			}
			writeJSON(s, 200, resultOf7)
		}, 200, "application/json", resultOf7},
		{"held JSON status sent at finish", false, func(s *streamWriter) {
			s.Header().Set("Content-Type", "application/json")
			s.WriteHeader(http.StatusAccepted)
			s.finish()
		}, 202, "application/json", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			s := newStreamWriter(rec, tt.modern)
			tt.run(s)
			s.finish()
			if rec.Code != tt.status {
				t.Errorf("status %d, want %d", rec.Code, tt.status)
			}
			if got := rec.Result().Header.Get("Content-Type"); !strings.HasPrefix(got, tt.ctype) {
				t.Errorf("Content-Type %q, want %q", got, tt.ctype)
			}
			if got := rec.Body.String(); got != tt.body {
				t.Errorf("body\n%q\nwant\n%q", got, tt.body)
			}
		})
	}
}

func TestLineWriter(t *testing.T) {
	var out bytes.Buffer
	l := &lineWriter{w: &out}
	l.cancel(7.0)
	l.replaceError("x", mcp.INVALID_PARAMS, "plain")
	for _, line := range []string{
		note + "\n",
		resultOf7,
		`{"jsonrpc":"2.0","id":"x","error":{"code":-32603,"message":"internal"}}` + "\n",
		`{"jsonrpc":"2.0","id":8,"result":{}}` + "\n",
	} {
		if _, err := l.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	want := note + "\n" +
		`{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"plain"}}` + "\n" +
		`{"jsonrpc":"2.0","id":8,"result":{}}` + "\n"
	if out.String() != want {
		t.Errorf("stdout\n%s\nwant\n%s", out.String(), want)
	}
}

func TestAcceptsEventStream(t *testing.T) {
	tests := []struct {
		accept string
		want   bool
	}{
		{"", true},
		{"application/json, text/event-stream", true},
		{"text/event-stream;q=0.9", true},
		{"*/*", true},
		{"text/*", true},
		{"application/json", false},
		{"text/html", false},
		{"application/json, text/html;q=0.5", false},
	}
	for _, tt := range tests {
		if got := acceptsEventStream(tt.accept); got != tt.want {
			t.Errorf("acceptsEventStream(%q) = %v, want %v", tt.accept, got, tt.want)
		}
	}
}

func TestIDKey(t *testing.T) {
	for _, id := range []any{7, int64(7), 7.0, mcp.NewRequestId(7), json.RawMessage("7.0")} {
		if got := idKey(id); got != "7" {
			t.Errorf("idKey(%#v) = %s, want 7", id, got)
		}
	}
	if got := idKey("7"); got != `"7"` {
		t.Errorf(`idKey("7") = %s`, got)
	}
}

func TestResultID(t *testing.T) {
	tests := []struct {
		msg, id string // id "" when apply must decode the message whole
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`, "7"},
		{`{"jsonrpc":"2.0","id":"a-1","result":{}}` + "\n", `"a-1"`},
		{`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"x"}}`, ""},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, ""},
		{`{"jsonrpc":"2.0","id":3,"method":"ping"}`, ""},
		{`{"id":7,"jsonrpc":"2.0","result":{}}`, ""},
		{`{"jsonrpc":"2.0","id":null,"result":{}}`, ""},
		{`{"jsonrpc":"1.0","id":7,"result":{}}`, ""},
		{`[{"jsonrpc":"2.0","id":7,"result":{}}]`, ""},
		{`not json`, ""},
	}
	for _, tt := range tests {
		id, ok := resultID([]byte(tt.msg))
		if got := string(id); ok != (tt.id != "") || got != tt.id {
			t.Errorf("resultID(%s) = %s, %v; want %q", tt.msg, got, ok, tt.id)
		}
	}
}

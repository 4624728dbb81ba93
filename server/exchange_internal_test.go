package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestStreamWriter_HeadersOfTwoWriters starts a POST's event stream from
// two sides at once, as mcp-go's notification forwarder (headers set
// under its own lock, then the status and an event) and the relay (a
// notification of selmem's) do. Under -race this found them writing one
// header map, a crash of the whole server; now each notification arrives
// once, on one event stream.
func TestStreamWriter_HeadersOfTwoWriters(t *testing.T) {
	for range 50 {
		rec := httptest.NewRecorder()
		sw := newStreamWriter(rec, false)
		var wg sync.WaitGroup
		wg.Go(func() {
			sw.Header().Set("Content-Type", "text/event-stream")
			sw.Header().Set("Connection", "keep-alive")
			sw.Header().Set("Cache-Control", "no-cache")
			sw.WriteHeader(http.StatusOK)
			_, _ = sw.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n"))
			sw.Flush()
		})
		wg.Go(func() {
			if !sw.notify([]byte(`{"jsonrpc":"2.0","method":"notifications/resources/updated"}`)) {
				t.Error("the relay's notification found no stream")
			}
		})
		wg.Wait()
		sw.finish()
		if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type %q, want text/event-stream", ct)
		}
		body := rec.Body.String()
		for _, m := range []string{"notifications/progress", "notifications/resources/updated"} {
			if n := strings.Count(body, m); n != 1 {
				t.Fatalf("%s %d times on the stream, want once:\n%s", m, n, body)
			}
		}
	}
}

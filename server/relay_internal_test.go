package server

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// stalledWriter is the response of a client that stopped reading: every
// write blocks until release is closed.
type stalledWriter struct {
	header  http.Header
	release chan struct{}
	entered chan struct{} // closed when the first write blocks

	once sync.Once
	mu   sync.Mutex
	body bytes.Buffer
}

func newStalledWriter() *stalledWriter {
	return &stalledWriter{header: http.Header{}, release: make(chan struct{}), entered: make(chan struct{})}
}

func (s *stalledWriter) Header() http.Header { return s.header }
func (s *stalledWriter) WriteHeader(int)     {}
func (s *stalledWriter) Flush()              {}

func (s *stalledWriter) Write(p []byte) (int, error) {
	s.once.Do(func() { close(s.entered) })
	<-s.release
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.body.Write(p)
}

func (s *stalledWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.body.String()
}

// syncRecorder is a response recorder that may be read while written.
type syncRecorder struct {
	mu  sync.Mutex
	rec *httptest.ResponseRecorder
}

func (s *syncRecorder) Header() http.Header { return s.rec.Header() }
func (s *syncRecorder) Flush()              {}

func (s *syncRecorder) WriteHeader(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rec.WriteHeader(code)
}

func (s *syncRecorder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec.Write(p)
}

func (s *syncRecorder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec.Body.String()
}

func updated(uri string) mcp.JSONRPCNotification {
	return mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationResourceUpdated),
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{"uri": uri}},
		},
	}
}

// returnsWhileStuck runs f and fails the test if it does not return while
// the stalled client is still stuck (released only afterwards).
func returnsWhileStuck(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		f()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second): // far beyond the relay's wait
		t.Fatalf("%s waited for the client that stopped reading", what)
	}
}

// TestRelay_StalledClientHoldsUpNoOne: a client that stops reading its
// stream holds up neither the notifications of other sessions nor the
// senders (a write's tool call, every other subscriber). A sender waits
// for the stuck client once, at most the relay's wait; the stuck
// session's notifications are kept in order and written once it reads.
func TestRelay_StalledClientHoldsUpNoOne(t *testing.T) {
	rl := newRelay(slog.New(slog.DiscardHandler))
	stuck := newStalledWriter()
	rl.add("stuck", newStreamWriter(stuck, false), true)
	reader := &syncRecorder{rec: httptest.NewRecorder()}
	rl.add("reader", newStreamWriter(reader, false), true)

	returnsWhileStuck(t, "NotifyEach", func() { rl.NotifyEach([]string{"stuck", "reader"}, updated("memory://a/0")) })
	<-stuck.entered
	for i := 1; i <= 20; i++ {
		uri := fmt.Sprintf("memory://a/%d", i)
		returnsWhileStuck(t, "Notify", func() {
			_ = rl.Notify("stuck", updated(uri))
			_ = rl.Notify("reader", updated(uri))
		})
		// The reader's notification is on its stream when Notify returns.
		if !strings.Contains(reader.String(), `"`+uri+`"`) {
			t.Fatalf("the reader did not get %s before Notify returned:\n%s", uri, reader.String())
		}
	}

	close(stuck.release)
	// Written in order, all are once the last is: Notify waits for it.
	rl.wait = time.Hour
	_ = rl.Notify("stuck", updated("memory://a/21"))
	want := make([]string, 22)
	for i := range want {
		want[i] = fmt.Sprintf(`"memory://a/%d"`, i)
	}
	body := stuck.String()
	at := 0
	for _, w := range want {
		i := strings.Index(body[at:], w)
		if i < 0 {
			t.Fatalf("the stuck client's stream lacks %s after %d bytes, or out of order:\n%s", w, at, body)
		}
		at += i + len(w)
	}
}

// TestRelay_OutboxLimit: notifications beyond the limit of a session
// that does not read are dropped, not queued without end.
func TestRelay_OutboxLimit(t *testing.T) {
	rl := newRelay(slog.New(slog.DiscardHandler))
	rl.wait = 0 // no sender waits
	stuck := newStalledWriter()
	rl.add("stuck", newStreamWriter(stuck, false), true)
	for i := range outboxLimit + 50 {
		_ = rl.Notify("stuck", updated(fmt.Sprintf("memory://b/%d", i)))
		if i == 0 {
			<-stuck.entered
		}
	}
	rl.mu.Lock()
	pending := rl.outboxes["stuck"].pending
	rl.mu.Unlock()
	if len(pending) != outboxLimit {
		t.Fatalf("%d notifications wait for the stuck session, want the limit %d", len(pending), outboxLimit)
	}
	close(stuck.release)
	<-pending[len(pending)-1].sent // written in order: all are
	body := stuck.String()
	if got := strings.Count(body, "notifications/resources/updated"); got != outboxLimit+1 {
		t.Fatalf("%d notifications written, want %d (the one being written and the limit)", got, outboxLimit+1)
	}
}

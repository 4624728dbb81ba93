package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/selmem/selmem/resources"
)

// relay delivers the notifications selmem sends to streamable HTTP
// sessions (resources/updated, resources/list_changed, log messages) on a
// stream the session's client listens on: its standalone GET stream when
// one is open, otherwise a POST stream of one of its requests still in
// flight.
//
// Why selmem does not use MCPServer.SendNotificationToSpecificClient over
// HTTP: in mcp-go v1.2.1 (server/streamable_http.go, handlePost) every POST
// of a session, and its GET stream, read notifications from the one channel
// of the session registered at initialize. Each POST runs a forwarder
// goroutine that takes a notification off that channel and only then locks
// the response; when the request's handler returns meanwhile, handlePost
// drains the channel, closes `done` and writes the response under the lock,
// and the forwarder, finding `done` closed, drops the notification it holds
// ("the notification is already off the channel"; only kept with an event
// store). A notification sent just before a tool call returns — which is
// when a write notifies its subscribers — is therefore lost whenever the
// forwarder loses that race: with two subscriptions, typically the first;
// with one and no GET stream, often the only one. With a GET stream open,
// an update may also be taken by the forwarder of a concurrent POST and
// dropped the same way. (The same race can drop mcp-go's own progress
// notifications; upstream tracks flaky notification delivery in its
// conformance baseline.) relay writes through streamWriter instead and
// never touches that channel. mcp-go still puts its own list_changed on
// that channel; the streams of sessions drop it (relayed), since the
// relay sends each to the sessions the registry names (NotifyEach).
//
// Each session has an outbox, written in order by a goroutine of its own,
// so that a client that stops reading its stream — whose writes then
// block until http.write_timeout disconnects it — holds up only itself:
// a sender waits at most wait for its notification to be written, and not
// at all for a session already stuck that long.
type relay struct {
	log  *slog.Logger
	wait time.Duration

	mu       sync.Mutex
	streams  map[string][]relayStream // session ID -> open streams, oldest first
	outboxes map[string]*outbox       // session ID -> notifications not yet written
}

type relayStream struct {
	w   *streamWriter
	get bool
}

// outbox holds a session's notifications not yet written, oldest first.
// It exists while a goroutine (drain) writes them.
type outbox struct {
	pending []delivery
	writing time.Time // when the write in progress began; zero between writes
}

// delivery is one notification in an outbox.
type delivery struct {
	method string
	data   []byte
	sent   chan struct{} // closed once written, or dropped
}

// relayWait is how long a sender waits for its notification to be written.
// A stream being read takes microseconds: an update a tool call causes
// then goes out on the call's own stream before the call's response, which
// ends that stream. A stream that takes longer is not being read.
const relayWait = time.Second

// outboxLimit is how many notifications may wait for one session; beyond
// it, new ones are dropped, as mcp-go drops those of a full queue.
const outboxLimit = 256

func newRelay(log *slog.Logger) *relay {
	return &relay{log: log, wait: relayWait, streams: map[string][]relayStream{}, outboxes: map[string]*outbox{}}
}

var _ resources.Broadcaster = (*relay)(nil)

// add records an open stream of session; remove must follow.
func (rl *relay) add(session string, w *streamWriter, get bool) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	rl.streams[session] = append(rl.streams[session], relayStream{w: w, get: get})
}

// remove forgets a stream.
func (rl *relay) remove(session string, w *streamWriter) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	ss := rl.streams[session]
	for i, s := range ss {
		if s.w == w {
			ss = append(ss[:i:i], ss[i+1:]...)
			break
		}
	}
	if len(ss) == 0 {
		delete(rl.streams, session)
	} else {
		rl.streams[session] = ss
	}
}

// Notify sends n to session on one stream: the newest GET stream, else the
// newest POST stream that can still carry it. With no stream open there is
// nowhere to send it, and it is dropped: a client that wants updates caused
// by other sessions keeps its GET stream open. Notify returns once n is
// written, or after the relay's wait.
func (rl *relay) Notify(session string, n mcp.JSONRPCNotification) error {
	data, err := json.Marshal(n)
	if err != nil {
		return err
	}
	rl.await(rl.enqueue(session, n.Method, data)...)
	return nil
}

// NotifyEach sends n to each of sessions, as Notify does; those with no
// stream open have nowhere to receive it. It returns once n is written to
// all of them, or after the relay's wait.
func (rl *relay) NotifyEach(sessions []string, n mcp.JSONRPCNotification) {
	data, err := json.Marshal(n)
	if err != nil {
		rl.log.Error("encode a notification", logKeyMethod, n.Method, logKeyErr, err)
		return
	}
	var sent []<-chan struct{}
	for _, s := range sessions {
		sent = append(sent, rl.enqueue(s, n.Method, data)...)
	}
	rl.await(sent...)
}

// enqueue adds a notification to session's outbox, starting its writer if
// it has none, and returns what to wait for: the notification's sent
// channel, or nothing when the session is stuck in a write for longer than
// the relay's wait, or its outbox is full and the notification dropped.
func (rl *relay) enqueue(session, method string, data []byte) []<-chan struct{} {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	ob := rl.outboxes[session]
	if ob == nil {
		ob = &outbox{}
		rl.outboxes[session] = ob
		go rl.drain(session, ob)
	}
	if len(ob.pending) >= outboxLimit {
		rl.log.Warn("dropped a notification: the session's client is not reading its stream", logKeySession, session, logKeyMethod, method)
		return nil
	}
	d := delivery{method: method, data: data, sent: make(chan struct{})}
	ob.pending = append(ob.pending, d)
	if !ob.writing.IsZero() && time.Since(ob.writing) > rl.wait {
		return nil
	}
	return []<-chan struct{}{d.sent}
}

// await waits until every channel of sent is closed, or the relay's wait
// has passed.
func (rl *relay) await(sent ...<-chan struct{}) {
	if len(sent) == 0 {
		return
	}
	timer := time.NewTimer(rl.wait)
	defer timer.Stop()
	for _, c := range sent {
		select {
		case <-c:
		case <-timer.C:
			return
		}
	}
}

// drain writes session's outbox in order until it is empty, then removes
// it.
func (rl *relay) drain(session string, ob *outbox) {
	for {
		rl.mu.Lock()
		ob.writing = time.Time{}
		if len(ob.pending) == 0 {
			delete(rl.outboxes, session)
			rl.mu.Unlock()
			return
		}
		d := ob.pending[0]
		ob.pending = ob.pending[1:]
		ob.writing = time.Now()
		ss := slices.Clone(rl.streams[session])
		rl.mu.Unlock()
		rl.deliver(session, ss, d)
		close(d.sent)
	}
}

// deliver writes d on one of ss, session's open streams: the newest GET
// stream, else the newest POST stream that can carry it.
func (rl *relay) deliver(session string, ss []relayStream, d delivery) {
	for _, get := range []bool{true, false} {
		for i := len(ss) - 1; i >= 0; i-- {
			if ss[i].get == get && ss[i].w.notify(d.data) {
				return
			}
		}
	}
	rl.log.Debug("no open stream for a notification", logKeySession, session, logKeyMethod, d.method)
}

// relayed reports whether data, an event mcp-go writes on a stream of a
// session, is a notification the relay delivers instead (NotifyEach), so
// that it arrives once: resources/list_changed.
func relayed(data []byte) bool {
	// Most events are not: answers, some large, are not parsed again.
	if !bytes.Contains(data, []byte(mcp.MethodNotificationResourcesListChanged)) {
		return false
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(data, &m) == nil && m.ID == nil && m.Method == string(mcp.MethodNotificationResourcesListChanged)
}

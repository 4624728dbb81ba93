package server

import (
	"crypto/rand"
	"errors"
	"sync"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"
)

// errUnknownSession is what Validate says of an id that is not open: never
// issued, deleted by its client or evicted. The transport answers 404, and
// the client starts a new session.
var errUnknownSession = errors.New("unknown or expired session")

// sessionTable issues and tracks the ids of open MCP sessions for the
// streamable HTTP transport: how many there are, in all and by principal
// (for http.max_sessions and http.max_sessions_per_principal),
// when each was last used and whether it holds an open event stream (for
// eviction after http.session_idle_ttl). A terminated id is forgotten at
// once, so nothing grows with the number of sessions ever opened.
type sessionTable struct {
	now               func() time.Time
	max, perPrincipal int

	mu       sync.Mutex
	reserved map[string]int // admitted initialize requests still in flight, by owner
	open     map[string]*sessionState
}

// sessionState is what the table knows of one open session.
type sessionState struct {
	lastSeen time.Time
	streams  int           // open GET event streams
	owner    string        // sessionOwner of the principal that initialised it
	ended    chan struct{} // closed when the session ends, to end its streams
}

var _ mcpserver.SessionIdManager = (*sessionTable)(nil)

func newSessionTable(max, perPrincipal int, now func() time.Time) *sessionTable {
	return &sessionTable{now: now, max: max, perPrincipal: perPrincipal,
		reserved: map[string]int{}, open: map[string]*sessionState{}}
}

// reserve admits one initialize request of owner if the sessions open plus
// those being initialised stay within both caps, and names the setting
// that refused it otherwise. A true result must be paired with release
// once the request is done; the session it creates (Generate, then bind)
// is counted from then on.
func (t *sessionTable) reserve(owner string) (ok bool, limitKey string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	total, mine := len(t.open), t.reserved[owner]
	for _, n := range t.reserved {
		total += n
	}
	for _, s := range t.open {
		if s.owner == owner {
			mine++
		}
	}
	switch {
	case total >= t.max:
		return false, "http.max_sessions"
	case mine >= t.perPrincipal:
		return false, "http.max_sessions_per_principal"
	}
	t.reserved[owner]++
	return true, ""
}

// release ends a reservation of owner.
func (t *sessionTable) release(owner string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.reserved[owner]--; t.reserved[owner] <= 0 {
		delete(t.reserved, owner)
	}
}

// Generate issues the id of a new session.
func (t *sessionTable) Generate() string {
	id := "mcp-session-" + rand.Text()
	t.mu.Lock()
	t.open[id] = &sessionState{lastSeen: t.now(), ended: make(chan struct{})}
	t.mu.Unlock()
	return id
}

// Validate accepts only open sessions.
func (t *sessionTable) Validate(id string) (isTerminated bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.open[id]; !ok {
		return false, errUnknownSession
	}
	return false, nil
}

// Terminate forgets id and ends its event streams; a client may always end
// its own session.
func (t *sessionTable) Terminate(id string) (isNotAllowed bool, err error) {
	t.mu.Lock()
	if s, ok := t.open[id]; ok {
		close(s.ended)
		delete(t.open, id)
	}
	t.mu.Unlock()
	return false, nil
}

// bind records the principal that initialised session id.
func (t *sessionTable) bind(id, owner string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.open[id]; ok {
		s.owner = owner
	}
}

// allows reports whether owner may use session id: it initialised it, or
// id is not open (the transport answers 404 to an unknown id).
func (t *sessionTable) allows(id, owner string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.open[id]
	return !ok || s.owner == owner
}

// touch records a request on id and reports whether id is open.
func (t *sessionTable) touch(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.open[id]
	if ok {
		s.lastSeen = t.now()
	}
	return ok
}

// maxStreams is how many event streams one session may hold open. A
// client needs one; each holds a connection and goroutines, and nothing
// else bounded them.
const maxStreams = 8

// streamOpened records an event stream on session id and reports whether
// id is open (open false: 404) and below maxStreams (full true: refused),
// and returns a channel closed when the session ends, which must end the
// stream; an ok result (open and not full) must be paired with
// streamClosed.
func (t *sessionTable) streamOpened(id string) (open, full bool, ended <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.open[id]
	if !ok {
		return false, false, nil
	}
	if s.streams >= maxStreams {
		return true, true, nil
	}
	s.streams++
	s.lastSeen = t.now()
	return true, false, s.ended
}

// streamClosed records the end of an event stream.
func (t *sessionTable) streamClosed(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.open[id]; ok {
		s.streams--
		s.lastSeen = t.now()
	}
}

// idle returns the sessions without an open stream and unused for ttl.
func (t *sessionTable) idle(ttl time.Duration) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	var ids []string
	for id, s := range t.open {
		if s.streams == 0 && now.Sub(s.lastSeen) >= ttl {
			ids = append(ids, id)
		}
	}
	return ids
}

// len is the number of open sessions.
func (t *sessionTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.open)
}

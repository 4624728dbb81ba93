package server

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// stdioDrainTimeout is how long the stdio transport, at the end of its
// input, waits for the answers to the requests it read before it ends.
const stdioDrainTimeout = 10 * time.Second

// drainingReader is the stdio transport's input. At its end it holds back
// io.EOF until every request it passed on has been answered (or its answer
// withheld), for at most timeout: mcp-go cancels every request still
// running when the input ends, and a cancelled request's answer is
// withheld, so a client that writes its requests and closes its end of
// the pipe would otherwise get no answers at all. mcp-go reads on a
// goroutine of its own and stops waiting for it when its context ends, so
// holding back EOF does not hold up a shutdown.
type drainingReader struct {
	r       io.Reader
	pending *pendingRequests
	timeout time.Duration
	line    []byte // the part of the current line read so far
	eof     bool   // the input has ended; the next Read waits, then says so
	drained bool   // the wait is over
}

func (d *drainingReader) Read(p []byte) (int, error) {
	if !d.eof {
		n, err := d.r.Read(p)
		d.scan(p[:n])
		if err != io.EOF {
			return n, err
		}
		d.eof = true
		if n > 0 {
			// The requests in p are not read yet: EOF waits for the
			// next Read.
			return n, nil
		}
	}
	if !d.drained {
		d.pending.wait(d.timeout)
		d.drained = true
	}
	return 0, io.EOF
}

// scan records the requests among the complete lines of b. A last line
// without its newline is not read by mcp-go either.
func (d *drainingReader) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			d.line = append(d.line, b...)
			return
		}
		line := b[:i]
		if len(d.line) > 0 {
			d.line = append(d.line, line...)
			line = d.line
		}
		if id, ok := requestID(line); ok {
			d.pending.add(id)
		}
		d.line = d.line[:0]
		b = b[i+1:]
	}
}

// requestID returns the id of the JSON-RPC request line holds (idKey),
// if it is one: an object with a method and an id.
func requestID(line []byte) (string, bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method == "" || len(m.ID) == 0 || string(m.ID) == "null" {
		return "", false
	}
	return idKey(m.ID), true
}

// pendingRequests counts the requests read and not yet answered, by id.
type pendingRequests struct {
	mu      sync.Mutex
	ids     map[string]int
	changed chan struct{} // signalled when an answer comes
}

func newPendingRequests() *pendingRequests {
	return &pendingRequests{ids: map[string]int{}, changed: make(chan struct{}, 1)}
}

func (p *pendingRequests) add(id string) {
	p.mu.Lock()
	p.ids[id]++
	p.mu.Unlock()
}

// done records the answer to the request id, when one is pending.
func (p *pendingRequests) done(id string) {
	p.mu.Lock()
	if p.ids[id] > 1 {
		p.ids[id]--
	} else {
		delete(p.ids, id)
	}
	p.mu.Unlock()
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

func (p *pendingRequests) empty() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ids) == 0
}

// wait returns when no request is pending, or after timeout.
func (p *pendingRequests) wait(timeout time.Duration) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for !p.empty() {
		select {
		case <-p.changed:
		case <-deadline.C:
			return
		}
	}
}

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

// drainingReader is the stdio transport's input, passed on to mcp-go a
// whole line at a time.
//
// It answers itself the lines that are JSON but no JSON-RPC message MCP
// admits (invalidMessage): -32600 through refuse, and the line is not
// passed on (mcp-go would answer some as parse errors and others, such as
// an id of true, as if they were valid).
//
// At the end of the input it holds back io.EOF until every request it
// passed on has been answered (or its answer withheld), for at most
// timeout: mcp-go cancels every request still running when the input
// ends, and a cancelled request's answer is withheld, so a client that
// writes its requests and closes its end of the pipe would otherwise get
// no answers at all. mcp-go reads on a goroutine of its own and stops
// waiting for it when its context ends, so holding back EOF does not hold
// up a shutdown.
type drainingReader struct {
	r       io.Reader
	pending *pendingRequests
	refuse  func(reason string) // answers a line invalidMessage refuses; nil drops it
	timeout time.Duration
	line    []byte // the part of the current line read so far
	out     []byte // checked lines not yet passed on, from off
	off     int
	err     error // the input's error, once out is passed on
	drained bool  // the wait at the end of the input is over
}

func (d *drainingReader) Read(p []byte) (int, error) {
	for d.off == len(d.out) {
		d.out, d.off = d.out[:0], 0
		if d.err != nil {
			return 0, d.end()
		}
		n, err := d.r.Read(p)
		d.scan(p[:n])
		if err != nil {
			if err == io.EOF && len(d.line) > 0 {
				// A last line without its newline is a line all the same.
				d.check(append(d.line, '\n'))
				d.line = d.line[:0]
			}
			d.err = err
		}
	}
	n := copy(p, d.out[d.off:])
	d.off += n
	return n, nil
}

// end returns the input's error; at EOF, once the requests passed on are
// answered.
func (d *drainingReader) end() error {
	if d.err == io.EOF && !d.drained {
		d.pending.wait(d.timeout)
		d.drained = true
	}
	return d.err
}

// scan checks the complete lines of b, recording the requests among them
// and answering the invalid ones; the lines to pass on go to out.
func (d *drainingReader) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			d.line = append(d.line, b...)
			return
		}
		line := b[:i+1]
		if len(d.line) > 0 {
			d.line = append(d.line, line...)
			line = d.line
		}
		d.check(line)
		d.line = d.line[:0]
		b = b[i+1:]
	}
}

// check passes line on, recording it when it is a request, or answers it
// when it is invalid.
func (d *drainingReader) check(line []byte) {
	if reason := invalidMessage(line); reason != "" {
		if d.refuse != nil {
			d.refuse(reason)
		}
		return
	}
	if id, ok := requestID(line); ok {
		d.pending.add(id)
	}
	d.out = append(d.out, line...)
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

package crashtest

import (
	"sort"
	"strings"
	"sync"
)

// Outcome is what a writer learnt about one write.
type Outcome int

// Outcomes of a write.
const (
	Acked   Outcome = iota // non-error tool result, or CLI exit 0
	Failed                 // error tool result, or CLI exit non-zero
	Unknown                // no answer: the server died or the process was killed
)

// file is everything the writers did to one path.
type file struct {
	path   string // virtual path, /memories/...
	token  string // unique search token in the content
	round  int
	writer string
	// acked is the latest acknowledged content; hasAck says there is one.
	acked  string
	hasAck bool
	// maybe are contents of writes with an unknown outcome made after the
	// latest acknowledged one: HEAD may hold any of them instead.
	maybe []string
	// failed are contents of writes that failed after the latest
	// acknowledged one: HEAD must not hold them.
	failed []string
}

// allowed reports whether content (present tells whether the path exists)
// is a state of the file that the recorded outcomes permit.
func (f *file) allowed(content string, present bool) bool {
	if !present {
		// Without an acknowledgement only the create touched the path; it
		// failed or its outcome is unknown.
		return !f.hasAck
	}
	if f.hasAck && content == f.acked {
		return true
	}
	for _, m := range f.maybe {
		if content == m {
			return true
		}
	}
	return false
}

// determinate reports whether exactly one state is allowed and it is the
// acknowledged content.
func (f *file) determinate() bool { return f.hasAck && len(f.maybe) == 0 }

// ledger records every write of a run, across rounds.
type ledger struct {
	mu    sync.Mutex
	files map[string]*file
	count [3]int // writes by outcome, whole run
}

func newLedger() *ledger { return &ledger{files: map[string]*file{}} }

// record notes the outcome of a write that set path to content.
func (l *ledger) record(path, token, writer string, round int, content string, o Outcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count[o]++
	f := l.files[path]
	if f == nil {
		f = &file{path: path, token: token, round: round, writer: writer}
		l.files[path] = f
	}
	switch o {
	case Acked:
		f.acked, f.hasAck, f.maybe, f.failed = content, true, nil, nil
	case Unknown:
		f.maybe = append(f.maybe, content)
	case Failed:
		f.failed = append(f.failed, content)
	}
}

// snapshot returns copies of every file, sorted by path.
func (l *ledger) snapshot() []file {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]file, 0, len(l.files))
	for _, f := range l.files {
		c := *f
		c.maybe = append([]string(nil), f.maybe...)
		c.failed = append([]string(nil), f.failed...)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// counts returns the number of writes by outcome.
func (l *ledger) counts() [3]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count
}

// repoPath is the repository-relative path of a virtual /memories path.
func repoPath(virtual string) string { return strings.TrimPrefix(virtual, "/memories/") }

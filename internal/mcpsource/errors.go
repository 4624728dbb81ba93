package mcpsource

import (
	"errors"
	"fmt"
	"strings"
)

// Kinds of failure, matched with errors.Is on an *Error.
var (
	// ErrUnavailable: the server could not be started or reached, refused
	// the session, or stopped answering.
	ErrUnavailable = errors.New("mcpsource: the MCP server is unavailable")
	// ErrExited: a command server exited before it answered.
	ErrExited = errors.New("mcpsource: the MCP server exited")
	// ErrTimeout: the call did not finish within the timeout.
	ErrTimeout = errors.New("mcpsource: the MCP call timed out")
	// ErrToolFailed: the tool answered with an error (isError) or the
	// server refused the call.
	ErrToolFailed = errors.New("mcpsource: the tool failed")
	// ErrNotRecords: the result is not JSON or holds no array of objects
	// where RecordsPath points.
	ErrNotRecords = errors.New("mcpsource: the result is not records")
	// ErrTooLarge: the result exceeds MaxBytes.
	ErrTooLarge = errors.New("mcpsource: the result is too large")
)

// Error is a failed read from an MCP tool. Its message names the server by
// its configured name and the tool; it never holds a credential, an
// environment value or the server's command line.
type Error struct {
	Server string // the configured name
	Tool   string
	Kind   error // one of the Err… kinds
	Msg    string
	hint   string
	cause  error // a safe cause: an egress refusal or a context error
}

func (e *Error) Error() string {
	return fmt.Sprintf("mcp server %q, tool %q: %s", e.Server, e.Tool, e.Msg)
}

// Unwrap returns the kind and, when there is one, the cause.
func (e *Error) Unwrap() []error {
	if e.cause == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.cause}
}

// Hint says what to do about it.
func (e *Error) Hint() string { return e.hint }

// excerpt is at most n bytes of server-provided text on one line, with
// every secret replaced, for an error message.
func excerpt(s string, n int, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 { // shorter values are no secret, and would garble the text
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

package memstore

import (
	"errors"
	"strings"
)

// Sentinel errors. Every error returned by Store wraps one of them, so callers
// can branch with errors.Is while showing Error() to the model unchanged.
var (
	// ErrNotFound reports a path, commit or item that does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists reports a create or rename onto a path that already exists.
	ErrExists = errors.New("already exists")
	// ErrConflict reports an expected content hash that no longer matches.
	ErrConflict = errors.New("conflict")
	// ErrRejected reports content or a path refused by the write gate.
	ErrRejected = errors.New("rejected")
	// ErrInvalid reports an argument that is malformed or out of range.
	ErrInvalid = errors.New("invalid argument")
	// ErrDenied reports an access the principal may not make; the error
	// also wraps the *access.DeniedError, which says the role needed.
	ErrDenied = errors.New("access denied")
	// ErrUnavailable reports a service the operation needs that cannot be
	// reached right now (the memory's git remote), or a disk the memory
	// cannot write to (full); nothing was changed.
	ErrUnavailable = errors.New("unavailable")
)

// Error is a failed Store operation. Msg is the text meant for the caller
// (for memory commands, the wording of Anthropic's memory tool); Hint, when
// set, says what to do next.
type Error struct {
	Kind error  // one of the sentinels above
	Msg  string // what went wrong, safe to show to a model
	Hint string // what to do about it; may be empty
	Err  error  // underlying cause, if any
}

func (e *Error) Error() string {
	if e.Hint == "" {
		return e.Msg
	}
	if strings.HasSuffix(e.Msg, ".") || strings.HasSuffix(e.Msg, "?") {
		return e.Msg + " " + e.Hint
	}
	return e.Msg + ". " + e.Hint
}

// Unwrap lets errors.Is match both the sentinel and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

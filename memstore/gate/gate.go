package gate

import (
	"errors"
	"fmt"
)

// Rule names, the values of [Rejection].Rule.
const (
	RulePath        = "path"         // the virtual path is refused
	RuleExtension   = "extension"    // the file extension is not allowed
	RuleSize        = "size"         // the content is too large
	RuleEncoding    = "encoding"     // the content is not valid UTF-8 text
	RuleSecret      = "secret"       // the content holds a credential
	RuleTranscript  = "transcript"   // the content looks like a transcript or tool log
	RuleRawData     = "raw_data"     // the content is rows of data rather than what they mean
	RuleFrontMatter = "front_matter" // the markdown front matter is invalid
	RuleSyntax      = "syntax"       // a .yaml, .yml or .json file does not parse
)

// Default limits.
const (
	DefaultMaxFileBytes      = 256 << 10
	DefaultMaxWorkspaceBytes = 8 << 20
	DefaultMaxDepth          = 8
	DefaultMaxNameBytes      = 128
)

// maxNameBytesCeiling is the longest file name common file systems store.
const maxNameBytesCeiling = 255

// Limits bound what a write may contain. The functions of this package
// treat a field that is zero or negative as its default, so the zero Limits
// is usable; configuration should still be checked with [Limits.Validate].
type Limits struct {
	MaxFileBytes      int64 // per file, default 256 KiB
	MaxWorkspaceBytes int64 // per workspace total, default 8 MiB (checked by the store, which knows the totals)
	MaxDepth          int   // path elements below /memories, default 8
	MaxNameBytes      int   // bytes per path element, default 128
}

// DefaultLimits returns the default limits: 256 KiB per file, 8 MiB per
// workspace, 8 path elements of at most 128 bytes each.
func DefaultLimits() Limits {
	return Limits{
		MaxFileBytes:      DefaultMaxFileBytes,
		MaxWorkspaceBytes: DefaultMaxWorkspaceBytes,
		MaxDepth:          DefaultMaxDepth,
		MaxNameBytes:      DefaultMaxNameBytes,
	}
}

// Validate reports the first field of l that is out of range, naming it as
// it is spelled in configuration, e.g. "limits.max_file_bytes must be > 0".
func (l Limits) Validate() error {
	switch {
	case l.MaxFileBytes <= 0:
		return errors.New("limits.max_file_bytes must be > 0")
	case l.MaxWorkspaceBytes <= 0:
		return errors.New("limits.max_workspace_bytes must be > 0")
	case l.MaxFileBytes > l.MaxWorkspaceBytes:
		return fmt.Errorf("limits.max_file_bytes (%d) must be <= limits.max_workspace_bytes (%d)", l.MaxFileBytes, l.MaxWorkspaceBytes)
	case l.MaxDepth <= 0:
		return errors.New("limits.max_depth must be > 0")
	case l.MaxNameBytes <= 0:
		return errors.New("limits.max_name_bytes must be > 0")
	case l.MaxNameBytes > maxNameBytesCeiling:
		return fmt.Errorf("limits.max_name_bytes must be <= %d", maxNameBytesCeiling)
	}
	return nil
}

// withDefaults replaces non-positive fields by their defaults.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = d.MaxFileBytes
	}
	if l.MaxWorkspaceBytes <= 0 {
		l.MaxWorkspaceBytes = d.MaxWorkspaceBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxNameBytes <= 0 {
		l.MaxNameBytes = d.MaxNameBytes
	}
	return l
}

// Rejection is a refused write. Its Error text is shown to an AI model: it
// says what was wrong and what to do, and never contains the secret or the
// offending bytes.
type Rejection struct {
	Rule string // one of the Rule constants: "path", "extension", "size", "encoding", "secret", "transcript", "front_matter", "syntax"
	Line int    // 1-based line in the content, 0 when not line-specific
	Msg  string // what was wrong
	Hint string // what to do next
}

// Error returns Msg and Hint separated by a space, or Msg alone when Hint is
// empty.
func (r *Rejection) Error() string {
	if r.Hint == "" {
		return r.Msg
	}
	return r.Msg + " " + r.Hint
}

func reject(rule string, line int, msg, hint string) *Rejection {
	return &Rejection{Rule: rule, Line: line, Msg: msg, Hint: hint}
}

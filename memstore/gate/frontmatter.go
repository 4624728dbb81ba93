package gate

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Sources are the allowed values of the front matter field source, from the
// strongest evidence to the weakest.
var Sources = []string{"user_confirmed", "repeated_user_signal", "trusted_tool_result", "inferred"}

// FrontMatter is the optional YAML header of a markdown memory file, between
// a first line "---" and the next "---" line.
type FrontMatter struct {
	Present      bool           // the file has a header (possibly empty)
	Type         string         // the kind of item, e.g. "task_rule"; free text
	Source       string         // user_confirmed | repeated_user_signal | trusted_tool_result | inferred, or ""
	Confidence   *float64       // in [0,1]; nil when absent
	ValidFrom    time.Time      // zero when absent; UTC
	InvalidAt    time.Time      // zero when absent; UTC; not before ValidFrom
	ExpiresAt    time.Time      // zero when absent; UTC
	SupersededBy string         // path of the item that replaces this one
	Extra        map[string]any // other keys, as yaml.v3 decodes them; nil when there are none
}

const fmHint = "Fix the header between the --- lines; a valid one holds lines such as `type: task_rule`, `source: user_confirmed`, `confidence: 0.9`, `valid_from: 2026-01-02`."

// ParseFrontMatter splits markdown content into its front matter and body.
// body is the content after the closing "---" line; bodyLine is the 1-based
// line number where body starts (1 when there is no front matter). A header
// opens only with a first line "---" (trailing spaces and CR allowed).
//
// It refuses, with a [*Rejection] of Rule "front_matter" naming the field and
// the line: a header that is unterminated, does not parse, is not a mapping,
// repeats a key or uses a merge key (<<); a source outside [Sources]; a
// confidence that is not a number in [0,1]; valid_from, invalid_at or
// expires_at that are neither a YAML timestamp nor an RFC 3339 string (a bare
// date 2026-01-02 is midnight UTC); type, source or superseded_by that are not
// scalars; invalid_at before valid_from. Unknown keys are kept in Extra.
func ParseFrontMatter(content []byte) (fm FrontMatter, body []byte, bodyLine int, err error) {
	first, rest, _ := cutLine(content)
	if !isFence(first) {
		return FrontMatter{}, content, 1, nil
	}
	headerStart := len(content) - len(rest)
	line := 1
	for {
		if len(rest) == 0 {
			return FrontMatter{}, content, 1, reject(RuleFrontMatter, 1,
				"The front matter opened by --- on line 1 is not closed.",
				"End the header with a line holding only ---, or remove the first line if the file has no header.")
		}
		lineStart := len(content) - len(rest)
		var l []byte
		l, rest, _ = cutLine(rest)
		line++
		if isFence(l) {
			header := content[headerStart:lineStart]
			fm, err = parseHeader(header)
			if err != nil {
				return FrontMatter{}, content, 1, err
			}
			return fm, content[len(content)-len(rest):], line + 1, nil
		}
	}
}

// cutLine splits b after its first newline; line excludes the newline.
func cutLine(b []byte) (line, rest []byte, found bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil, false
	}
	return b[:i], b[i+1:], true
}

func isFence(l []byte) bool {
	return string(bytes.TrimRight(l, " \t\r")) == "---"
}

var reYAMLLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func fmReject(line int, msg string) *Rejection {
	return reject(RuleFrontMatter, line, msg, fmHint)
}

// parseHeader parses the YAML between the fences; header line 1 is file
// line 2.
func parseHeader(header []byte) (FrontMatter, error) {
	fm := FrontMatter{Present: true}
	var doc yaml.Node
	if err := yaml.Unmarshal(header, &doc); err != nil {
		line, why := 0, "it is not valid YAML"
		if m := reYAMLLine.FindStringSubmatch(err.Error()); m != nil {
			n, _ := strconv.Atoi(m[1])
			line, why = n+1, "it is not valid YAML ("+sanitizeReason(m[2])+")"
		}
		if line > 0 {
			return fm, fmReject(line, fmt.Sprintf("The front matter does not parse at line %d: %s.", line, why))
		}
		return fm, fmReject(2, "The front matter does not parse: "+why+".")
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return fm, nil // empty header
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return fm, nil
	}
	if root.Kind != yaml.MappingNode {
		return fm, fmReject(root.Line+1, fmt.Sprintf("The front matter at line %d is not a mapping of fields to values.", root.Line+1))
	}
	seen := map[string]bool{}
	var validLine, invalidLine int
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		line := k.Line + 1
		if k.Kind != yaml.ScalarNode {
			return fm, fmReject(line, fmt.Sprintf("The front matter at line %d has a key that is not a plain name.", line))
		}
		name := k.Value
		if k.Tag == "!!merge" || name == "<<" {
			return fm, fmReject(line, fmt.Sprintf("The front matter at line %d uses a YAML merge key (<<), which memory headers do not support.", line))
		}
		field := name
		if !isSafeFieldName(field) {
			field = "a field"
		}
		if seen[name] {
			return fm, fmReject(line, fmt.Sprintf("The front matter field %s appears twice (again at line %d).", field, line))
		}
		seen[name] = true
		vline := v.Line + 1
		bad := func(what string) error {
			return fmReject(vline, fmt.Sprintf("The front matter field %s (line %d) %s.", field, vline, what))
		}
		isNull := v.Kind == yaml.ScalarNode && v.Tag == "!!null"
		switch name {
		case "type", "superseded_by", "source":
			if isNull {
				continue
			}
			if v.Kind != yaml.ScalarNode {
				return fm, bad("must be a single value")
			}
			switch name {
			case "type":
				fm.Type = v.Value
			case "superseded_by":
				fm.SupersededBy = v.Value
			case "source":
				if !isSource(v.Value) {
					return fm, bad("must be one of " + strings.Join(Sources, ", "))
				}
				fm.Source = v.Value
			}
		case "confidence":
			if isNull {
				continue
			}
			f, err := strconv.ParseFloat(v.Value, 64)
			if v.Kind != yaml.ScalarNode || (v.Tag != "!!float" && v.Tag != "!!int") || err != nil || math.IsNaN(f) || f < 0 || f > 1 {
				return fm, bad("must be a number between 0 and 1")
			}
			fm.Confidence = &f
		case "valid_from", "invalid_at", "expires_at":
			if isNull {
				continue
			}
			t, ok := parseTime(v)
			if !ok {
				return fm, bad("must be an RFC 3339 time such as 2026-01-02T15:04:05Z or a date such as 2026-01-02")
			}
			switch name {
			case "valid_from":
				fm.ValidFrom, validLine = t, vline
			case "invalid_at":
				fm.InvalidAt, invalidLine = t, vline
			case "expires_at":
				fm.ExpiresAt = t
			}
		default:
			var x any
			if err := v.Decode(&x); err != nil {
				return fm, bad("does not decode")
			}
			if fm.Extra == nil {
				fm.Extra = map[string]any{}
			}
			fm.Extra[name] = x
		}
	}
	if !fm.ValidFrom.IsZero() && !fm.InvalidAt.IsZero() && fm.InvalidAt.Before(fm.ValidFrom) {
		return fm, fmReject(invalidLine, fmt.Sprintf("The front matter field invalid_at (line %d) is before valid_from (line %d).", invalidLine, validLine))
	}
	return fm, nil
}

func isSource(s string) bool {
	for _, x := range Sources {
		if s == x {
			return true
		}
	}
	return false
}

// parseTime accepts a YAML timestamp, an RFC 3339 string, or a date.
func parseTime(v *yaml.Node) (time.Time, bool) {
	if v.Kind != yaml.ScalarNode {
		return time.Time{}, false
	}
	switch v.Tag {
	case "!!timestamp":
		var t time.Time
		if err := v.Decode(&t); err != nil {
			return time.Time{}, false
		}
		return t.UTC(), true
	case "!!str":
		for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
			if t, err := time.Parse(layout, v.Value); err == nil {
				return t.UTC(), true
			}
		}
	}
	return time.Time{}, false
}

// sanitizeReason drops quoted fragments of a YAML error, which may repeat
// content.
func sanitizeReason(s string) string {
	for _, q := range []string{"`", "'", `"`} {
		for {
			i := strings.Index(s, q)
			if i < 0 {
				break
			}
			j := strings.Index(s[i+1:], q)
			if j < 0 {
				s = s[:i]
				break
			}
			s = s[:i] + s[i+1+j+1:]
		}
	}
	return strings.Join(strings.Fields(s), " ")
}

package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/internal/textcut"
)

// ignoredArgs are arguments every tool accepts and ignores: `command` is the
// discriminator of Anthropic's memory tool, so an app can forward a
// memory-tool call's input unchanged.
var ignoredArgs = []string{"command"}

// argSchema is what the argument binder needs from a tool's input schema.
type argSchema struct {
	tool       string
	properties map[string]map[string]any
	required   []string
}

func parseArgSchema(t mcp.Tool) argSchema {
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	raw := t.RawInputSchema
	if len(raw) == 0 {
		raw, _ = json.Marshal(t.InputSchema)
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		panic(fmt.Sprintf("tools: %s: input schema: %v", t.Name, err))
	}
	return argSchema{tool: t.Name, properties: s.Properties, required: s.Required}
}

// typed makes a tool handler that binds the call's arguments to A — after
// checking for unknown, missing and mistyped arguments, with messages the
// model can act on — and runs fn. A null argument counts as absent.
func typed[A any](t mcp.Tool, fn func(ctx context.Context, args A) *mcp.CallToolResult) server.ServerTool {
	return typedRequest(t, func(ctx context.Context, _ mcp.CallToolRequest, args A) *mcp.CallToolResult {
		return fn(ctx, args)
	})
}

// typedRequest is typed for handlers that also need the request itself,
// e.g. its progress token.
// Every tool's schema is made portable here (see lean).
func typedRequest[A any](t mcp.Tool, fn func(ctx context.Context, req mcp.CallToolRequest, args A) *mcp.CallToolResult) server.ServerTool {
	t = lean(t)
	schema := parseArgSchema(t)
	return server.ServerTool{Tool: t, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args A
		if msg := schema.bind(req, &args); msg != "" {
			return cutError(mcp.NewToolResultError(msg)), nil
		}
		return cutError(fn(ctx, req, args)), nil
	}}
}

// maxErrorText is the longest error text a tool returns. Errors quote
// the arguments they refuse, and an argument can be megabytes long.
const maxErrorText = 2000

// cutError cuts each text of an error result to maxErrorText bytes.
func cutError(res *mcp.CallToolResult) *mcp.CallToolResult {
	if res == nil || !res.IsError {
		return res
	}
	for i, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok && len(tc.Text) > maxErrorText {
			tc.Text = textcut.Prefix(tc.Text, maxErrorText) + " … (cut: the message quoted a long argument)"
			res.Content[i] = tc
		}
	}
	return res
}

// splitPath splits "a.b.c" into its parents [a b] and its last name c.
func splitPath(name string) (parents []string, last string) {
	parts := strings.Split(name, ".")
	return parts[:len(parts)-1], parts[len(parts)-1]
}

// bind decodes the call's arguments into target; it returns "" or an error
// text for the model.
func (s argSchema) bind(req mcp.CallToolRequest, target any) string {
	var data []byte
	switch raw := req.GetRawArguments().(type) {
	case json.RawMessage:
		data = raw
	case nil:
		data = []byte("{}")
	default:
		var err error
		if data, err = json.Marshal(raw); err != nil {
			return "Error: the arguments could not be read as JSON. Send an object of named arguments."
		}
	}
	if t := bytes.TrimSpace(data); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		data = []byte("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return fmt.Sprintf("Error: the arguments of %s must be a JSON object of named arguments (%s).", s.tool, s.paramList())
	}
	for k, v := range fields {
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			delete(fields, k)
		}
	}
	var unknown []string
	for k := range fields {
		if _, ok := s.properties[k]; !ok {
			if slices.Contains(ignoredArgs, k) {
				delete(fields, k)
				continue
			}
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Sprintf("Error: %s does not take the argument(s) %s. Its arguments are: %s.",
			s.tool, quoteList(unknown), s.paramList())
	}
	var missing []string
	for _, k := range s.required {
		if _, ok := fields[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("Error: missing required argument(s) %s for %s. Its arguments are: %s.",
			quoteList(missing), s.tool, s.paramList())
	}
	for k, v := range fields {
		if msg := s.checkType(k, v); msg != "" {
			return msg
		}
	}
	clean, err := json.Marshal(fields)
	if err == nil {
		err = json.Unmarshal(clean, target)
	}
	if err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			name, _, _ := strings.Cut(te.Field, ".")
			return fmt.Sprintf("Error: %s must be %s, not %s.", name, describe(s.properties[name]), te.Value)
		}
		return fmt.Sprintf("Error: the arguments of %s could not be read: %v.", s.tool, err)
	}
	return ""
}

// checkType compares a JSON value with the type its schema property
// declares, so a wrong type is named by argument rather than by Go field.
func (s argSchema) checkType(name string, v json.RawMessage) string {
	return checkValue(s.tool, name, s.properties[name], v)
}

// checkValue checks v against prop; for an object with declared
// properties it checks the fields too, naming them as arg.field.
func checkValue(tool, name string, prop map[string]any, v json.RawMessage) string {
	if !matches(prop, v) {
		return fmt.Sprintf("Error: %s must be %s, not %s.", name, describe(prop), jsonKind(v))
	}
	if jsonKind(v) != "an object" {
		return ""
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(v, &fields) != nil {
		return ""
	}
	props, ok := prop["properties"].(map[string]any)
	if !ok {
		// A map: every value must match additionalProperties.
		if ap, ok := prop["additionalProperties"].(map[string]any); ok {
			for _, k := range slices.Sorted(maps.Keys(fields)) {
				if !matches(ap, fields[k]) {
					return fmt.Sprintf("Error: %s.%s must be %s, not %s.", name, k, describe(ap), jsonKind(fields[k]))
				}
			}
		}
		return ""
	}
	sub := argSchema{tool: tool, properties: map[string]map[string]any{}}
	for k, p := range props {
		sub.properties[k], _ = p.(map[string]any)
	}
	if req, ok := prop["required"].([]any); ok {
		for _, r := range req {
			if r, ok := r.(string); ok {
				sub.required = append(sub.required, r)
			}
		}
	}
	var unknown, missing []string
	for k, fv := range fields {
		if bytes.Equal(bytes.TrimSpace(fv), []byte("null")) {
			delete(fields, k)
		} else if _, ok := sub.properties[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Sprintf("Error: %s does not take the field(s) %s. Its fields are: %s.", name, quoteList(unknown), sub.paramList())
	}
	for _, k := range sub.required {
		if _, ok := fields[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("Error: %s is missing the required field(s) %s. Its fields are: %s.", name, quoteList(missing), sub.paramList())
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if msg := checkValue(tool, name+"."+k, sub.properties[k], fields[k]); msg != "" {
			return msg
		}
	}
	return ""
}

func types(prop map[string]any) []string {
	switch t := prop["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func matches(prop map[string]any, v json.RawMessage) bool {
	ts := types(prop)
	if len(ts) == 0 {
		return true
	}
	for _, t := range ts {
		switch t {
		case "string", "boolean", "object":
			if jsonKind(v) == map[string]string{"string": "a string", "boolean": "true or false", "object": "an object"}[t] {
				return true
			}
		case "number":
			if jsonKind(v) == "a number" || jsonKind(v) == "an integer" {
				return true
			}
		case "integer":
			if jsonKind(v) == "an integer" {
				return true
			}
		case "array":
			var items []json.RawMessage
			if json.Unmarshal(v, &items) != nil || jsonKind(v) != "a list" {
				continue
			}
			sub, _ := prop["items"].(map[string]any)
			ok := true
			for _, it := range items {
				ok = ok && matches(sub, it)
			}
			if ok {
				return true
			}
		}
	}
	return false
}

// jsonKind names the kind of a JSON value the way describe names types.
func jsonKind(v json.RawMessage) string {
	t := bytes.TrimSpace(v)
	if len(t) == 0 {
		return "empty"
	}
	switch t[0] {
	case '"':
		return "a string"
	case 't', 'f':
		return "true or false"
	case '[':
		return "a list"
	case '{':
		return "an object"
	case 'n':
		return "null"
	}
	var n json.Number
	if json.Unmarshal(t, &n) == nil {
		if _, err := n.Int64(); err == nil {
			return "an integer"
		}
		return "a number"
	}
	return "not valid JSON"
}

// describe names what a schema property accepts, for error messages.
func describe(prop map[string]any) string {
	ts := types(prop)
	if len(ts) != 1 {
		return "a valid value"
	}
	switch ts[0] {
	case "string":
		if enum, ok := prop["enum"].([]any); ok {
			var vs []string
			for _, e := range enum {
				vs = append(vs, fmt.Sprint(e))
			}
			return "one of " + strings.Join(vs, ", ")
		}
		return "a string"
	case "integer":
		return "an integer"
	case "number":
		return "a number"
	case "boolean":
		return "true or false"
	case "array":
		sub, _ := prop["items"].(map[string]any)
		switch describe(sub) {
		case "an integer":
			return "a list of integers"
		case "a string":
			return "a list of strings"
		}
		return "a list"
	}
	return "an object"
}

func (s argSchema) paramList() string {
	names := make([]string, 0, len(s.properties))
	for k := range s.properties {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		ri, rj := slices.Contains(s.required, names[i]), slices.Contains(s.required, names[j])
		if ri != rj {
			return ri
		}
		return names[i] < names[j]
	})
	for i, n := range names {
		if slices.Contains(s.required, n) {
			names[i] = n + " (required)"
		}
	}
	return strings.Join(names, ", ")
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// withSchema merges JSON Schema keywords (minimum, default, enum, …) into
// properties of the input schema generated from the argument type's tags;
// tags carry descriptions only.
func withSchema(props map[string]map[string]any) mcp.ToolOption {
	return func(t *mcp.Tool) {
		var s map[string]any
		if err := json.Unmarshal(t.RawInputSchema, &s); err != nil {
			panic(fmt.Sprintf("tools: %s: input schema: %v", t.Name, err))
		}
		ps, _ := s["properties"].(map[string]any)
		for name, kw := range props {
			// "a.b" is property b of the object property a.
			m := ps
			parents, last := splitPath(name)
			for _, parent := range parents {
				pp, _ := m[parent].(map[string]any)
				m, _ = pp["properties"].(map[string]any)
			}
			p, ok := m[last].(map[string]any)
			if !ok {
				panic(fmt.Sprintf("tools: %s: no property %q", t.Name, name))
			}
			for k, v := range kw {
				p[k] = v
			}
		}
		raw, err := json.Marshal(s)
		if err != nil {
			panic(err)
		}
		t.RawInputSchema = raw
	}
}

package tools

import (
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
)

// lean makes a tool's input schema portable: a `type` array such as
// ["null", "number"], which the schema generator writes for pointers and
// slices, becomes its one non-null type. A null argument counts as absent
// (see bind), so the plain type is exact, and many hosts map tool schemas
// onto a single-type dialect that rejects unions or drops the constraint.
//
// Tools declare no output schema: their structuredContent is documented by
// the Go output types (ViewOutput, WriteOutput, …), while an output schema
// would be sent in every tools/list, which costs every session's context
// and which hosts do not show the model; the model reads the text result.
func lean(t mcp.Tool) mcp.Tool {
	if len(t.RawInputSchema) == 0 {
		return t
	}
	var s map[string]any
	if err := json.Unmarshal(t.RawInputSchema, &s); err != nil {
		panic(fmt.Sprintf("tools: %s: input schema: %v", t.Name, err))
	}
	portable(s)
	raw, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	t.RawInputSchema = raw
	return t
}

// portable rewrites one schema node and its subschemas in place.
func portable(s map[string]any) {
	if ts, ok := s["type"].([]any); ok {
		var kept []any
		for _, x := range ts {
			if x != "null" {
				kept = append(kept, x)
			}
		}
		if len(kept) == 1 {
			s["type"] = kept[0]
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if sub, ok := s[k].(map[string]any); ok {
			portable(sub)
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for _, sub := range props {
			if sub, ok := sub.(map[string]any); ok {
				portable(sub)
			}
		}
	}
}

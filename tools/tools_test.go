package tools_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/selmem/selmem/tools"
)

var update = flag.Bool("update", false, "rewrite tool snapshots and the README tool table")

// snapshot renders a tool as JSON with sorted keys.
func snapshot(t *testing.T, tool mcp.Tool) []byte {
	t.Helper()
	raw, err := json.Marshal(tool)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

func TestTools_Snapshots(t *testing.T) {
	for _, st := range tools.Tools(nil, everyTool) {
		t.Run(st.Tool.Name, func(t *testing.T) {
			got := snapshot(t, st.Tool)
			file := filepath.Join("testdata", "toolsnaps", st.Tool.Name+".json")
			want, err := os.ReadFile(file)
			switch {
			case *update || (os.IsNotExist(err) && os.Getenv("CI") != "true"):
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
				if !*update {
					t.Logf("wrote missing snapshot %s", file)
				}
				return
			case err != nil:
				t.Fatalf("read snapshot: %v (run go test ./tools -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("tool %s changed; if intended, run go test ./tools -update and review the diff\ngot:\n%s", st.Tool.Name, got)
			}
		})
	}
	// No snapshot without a tool.
	files, _ := filepath.Glob(filepath.Join("testdata", "toolsnaps", "*.json"))
	names := map[string]bool{}
	for _, st := range tools.Tools(nil, everyTool) {
		names[st.Tool.Name] = true
	}
	for _, f := range files {
		if n := strings.TrimSuffix(filepath.Base(f), ".json"); !names[n] {
			t.Errorf("snapshot %s has no tool; delete it", f)
		}
	}
}

func TestTools_Registry(t *testing.T) {
	wantRequired := map[string][]string{
		tools.NameView:              {"path"},
		tools.NameCreate:            {"path", "file_text"},
		tools.NameStrReplace:        {"path", "old_str", "new_str"},
		tools.NameInsert:            {"path", "insert_line", "insert_text"},
		tools.NameDelete:            {"path"},
		tools.NameRename:            {"old_path", "new_path"},
		tools.NameSearch:            {"query"},
		tools.NameHistory:           nil,
		tools.NameRevert:            {"path", "commit"},
		tools.NameProfileSource:     {"workspace", "name", "source"},
		tools.NameRefreshArtifact:   {"workspace", "artifact"},
		tools.NameQueryArtifactData: {"workspace", "artifact", "sql"},
		tools.NameShowArtifact:      {"workspace", "artifact"},
		tools.NamePublishTemplate:   {"workspace", "version"},
		tools.NameLoadTemplate:      {"template", "new_workspace"},
		tools.NameDraftOpen:         {"workspace"},
		tools.NamePublish:           {"workspace", "message"},
		tools.NameDraftDiscard:      {"workspace"},
		tools.NameProposals:         {"workspace"},
		tools.NameProposalApprove:   {"workspace", "id"},
		tools.NameProposalReject:    {"workspace", "id"},
	}
	type hints struct{ readOnly, destructive, idempotent bool }
	wantHints := map[string]hints{
		tools.NameView:              {true, false, true},
		tools.NameCreate:            {false, false, true},
		tools.NameStrReplace:        {false, true, false},
		tools.NameInsert:            {false, false, false},
		tools.NameDelete:            {false, true, true},
		tools.NameRename:            {false, false, true},
		tools.NameSearch:            {true, false, true},
		tools.NameHistory:           {true, false, true},
		tools.NameRevert:            {false, true, true},
		tools.NameProfileSource:     {false, false, true},
		tools.NameRefreshArtifact:   {false, false, true},
		tools.NameQueryArtifactData: {true, false, true},
		tools.NameShowArtifact:      {true, false, true},
		tools.NamePublishTemplate:   {false, false, true},
		tools.NameLoadTemplate:      {false, false, true},
		tools.NameDraftOpen:         {false, false, false},
		tools.NamePublish:           {false, true, false},
		tools.NameDraftDiscard:      {false, true, true},
		tools.NameProposals:         {true, false, true},
		tools.NameProposalApprove:   {false, true, true},
		tools.NameProposalReject:    {false, true, true},
	}
	// Only tools that read outside the memory are open-world.
	openWorld := map[string]bool{tools.NameProfileSource: true, tools.NameRefreshArtifact: true}
	seen := map[string]bool{}
	all := tools.Tools(nil, everyTool)
	if got, want := len(all), len(wantRequired); got != want {
		t.Errorf("%d tools, want %d", got, want)
	}
	for _, st := range all {
		tool := st.Tool
		if seen[tool.Name] {
			t.Errorf("duplicate tool name %s", tool.Name)
		}
		seen[tool.Name] = true
		if st.Handler == nil {
			t.Errorf("%s: no handler", tool.Name)
		}
		if len(tool.Description) < 40 {
			t.Errorf("%s: description too short: %q", tool.Name, tool.Description)
		}
		if tool.Title == "" || tool.Annotations.Title != "" {
			t.Errorf("%s: title %q, annotation title %q; want the title set and not repeated in the annotations", tool.Name, tool.Title, tool.Annotations.Title)
		}
		a := tool.Annotations
		if a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: every annotation hint must be set explicitly: %+v", tool.Name, a)
			continue
		}
		if got, want := (hints{*a.ReadOnlyHint, *a.DestructiveHint, *a.IdempotentHint}), wantHints[tool.Name]; got != want {
			t.Errorf("%s: hints (readOnly, destructive, idempotent) = %+v, want %+v", tool.Name, got, want)
		}
		if got, want := *a.OpenWorldHint, openWorld[tool.Name]; got != want {
			t.Errorf("%s: openWorldHint %v, want %v", tool.Name, got, want)
		}
		var schema struct {
			Type       string                    `json:"type"`
			Properties map[string]map[string]any `json:"properties"`
			Required   []string                  `json:"required"`
		}
		if err := json.Unmarshal(tool.RawInputSchema, &schema); err != nil {
			t.Fatalf("%s: input schema: %v", tool.Name, err)
		}
		if schema.Type != "object" || len(schema.Properties) == 0 {
			t.Errorf("%s: empty input schema: %s", tool.Name, tool.RawInputSchema)
		}
		for name, p := range schema.Properties {
			if d, _ := p["description"].(string); d == "" {
				t.Errorf("%s: argument %s has no description", tool.Name, name)
			}
		}
		if got, want := schema.Required, wantRequired[tool.Name]; !slices.Equal(got, want) {
			t.Errorf("%s: required %v, want %v", tool.Name, got, want)
		}
		// structuredContent is documented by the Go output types; an
		// output schema would cost every session's context (see lean).
		if tool.OutputSchema.Type != "" || tool.RawOutputSchema != nil {
			t.Errorf("%s: has an output schema", tool.Name)
		}
	}
}

// toolTable renders the README's tool table from the registry.
func toolTable() string {
	var b strings.Builder
	b.WriteString("| tool | what it does | arguments (* required) | hints |\n|---|---|---|---|\n")
	for _, st := range tools.Tools(nil, everyTool) {
		tool := st.Tool
		var schema struct {
			Properties map[string]any `json:"properties"`
			Required   []string       `json:"required"`
		}
		_ = json.Unmarshal(tool.RawInputSchema, &schema)
		var args []string
		for _, r := range schema.Required {
			args = append(args, "`"+r+"`*")
		}
		var opt []string
		for k := range schema.Properties {
			if !slices.Contains(schema.Required, k) {
				opt = append(opt, "`"+k+"`")
			}
		}
		slices.Sort(opt)
		args = append(args, opt...)
		var hints []string
		a := tool.Annotations
		if *a.ReadOnlyHint {
			hints = append(hints, "read-only")
		} else {
			hints = append(hints, "writes")
		}
		if *a.DestructiveHint {
			hints = append(hints, "destructive")
		}
		if *a.IdempotentHint {
			hints = append(hints, "idempotent")
		}
		desc, _, _ := strings.Cut(tool.Description, ". ")
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", tool.Name, strings.TrimSuffix(desc, ".")+".", strings.Join(args, ", "), strings.Join(hints, ", "))
	}
	return b.String()
}

const (
	beginMarker = "<!-- tools:begin -->"
	endMarker   = "<!-- tools:end -->"
)

func TestTools_ReadmeTable(t *testing.T) {
	file := filepath.Join("..", "README.md")
	readme, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	i, j := strings.Index(s, beginMarker), strings.Index(s, endMarker)
	if i < 0 || j < i {
		t.Fatalf("README.md has no %s … %s section", beginMarker, endMarker)
	}
	want := beginMarker + "\n" + toolTable() + endMarker
	if got := s[i : j+len(endMarker)]; got != want {
		if !*update {
			t.Fatalf("README.md's tool table is stale; run go test ./tools -run ReadmeTable -update\nwant:\n%s", want)
		}
		s = s[:i] + want + s[j+len(endMarker):]
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTools_Subset: the memory subset is exactly the six file commands of
// Anthropic's memory tool; all (or nothing) is every tool.
func TestTools_Subset(t *testing.T) {
	names := func(opts *tools.Options) []string {
		var out []string
		for _, st := range tools.Tools(nil, opts) {
			out = append(out, st.Tool.Name)
		}
		return out
	}
	want := []string{tools.NameView, tools.NameCreate, tools.NameStrReplace, tools.NameInsert, tools.NameDelete, tools.NameRename}
	if got := names(&tools.Options{Subset: tools.SubsetMemory}); !slices.Equal(got, want) {
		t.Errorf("memory subset: %v, want %v", got, want)
	}
	if all, def := names(&tools.Options{Subset: tools.SubsetAll}), names(nil); !slices.Equal(all, def) || len(all) <= len(want) {
		t.Errorf("subset all: %v; default: %v", all, def)
	}
}

// everyTool serves every tool, the sharing ones included.
var everyTool = &tools.Options{Shared: true}

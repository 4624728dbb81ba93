package tools

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/memstore"
)

// Tool names: the contract with clients.
const (
	NameView       = "memory_view"
	NameCreate     = "memory_create"
	NameStrReplace = "memory_str_replace"
	NameInsert     = "memory_insert"
	NameDelete     = "memory_delete"
	NameRename     = "memory_rename"
	NameSearch     = "memory_search"
	NameHistory    = "memory_history"
	NameRevert     = "memory_revert"
)

// Provenance is the optional provenance every write accepts.
type Provenance struct {
	Source     string   `json:"source,omitempty" jsonschema:"How the content is known: user_confirmed (the user said or approved it), repeated_user_signal, trusted_tool_result or inferred (your own conclusion). Recorded in the commit."`
	Confidence *float64 `json:"confidence,omitempty" jsonschema:"Confidence in the content, between 0 and 1. Recorded in the commit."`
}

// Precondition is the optimistic-concurrency check of an edit.
type Precondition struct {
	ExpectedSHA string `json:"expected_sha,omitempty" jsonschema:"When set, the write happens only if the file's current sha (from memory_view or a previous write) still equals it; otherwise nothing is written and you should view the file again."`
}

// ViewArgs are memory_view's arguments.
type ViewArgs struct {
	Path      string `json:"path" jsonschema:"Path of the file or directory, under /memories (e.g. /memories or /memories/workspaces/sales/task.md)."`
	ViewRange []int  `json:"view_range,omitempty" jsonschema:"Optional [start, end] line range of a file, 1-indexed and inclusive; end -1 means the end of the file."`
}

// ViewOutput is memory_view's structured output.
type ViewOutput struct {
	SHA string `json:"sha" jsonschema:"The viewed file's sha, to pass as expected_sha to an edit; empty for a directory."`
}

// CreateArgs are memory_create's arguments.
type CreateArgs struct {
	Path     string `json:"path" jsonschema:"Path of the new file under /memories; it must not exist yet."`
	FileText string `json:"file_text" jsonschema:"Content of the new file."`
	Provenance
	Precondition
}

// StrReplaceArgs are memory_str_replace's arguments.
type StrReplaceArgs struct {
	Path   string `json:"path" jsonschema:"Path of the file to edit, under /memories."`
	OldStr string `json:"old_str" jsonschema:"Text to replace; it must occur exactly once in the file, verbatim."`
	NewStr string `json:"new_str" jsonschema:"Replacement text; empty deletes old_str."`
	Provenance
	Precondition
}

// InsertArgs are memory_insert's arguments.
type InsertArgs struct {
	Path       string `json:"path" jsonschema:"Path of the file to edit, under /memories."`
	InsertLine int    `json:"insert_line" jsonschema:"Line after which to insert; 0 inserts at the top of the file."`
	InsertText string `json:"insert_text" jsonschema:"Text to insert, one or more lines."`
	Provenance
	Precondition
}

// DeleteArgs are memory_delete's arguments.
type DeleteArgs struct {
	Path string `json:"path" jsonschema:"Path of the file or directory to delete, under /memories. History keeps it: memory_revert brings it back."`
	Provenance
	Precondition
}

// RenameArgs are memory_rename's arguments.
type RenameArgs struct {
	OldPath string `json:"old_path" jsonschema:"Current path of the file or directory, under /memories."`
	NewPath string `json:"new_path" jsonschema:"New path under /memories; it must not exist yet."`
	Provenance
	Precondition
}

// WriteOutput is the structured output of every write.
type WriteOutput struct {
	Commit string `json:"commit" jsonschema:"The commit that recorded the write."`
	SHA    string `json:"sha" jsonschema:"The written file's new sha (pass it as expected_sha to a later edit); empty for deletes and directories."`
}

func (p Provenance) options(ctx context.Context, h *handlers, tool string, pre Precondition) *memstore.WriteOptions {
	src := p.Source
	if src == "" {
		src = h.opts.DefaultSource
	}
	return &memstore.WriteOptions{Tool: tool, Source: src, Confidence: p.Confidence, Author: h.author(ctx), ExpectedSHA: pre.ExpectedSHA}
}

func (h *handlers) memoryTools() []server.ServerTool {
	return []server.ServerTool{
		typed(mcp.NewTool(NameView,
			mcp.WithToolTitle("View memory"),
			mcp.WithDescription("Show a memory file with line numbers, or list a directory two levels deep. "+
				"Start every task by viewing /memories (or reading the workspace's context resource) to load what earlier sessions learned. "+
				"Same parameters and result text as the view command of Anthropic's memory tool."),
			mcp.WithInputSchema[ViewArgs](),
			withSchema(map[string]map[string]any{
				"view_range": {"minItems": 2, "maxItems": 2},
			}),
			mcp.WithOutputSchema[ViewOutput](),
			annotations("View memory", true, false, true),
		), h.view),
		typed(mcp.NewTool(NameCreate,
			mcp.WithToolTitle("Create memory file"),
			mcp.WithDescription("Create a new memory file; it never overwrites an existing one. "+
				"Store reusable context only — task specifications, data schemas, tool configurations, output constraints, one rule per bullet — "+
				"never transcripts, tool logs, reasoning, scratch work, secrets or raw data (the write gate refuses them). "+
				"Same parameters and result text as the create command of Anthropic's memory tool."),
			mcp.WithInputSchema[CreateArgs](),
			withSchema(provenanceKeywords()),
			mcp.WithOutputSchema[WriteOutput](),
			// A second identical call is refused (the file exists) and
			// changes nothing, hence idempotent.
			annotations("Create memory file", false, false, true),
		), h.create),
		typed(mcp.NewTool(NameStrReplace,
			mcp.WithToolTitle("Replace text in memory"),
			mcp.WithDescription("Replace the only occurrence of old_str with new_str in a memory file. "+
				"Same parameters and result text as the str_replace command of Anthropic's memory tool."),
			mcp.WithInputSchema[StrReplaceArgs](),
			withSchema(provenanceKeywords()),
			mcp.WithOutputSchema[WriteOutput](),
			// Replacing text is not additive (destructive in MCP's sense,
			// though git keeps the old text); repeating it may edit again.
			annotations("Replace text in memory", false, true, false),
		), h.strReplace),
		typed(mcp.NewTool(NameInsert,
			mcp.WithToolTitle("Insert lines into memory"),
			mcp.WithDescription("Insert text after a given line of a memory file (0 inserts at the top). "+
				"Same parameters and result text as the insert command of Anthropic's memory tool."),
			mcp.WithInputSchema[InsertArgs](),
			withSchema(mergeKeywords(provenanceKeywords(), map[string]map[string]any{
				"insert_line": {"minimum": 0},
			})),
			mcp.WithOutputSchema[WriteOutput](),
			annotations("Insert lines into memory", false, false, false),
		), h.insert),
		typed(mcp.NewTool(NameDelete,
			mcp.WithToolTitle("Delete memory"),
			mcp.WithDescription("Delete a memory file, or a directory and everything in it. "+
				"The history keeps it: memory_revert restores it. "+
				"Same parameters and result text as the delete command of Anthropic's memory tool."),
			mcp.WithInputSchema[DeleteArgs](),
			withSchema(provenanceKeywords()),
			mcp.WithOutputSchema[WriteOutput](),
			annotations("Delete memory", false, true, true),
		), h.delete),
		typed(mcp.NewTool(NameRename,
			mcp.WithToolTitle("Rename memory"),
			mcp.WithDescription("Rename or move a memory file or directory; it never overwrites the destination. "+
				"Same parameters and result text as the rename command of Anthropic's memory tool."),
			mcp.WithInputSchema[RenameArgs](),
			withSchema(provenanceKeywords()),
			mcp.WithOutputSchema[WriteOutput](),
			annotations("Rename memory", false, false, true),
		), h.rename),
	}
}

func provenanceKeywords() map[string]map[string]any {
	return map[string]map[string]any{
		"source":     {"enum": []string{memstore.SourceUserConfirmed, memstore.SourceRepeatedUserSignal, memstore.SourceTrustedToolResult, memstore.SourceInferred}},
		"confidence": {"minimum": 0, "maximum": 1},
	}
}

func mergeKeywords(ms ...map[string]map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func (h *handlers) view(ctx context.Context, a ViewArgs) *mcp.CallToolResult {
	out, err := h.store.View(ctx, a.Path, a.ViewRange)
	if err != nil {
		return h.fail(NameView, err)
	}
	var res ViewOutput
	if _, sha, err := h.store.Read(ctx, a.Path); err == nil {
		res.SHA = sha
	}
	return mcp.NewToolResultStructured(res, out)
}

func (h *handlers) written(tool string, r memstore.WriteResult, err error, paths ...string) *mcp.CallToolResult {
	if err != nil {
		return h.fail(tool, err)
	}
	if r.Pending == "" { // a draft or a proposal changes nothing published
		h.changed(paths...)
	}
	return mcp.NewToolResultStructured(WriteOutput{Commit: r.Commit, SHA: r.SHA}, r.Message)
}

func (h *handlers) create(ctx context.Context, a CreateArgs) *mcp.CallToolResult {
	r, err := h.store.Create(ctx, a.Path, a.FileText, a.options(ctx, h, NameCreate, a.Precondition))
	return h.written(NameCreate, r, err, a.Path)
}

func (h *handlers) strReplace(ctx context.Context, a StrReplaceArgs) *mcp.CallToolResult {
	r, err := h.store.StrReplace(ctx, a.Path, a.OldStr, a.NewStr, a.options(ctx, h, NameStrReplace, a.Precondition))
	return h.written(NameStrReplace, r, err, a.Path)
}

func (h *handlers) insert(ctx context.Context, a InsertArgs) *mcp.CallToolResult {
	r, err := h.store.Insert(ctx, a.Path, a.InsertLine, a.InsertText, a.options(ctx, h, NameInsert, a.Precondition))
	return h.written(NameInsert, r, err, a.Path)
}

func (h *handlers) delete(ctx context.Context, a DeleteArgs) *mcp.CallToolResult {
	r, err := h.store.Delete(ctx, a.Path, a.options(ctx, h, NameDelete, a.Precondition))
	return h.written(NameDelete, r, err, a.Path)
}

func (h *handlers) rename(ctx context.Context, a RenameArgs) *mcp.CallToolResult {
	r, err := h.store.Rename(ctx, a.OldPath, a.NewPath, a.options(ctx, h, NameRename, a.Precondition))
	return h.written(NameRename, r, err, a.OldPath, a.NewPath)
}

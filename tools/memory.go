package tools

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
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

// Provenance is the optional provenance of a write that states content,
// recorded in the commit. Deletes, renames and reverts state none and take
// none: they record the transport's default (Options.DefaultSource).
type Provenance struct {
	Source     string   `json:"source,omitempty" jsonschema:"How you know the content: user_confirmed if the user said or approved it, inferred if you concluded it."`
	Confidence *float64 `json:"confidence,omitempty" jsonschema:"How sure you are of the content, 0 to 1."`
}

// Precondition is the optimistic-concurrency check of an edit.
type Precondition struct {
	ExpectedSHA string `json:"expected_sha,omitempty" jsonschema:"Write only if the file's sha (from memory_view or your last write) is still this."`
}

// ViewArgs are memory_view's arguments.
type ViewArgs struct {
	Path      string `json:"path" jsonschema:"File or directory, e.g. /memories/workspaces/sales/task.md."`
	ViewRange []int  `json:"view_range,omitempty" jsonschema:"[start, end] lines of a file, 1-based; end -1 is the last line."`
}

// ViewOutput is memory_view's structured output.
type ViewOutput struct {
	SHA string `json:"sha" jsonschema:"The viewed file's sha, to pass as expected_sha to an edit; empty for a directory."`
}

// CreateArgs are memory_create's arguments.
type CreateArgs struct {
	Path     string `json:"path" jsonschema:"New file under /memories."`
	FileText string `json:"file_text" jsonschema:"Its content."`
	Provenance
}

// StrReplaceArgs are memory_str_replace's arguments.
type StrReplaceArgs struct {
	Path   string `json:"path" jsonschema:"File to edit."`
	OldStr string `json:"old_str" jsonschema:"Exact text that occurs once in the file."`
	NewStr string `json:"new_str" jsonschema:"Replacement; empty deletes old_str."`
	Provenance
	Precondition
}

// InsertArgs are memory_insert's arguments.
type InsertArgs struct {
	Path       string `json:"path" jsonschema:"File to edit."`
	InsertLine int    `json:"insert_line" jsonschema:"Line to insert after; 0 is the top."`
	InsertText string `json:"insert_text" jsonschema:"Lines to insert."`
	Provenance
	Precondition
}

// DeleteArgs are memory_delete's arguments.
type DeleteArgs struct {
	Path string `json:"path" jsonschema:"File or directory to delete."`
	Precondition
}

// RenameArgs are memory_rename's arguments.
type RenameArgs struct {
	OldPath string `json:"old_path" jsonschema:"File or directory to move."`
	NewPath string `json:"new_path" jsonschema:"Its new path; must not exist."`
	Precondition
}

// WriteOutput is the structured output of every write.
type WriteOutput struct {
	Commit string `json:"commit" jsonschema:"The commit that recorded the write."`
	SHA    string `json:"sha" jsonschema:"The written file's new sha (pass it as expected_sha to a later edit); empty for deletes and directories."`
}

func (p Provenance) options(ctx context.Context, h *handlers, tool string, pre Precondition) *memstore.WriteOptions {
	src := p.Source
	if pr, ok := access.FromContext(ctx); src == "" && ok && pr.Kind == access.KindPerson {
		// An authenticated person's own host acts for them, as the local
		// user's does over stdio.
		src = memstore.SourceUserConfirmed
	}
	if src == "" {
		src = h.opts.DefaultSource
	}
	return &memstore.WriteOptions{Tool: tool, Source: src, Confidence: p.Confidence, Author: h.author(ctx), ExpectedSHA: pre.ExpectedSHA}
}

func (h *handlers) memoryTools() []server.ServerTool {
	return []server.ServerTool{
		typed(mcp.NewTool(NameView,
			mcp.WithToolTitle("View memory"),
			mcp.WithDescription("Show a memory file with line numbers, or list a directory. "+
				"Start every task by viewing /memories to load what earlier sessions learned."),
			mcp.WithInputSchema[ViewArgs](),
			withSchema(map[string]map[string]any{
				"view_range": {"minItems": 2, "maxItems": 2},
			}),
			annotations(true, false, true),
		), h.view),
		typed(mcp.NewTool(NameCreate,
			mcp.WithToolTitle("Create memory file"),
			mcp.WithDescription("Create a memory file (never overwrites). "+
				"Store reusable context — task rules, data schemas, tool configurations, output constraints — one rule per bullet; "+
				"transcripts, logs, reasoning, secrets and raw data are refused."),
			mcp.WithInputSchema[CreateArgs](),
			withSchema(provenanceKeywords()),
			// A second identical call is refused (the file exists) and
			// changes nothing, hence idempotent.
			annotations(false, false, true),
		), h.create),
		typed(mcp.NewTool(NameStrReplace,
			mcp.WithToolTitle("Replace text in memory"),
			mcp.WithDescription("Replace the one occurrence of old_str in a memory file: "+
				"edit an existing rule rather than add a near-duplicate."),
			mcp.WithInputSchema[StrReplaceArgs](),
			withSchema(provenanceKeywords()),
			// Replacing text is not additive (destructive in MCP's sense,
			// though git keeps the old text); repeating it may edit again.
			annotations(false, true, false),
		), h.strReplace),
		typed(mcp.NewTool(NameInsert,
			mcp.WithToolTitle("Insert lines into memory"),
			mcp.WithDescription("Insert lines after a given line of a memory file (0 is the top): add a rule to an existing file."),
			mcp.WithInputSchema[InsertArgs](),
			withSchema(mergeKeywords(provenanceKeywords(), map[string]map[string]any{
				"insert_line": {"minimum": 0},
			})),
			annotations(false, false, false),
		), h.insert),
		typed(mcp.NewTool(NameDelete,
			mcp.WithToolTitle("Delete memory"),
			mcp.WithDescription("Delete a memory file or directory that is wrong or obsolete. "+
				"History keeps it: memory_revert restores it."),
			mcp.WithInputSchema[DeleteArgs](),
			annotations(false, true, true),
		), h.delete),
		typed(mcp.NewTool(NameRename,
			mcp.WithToolTitle("Rename memory"),
			mcp.WithDescription("Move or rename a memory file or directory that belongs elsewhere (never overwrites)."),
			mcp.WithInputSchema[RenameArgs](),
			annotations(false, false, true),
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
	r, err := h.store.Create(ctx, a.Path, a.FileText, a.options(ctx, h, NameCreate, Precondition{}))
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
	r, err := h.store.Delete(ctx, a.Path, Provenance{}.options(ctx, h, NameDelete, a.Precondition))
	return h.written(NameDelete, r, err, a.Path)
}

func (h *handlers) rename(ctx context.Context, a RenameArgs) *mcp.CallToolResult {
	r, err := h.store.Rename(ctx, a.OldPath, a.NewPath, Provenance{}.options(ctx, h, NameRename, a.Precondition))
	return h.written(NameRename, r, err, a.OldPath, a.NewPath)
}

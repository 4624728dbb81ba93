package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/memstore"
)

// MaxHistoryLimit caps the number of commits one memory_history call returns.
const MaxHistoryLimit = 200

// SearchArgs are memory_search's arguments.
type SearchArgs struct {
	Query          string   `json:"query" jsonschema:"A few words."`
	Workspace      string   `json:"workspace,omitempty" jsonschema:"Only this workspace."`
	Scope          string   `json:"scope,omitempty" jsonschema:"Only this scope."`
	Types          []string `json:"types,omitempty" jsonschema:"Only these item types, e.g. task, schema, tool, output, note."`
	Limit          int      `json:"limit,omitempty" jsonschema:"Most hits to return."`
	IncludeInvalid bool     `json:"include_invalid,omitempty" jsonschema:"Also invalidated or expired items."`
}

// SearchHit is one row of memory_search's structured output.
type SearchHit struct {
	Path      string  `json:"path" jsonschema:"Virtual path of the file."`
	Heading   string  `json:"heading" jsonschema:"Heading path of the matching section; empty before the first heading."`
	StartLine int     `json:"start_line" jsonschema:"First line of the section, 1-indexed."`
	EndLine   int     `json:"end_line" jsonschema:"Last line of the section, inclusive."`
	Snippet   string  `json:"snippet" jsonschema:"Text around the match, on one line."`
	Score     float64 `json:"score" jsonschema:"Reciprocal-rank-fusion score; higher is better."`
	Type      string  `json:"type" jsonschema:"Item type: task, output, tool, schema, note, …"`
	Workspace string  `json:"workspace" jsonschema:"Workspace of the file; empty outside workspaces."`
	Source    string  `json:"source" jsonschema:"Provenance from the file's front matter; empty when not declared."`
	Valid     bool    `json:"valid" jsonschema:"False when the item is invalidated or expired."`
}

// SearchOutput is memory_search's structured output.
type SearchOutput struct {
	Hits     []SearchHit `json:"hits" jsonschema:"Hits, best first."`
	Degraded string      `json:"degraded,omitempty" jsonschema:"Set when the primary index was unavailable and the hits come from the local fallback index."`
}

// HistoryArgs are memory_history's arguments.
type HistoryArgs struct {
	Path   string `json:"path,omitempty" jsonschema:"File or directory; default all of /memories."`
	Limit  int    `json:"limit,omitempty" jsonschema:"Most commits to return."`
	Author string `json:"author,omitempty" jsonschema:"Only commits by this user name."`
}

// HistoryCommit is one commit of memory_history's structured output.
type HistoryCommit struct {
	Commit     string `json:"commit" jsonschema:"Commit hash, to pass to memory_revert."`
	Time       string `json:"time" jsonschema:"Commit time, RFC 3339, UTC."`
	Author     string `json:"author" jsonschema:"Principal who made the change."`
	Subject    string `json:"subject" jsonschema:"What changed, e.g. str_replace workspaces/sales/task.md."`
	Tool       string `json:"tool" jsonschema:"Tool or command that made the change."`
	Source     string `json:"source" jsonschema:"Declared provenance; empty when none."`
	Confidence string `json:"confidence" jsonschema:"Declared confidence; empty when none."`
}

// HistoryOutput is memory_history's structured output.
type HistoryOutput struct {
	Commits []HistoryCommit `json:"commits" jsonschema:"Commits, newest first."`
}

// RevertArgs are memory_revert's arguments.
type RevertArgs struct {
	Path   string `json:"path" jsonschema:"File or directory to restore."`
	Commit string `json:"commit" jsonschema:"Commit from memory_history (at least 4 hex digits) whose content to restore."`
}

func (h *handlers) searchTools() []server.ServerTool {
	return []server.ServerTool{
		typed(mcp.NewTool(NameSearch,
			mcp.WithToolTitle("Search memory"),
			mcp.WithDescription("Search the memory (full-text and semantic) for what viewing the workspace did not show. "+
				"Returns matching sections with path and lines; read one with memory_view and view_range."),
			mcp.WithInputSchema[SearchArgs](),
			withSchema(map[string]map[string]any{
				"query": {"description": fmt.Sprintf("A few words; only the first %d distinct ones count.", memstore.MaxQueryWords)},
				"scope": {"enum": []string{memstore.ScopeOrg, memstore.ScopeUser, memstore.ScopeWorkspace, memstore.ScopeOther}},
				"types": {"maxItems": memstore.MaxSearchTypes},
				"limit": {"minimum": 1, "maximum": memstore.MaxSearchLimit, "default": 10},
			}),
			annotations(true, false, true),
		), h.search),
		typed(mcp.NewTool(NameHistory,
			mcp.WithToolTitle("Memory history"),
			mcp.WithDescription("List who changed a memory path, when, with which tool and on what evidence, newest first. "+
				"Use it to find the commit for memory_revert."),
			mcp.WithInputSchema[HistoryArgs](),
			withSchema(map[string]map[string]any{
				"path":  {"default": memstore.Root},
				"limit": {"minimum": 1, "maximum": MaxHistoryLimit, "default": memstore.DefaultHistoryLimit},
			}),
			annotations(true, false, true),
		), h.history),
		typed(mcp.NewTool(NameRevert,
			mcp.WithToolTitle("Revert memory"),
			mcp.WithDescription("Undo changes: restore a memory file or directory as of an earlier commit, in a new commit. "+
				"Deleted files come back; files added since are removed."),
			mcp.WithInputSchema[RevertArgs](),
			// A second identical call is refused (already restored) and
			// changes nothing; restoring replaces content, so destructive.
			annotations(false, true, true),
		), h.revert),
	}
}

func (h *handlers) search(ctx context.Context, a SearchArgs) *mcp.CallToolResult {
	if a.Limit < 0 || a.Limit > memstore.MaxSearchLimit {
		return mcp.NewToolResultError(fmt.Sprintf("Error: limit %d is out of range. Use a limit between 1 and %d, or leave it out for 10.", a.Limit, memstore.MaxSearchLimit))
	}
	res, err := h.store.Search(ctx, memstore.SearchRequest{
		Query: a.Query, Workspace: a.Workspace, Scope: a.Scope, Types: a.Types,
		IncludeInvalid: a.IncludeInvalid, Limit: a.Limit,
	})
	if err != nil {
		return h.fail(NameSearch, err)
	}
	rows := memstore.Results(res.Hits, a.Query, h.opts.Now())
	out := SearchOutput{Hits: make([]SearchHit, len(rows))}
	for i, r := range rows {
		out.Hits[i] = SearchHit{
			Path: r.Path, Heading: r.Heading, StartLine: r.StartLine, EndLine: r.EndLine,
			Snippet: r.Snippet, Score: r.Score, Type: r.Type, Workspace: r.Workspace,
			Source: r.Source, Valid: r.Valid,
		}
	}
	text := memstore.FormatResults(rows)
	if res.Degraded != "" {
		text = res.Degraded + "\n" + text
	}
	return mcp.NewToolResultStructured(out, text)
}

func (h *handlers) history(ctx context.Context, a HistoryArgs) *mcp.CallToolResult {
	if a.Limit < 0 || a.Limit > MaxHistoryLimit {
		return mcp.NewToolResultError(fmt.Sprintf("Error: limit %d is out of range. Use a limit between 1 and %d, or leave it out for %d.", a.Limit, MaxHistoryLimit, memstore.DefaultHistoryLimit))
	}
	p := a.Path
	if p == "" {
		p = memstore.Root
	}
	commits, err := h.store.History(ctx, p, &memstore.HistoryOptions{Limit: a.Limit, Author: a.Author})
	if err != nil {
		return h.fail(NameHistory, err)
	}
	out := HistoryOutput{Commits: make([]HistoryCommit, len(commits))}
	var b strings.Builder
	for i, c := range commits {
		hc := HistoryCommit{
			Commit: c.Hash, Time: c.Time.UTC().Format("2006-01-02T15:04:05Z"), Author: c.Author, Subject: c.Subject,
			Tool: c.Trailers["Tool"], Source: c.Trailers["Source"], Confidence: c.Trailers["Confidence"],
		}
		out.Commits[i] = hc
		fmt.Fprintf(&b, "%s %s %s %s\n", c.Hash[:12], hc.Time, c.Author, c.Subject)
		var tr []string
		for _, kv := range [][2]string{{"Tool", hc.Tool}, {"Source", hc.Source}, {"Confidence", hc.Confidence}} {
			if kv[1] != "" {
				tr = append(tr, kv[0]+": "+kv[1])
			}
		}
		if len(tr) > 0 {
			fmt.Fprintf(&b, "    %s\n", strings.Join(tr, ", "))
		}
	}
	return mcp.NewToolResultStructured(out, b.String())
}

func (h *handlers) revert(ctx context.Context, a RevertArgs) *mcp.CallToolResult {
	r, err := h.store.Revert(ctx, a.Path, a.Commit, Provenance{}.options(ctx, h, NameRevert, Precondition{}))
	return h.written(NameRevert, r, err, a.Path)
}

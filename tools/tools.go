package tools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/internal/egress"
	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/gate"
	"github.com/selmem/selmem/refresh"
)

// Log keys.
const (
	logKeyTool = "tool"
	logKeyErr  = "err"
)

// Options configure the tools. A nil *Options is valid: writes are
// attributed to the store's default author with no declared source.
type Options struct {
	// Author is the principal recorded on every write (commit author and
	// trailer Author:). "" uses the store's default author.
	Author string
	// DefaultSource is the provenance recorded when a write gives no
	// `source` argument; "" records none. server sets user_confirmed over
	// stdio, where the local user is the principal and owner.
	DefaultSource string
	// Changed, when set, is called after every accepted write with the
	// virtual paths the write changed (both paths for a rename).
	Changed func(paths []string)
	// Logger receives failures that are not the caller's fault; nil
	// discards them.
	Logger *slog.Logger
	// Now is the clock used to judge validity in search results; nil is
	// time.Now.
	Now func() time.Time
	// DataRoots are the directories profile_source may read files (and
	// SQLite databases) from; none refuses file sources.
	DataRoots []string
	// ProfileTimeout bounds one profile_source call, whatever its
	// source; 0 is DefaultProfileTimeout.
	ProfileTimeout time.Duration
	// Egress is the outbound policy of profile_source, with the
	// credentials and connections a model may name; nil allows no
	// non-public address and names nothing.
	Egress *egress.Policy
	// Refresher serves refresh_artifact and query_artifact_data; nil
	// makes both answer that artifacts are not available.
	Refresher *refresh.Refresher
	// Subset limits the tools: SubsetAll ("" too) or SubsetMemory.
	Subset string
	// Shared serves the drafts and proposals tools: the server has
	// principals other than the local owner (HTTP with authentication).
	// The local owner alone has nobody to draft for or propose to.
	Shared bool
}

// Tool subsets, for Options.Subset.
const (
	SubsetAll = "all"
	// SubsetMemory is the six file commands of Anthropic's memory tool
	// (memory_view, _create, _str_replace, _insert, _delete, _rename),
	// for hosts that want few tools.
	SubsetMemory = "memory"
)

// memoryCommands are the tools of SubsetMemory.
var memoryCommands = []string{NameView, NameCreate, NameStrReplace, NameInsert, NameDelete, NameRename}

// handlers holds the tools' dependencies.
type handlers struct {
	store *memstore.Store
	opts  Options
	log   *slog.Logger
}

// Tools returns every selmem tool with its handler, in a stable order.
func Tools(store *memstore.Store, opts *Options) []server.ServerTool {
	h := &handlers{store: store}
	if opts != nil {
		h.opts = *opts
	}
	h.log = h.opts.Logger
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.opts.Now == nil {
		h.opts.Now = time.Now
	}
	all := slices.Concat(h.memoryTools(), h.searchTools(), h.profileTools(), h.refreshTools(), h.appsTools(), h.templateTools())
	if h.opts.Shared {
		all = slices.Concat(all, h.shareTools())
	}
	if h.opts.Subset == SubsetMemory {
		return slices.DeleteFunc(all, func(t server.ServerTool) bool { return !slices.Contains(memoryCommands, t.Tool.Name) })
	}
	return all
}

// Register adds every tool to srv.
func Register(srv *server.MCPServer, store *memstore.Store, opts *Options) {
	srv.AddTools(Tools(store, opts)...)
}

// annotations spells out every hint, so no tool inherits the library's
// defaults by accident. The tool works on the local memory only: not
// open-world. The display title is the tool's own (mcp.WithToolTitle);
// annotations.title, its duplicate from before protocol 2025-06-18, is left
// out to keep tools/list short.
func annotations(readOnly, destructive, idempotent bool) mcp.ToolOption {
	return hints(readOnly, destructive, idempotent, false)
}

// hints is annotations with the open-world hint, for the tools that read
// outside the memory (profile_source).
func hints(readOnly, destructive, idempotent, openWorld bool) mcp.ToolOption {
	return mcp.WithToolAnnotation(mcp.ToolAnnotation{
		ReadOnlyHint:    mcp.ToBoolPtr(readOnly),
		DestructiveHint: mcp.ToBoolPtr(destructive),
		IdempotentHint:  mcp.ToBoolPtr(idempotent),
		OpenWorldHint:   mcp.ToBoolPtr(openWorld),
	})
}

// fail turns an error into a tool result the model can act on. Store errors
// carry their own text (the memory tool's wording plus a hint); anything
// else is logged and reported without details, which may hold host paths.
func (h *handlers) fail(tool string, err error) *mcp.CallToolResult {
	var me *memstore.Error
	if errors.As(err, &me) {
		return mcp.NewToolResultError(me.Error())
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return mcp.NewToolResultError("Error: the call was cancelled before it finished. Check with memory_view or memory_history whether the change was recorded before retrying.")
	}
	h.log.Error("tool failed", logKeyTool, tool, logKeyErr, err)
	return mcp.NewToolResultError(fmt.Sprintf(
		"Error: %s failed inside the memory server; the details are in the server's log. Retry once; if it fails again, tell the user the memory server needs attention.", tool))
}

// author is the principal a write records: the authenticated principal
// the request acts for, else the configured author (the store records the
// authenticated principal whatever is passed; this keeps the two in step).
func (h *handlers) author(ctx context.Context) string {
	if p, ok := access.FromContext(ctx); ok && !p.IsLocal() {
		return p.User
	}
	return h.opts.Author
}

// workspaceDir is the memory path of workspace ws.
func workspaceDir(ws string) string { return memstore.Root + "/workspaces/" + ws }

// may checks, before work that does not go through the store's own checks
// at once (profiling a source, refreshing or querying an artifact), that
// the principal in ctx may do act in workspace ws; it returns the tool's
// error result, or nil.
func (h *handlers) may(ctx context.Context, tool string, act access.Action, ws string) *mcp.CallToolResult {
	if ws == "" || h.store == nil {
		return nil // the tool's own validation answers
	}
	if err := h.store.Check(ctx, act, workspaceDir(ws)); err != nil {
		return h.fail(tool, err)
	}
	return nil
}

// changed reports the paths an accepted write touched, canonicalised the way
// the store canonicalises them.
func (h *handlers) changed(paths ...string) {
	if h.opts.Changed == nil {
		return
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		rel, err := gate.Path(p, gate.Limits{})
		if err != nil {
			continue
		}
		if rel == "" {
			out = append(out, memstore.Root)
		} else {
			out = append(out, memstore.Root+"/"+rel)
		}
	}
	if len(out) > 0 {
		h.opts.Changed(out)
	}
}

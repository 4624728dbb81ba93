package tools

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/internal/mcpapps"
	"github.com/selmem/selmem/memstore/access"
)

// NameShowArtifact is the tool that shows an artifact's current data in an
// MCP Apps host.
const NameShowArtifact = "show_artifact"

// ShowArtifactArgs are show_artifact's arguments.
type ShowArtifactArgs struct {
	Workspace string `json:"workspace" jsonschema:"Workspace, e.g. sales."`
	Artifact  string `json:"artifact" jsonschema:"Artifact name."`
}

// ShowArtifactOutput is show_artifact's structured output.
type ShowArtifactOutput struct {
	View        string           `json:"view" jsonschema:"The artifact's view (ui:// resource)."`
	Rows        int64            `json:"rows" jsonschema:"Rows of the data shown."`
	Columns     []ArtifactColumn `json:"columns" jsonschema:"Columns the artifact is bound to."`
	Snapshot    string           `json:"snapshot" jsonschema:"SHA-256 of the data shown; empty before the first refresh."`
	RefreshedAt string           `json:"refreshed_at" jsonschema:"When the data was loaded (RFC 3339); empty before the first refresh."`
	TooLarge    bool             `json:"too_large" jsonschema:"The data exceeds the view's size cap and is not shown inline; the view links to the HTTP-served artifact."`
	Aggregate   bool             `json:"aggregate" jsonschema:"The data exceeds the view's size cap; the view shows the aggregate the artifact's binding declares."`
}

func (h *handlers) appsTools() []server.ServerTool {
	return []server.ServerTool{
		typedRequest(mcp.NewTool(NameShowArtifact,
			mcp.WithToolTitle("Show artifact"),
			mcp.WithDescription("Show an artifact with its current data in the conversation, without refreshing it and without the data entering your context. "+
				"For newer data use refresh_artifact."),
			mcp.WithInputSchema[ShowArtifactArgs](),
			annotations(true, false, true),
			withUI(),
		), h.showArtifact),
	}
}

// withUI names the artifact viewer in a tool's _meta.ui (MCP Apps).
func withUI() mcp.ToolOption {
	return func(t *mcp.Tool) { t.Meta = mcp.NewMetaFromMap(mcpapps.ToolMeta()) }
}

// ForClient is the tool list a client gets (a server.ToolFilterFunc):
// clients that declared MCP Apps get every tool as registered; others get
// neither show_artifact nor any _meta.ui, so they never see a ui:// link
// they cannot use.
func ForClient(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	if mcpapps.ClientSupports(ctx) {
		return tools
	}
	out := make([]mcp.Tool, 0, len(tools))
	for _, t := range tools {
		if t.Name == NameShowArtifact {
			continue
		}
		out = append(out, mcpapps.Strip(t))
	}
	return out
}

func (h *handlers) showArtifact(ctx context.Context, _ mcp.CallToolRequest, a ShowArtifactArgs) *mcp.CallToolResult {
	if h.opts.Refresher == nil {
		return mcp.NewToolResultError(errNoRefresher)
	}
	if res := h.may(ctx, NameShowArtifact, access.ActRead, a.Workspace); res != nil {
		return res
	}
	v, err := h.opts.Refresher.View(ctx, a.Workspace, a.Artifact)
	if err != nil {
		return h.fail(NameShowArtifact, err)
	}
	b, err := h.opts.Refresher.ReadBinding(ctx, a.Workspace, a.Artifact)
	if err != nil {
		return h.fail(NameShowArtifact, err)
	}
	shown, err := mcpapps.Result(v)
	if err != nil {
		return h.fail(NameShowArtifact, err)
	}
	out := ShowArtifactOutput{View: shown.URI, Columns: artifactColumns(b.Columns), Snapshot: shown.Snapshot, Rows: shown.Rows, TooLarge: v.TooLarge, Aggregate: v.Aggregate != nil}
	var text string
	switch {
	case v.Snapshot == nil:
		text = fmt.Sprintf("Artifact %s/%s has no data yet; refresh it with refresh_artifact.", a.Workspace, a.Artifact)
	default:
		out.RefreshedAt = v.Snapshot.RefreshedAt.UTC().Format(time.RFC3339)
		text = fmt.Sprintf("Showing %s/%s: %d rows loaded %s.", a.Workspace, a.Artifact, v.Snapshot.Rows, out.RefreshedAt)
		if v.TooLarge {
			text += " The data is too large to show inline; the view links to the artifact served over HTTP."
		}
		if a := v.Aggregate; a != nil {
			text += fmt.Sprintf(" The data is too large to show inline; the view shows its aggregate (%s, %d groups).", a.Describe(), a.Groups)
		}
	}
	res := mcp.NewToolResultStructured(out, text)
	res.Meta = mcp.NewMetaFromMap(mcpapps.ResultMeta(shown))
	return res
}

// withView adds, for a client that declared MCP Apps, the artifact's view
// and the data it renders to a result's _meta. A view that cannot be read
// leaves the result as it is.
func (h *handlers) withView(ctx context.Context, ws, artifact string, res *mcp.CallToolResult) *mcp.CallToolResult {
	if !mcpapps.ClientSupports(ctx) {
		return res
	}
	v, err := h.opts.Refresher.View(ctx, ws, artifact)
	if err != nil {
		h.log.Warn("reading an artifact's view failed", logKeyTool, NameRefreshArtifact, logKeyErr, err)
		return res
	}
	shown, err := mcpapps.Result(v)
	if err != nil {
		h.log.Warn("encoding an artifact's view failed", logKeyTool, NameRefreshArtifact, logKeyErr, err)
		return res
	}
	res.Meta = mcp.NewMetaFromMap(mcpapps.ResultMeta(shown))
	return res
}

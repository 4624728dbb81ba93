package mcpapps

import (
	"context"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ExtensionID identifies the MCP Apps extension in capabilities.extensions.
const ExtensionID = "io.modelcontextprotocol/ui"

// MIMEType is the MIME type of an MCP Apps view.
const MIMEType = "text/html;profile=mcp-app"

// ProtocolVersion is the MCP Apps revision the view bridge speaks.
const ProtocolVersion = "2026-01-26"

// ViewerURI is the view named by the artifact tools' definitions: it shows
// whichever artifact the tool result carries. Each artifact also has its
// own view, at ViewURI.
const ViewerURI = "ui://selmem/artifact"

// ViewTemplate is the URI template of the artifacts' own views.
const ViewTemplate = "ui://selmem/workspaces/{workspace}/artifacts/{artifact}"

// MetaKey is the key, in a tool result's _meta, of the artifact the result
// shows (see ResultMeta).
const MetaKey = "selmem/view"

const viewPrefix = "ui://selmem/workspaces/"

// ViewURI is the ui:// address of an artifact's view.
func ViewURI(workspace, artifact string) string {
	return viewPrefix + workspace + "/artifacts/" + artifact
}

// ParseViewURI returns the workspace and artifact of a view's address.
func ParseViewURI(uri string) (workspace, artifact string, ok bool) {
	rest, ok := strings.CutPrefix(uri, viewPrefix)
	if !ok {
		return "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || parts[1] != "artifacts" || parts[0] == "" || parts[2] == "" {
		return "", "", false
	}
	return parts[0], parts[2], true
}

// IsUI reports whether uri is a ui:// address.
func IsUI(uri string) bool { return strings.HasPrefix(uri, "ui://") }

// Capability is what the server declares under capabilities.extensions.
func Capability() map[string]any {
	return map[string]any{ExtensionID: map[string]any{"mimeTypes": []string{MIMEType}}}
}

// Supports reports whether capabilities declare the extension with the
// HTML view type.
func Supports(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	ext, ok := caps.Extensions[ExtensionID].(map[string]any)
	if !ok {
		return false
	}
	types, _ := ext["mimeTypes"].([]any)
	return slices.ContainsFunc(types, func(t any) bool { s, _ := t.(string); return s == MIMEType })
}

// ClientSupports reports whether the client of the request in ctx declared
// the extension: in the request's own _meta (protocol 2026-07-28 and
// later, where capabilities are per request), else at initialisation.
func ClientSupports(ctx context.Context) bool {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return Supports(info.ClientCapabilities)
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		caps := s.GetClientCapabilities()
		return Supports(&caps)
	}
	return false
}

// ResourceMeta is the _meta of a view resource and of its contents: no
// origin to connect to or load from (the view opens no connections), and
// a border, as a dashboard card wants.
func ResourceMeta() map[string]any {
	return map[string]any{"ui": map[string]any{
		"csp":           map[string]any{"connectDomains": []string{}, "resourceDomains": []string{}},
		"prefersBorder": true,
	}}
}

// ToolMeta is the _meta of a tool that shows an artifact.
func ToolMeta() map[string]any {
	return map[string]any{"ui": map[string]any{"resourceUri": ViewerURI}}
}

// Strip returns tool without its _meta.ui, for clients without the
// extension.
func Strip(tool mcp.Tool) mcp.Tool {
	if tool.Meta == nil || tool.Meta.AdditionalFields["ui"] == nil {
		return tool
	}
	fields := map[string]any{}
	for k, v := range tool.Meta.AdditionalFields {
		if k != "ui" {
			fields[k] = v
		}
	}
	m := *tool.Meta
	m.AdditionalFields = fields
	if len(fields) == 0 && m.ProgressToken == nil {
		tool.Meta = nil
	} else {
		tool.Meta = &m
	}
	return tool
}

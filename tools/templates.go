package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/memstore"
)

// Names of the template tools.
const (
	NamePublishTemplate = "workspace_publish_template"
	NameLoadTemplate    = "workspace_load"
)

// PublishTemplateArgs are workspace_publish_template's arguments.
type PublishTemplateArgs struct {
	Workspace string `json:"workspace" jsonschema:"Workspace name."`
	Version   string `json:"version" jsonschema:"New version, e.g. 1.0.0."`
}

// PublishTemplateOutput is workspace_publish_template's structured output.
type PublishTemplateOutput struct {
	Template string `json:"template" jsonschema:"The template's name, workspace@version, for workspace_load."`
	Commit   string `json:"commit" jsonschema:"The published commit it is a copy of."`
}

// LoadTemplateArgs are workspace_load's arguments.
type LoadTemplateArgs struct {
	Template     string `json:"template" jsonschema:"workspace@version"`
	NewWorkspace string `json:"new_workspace" jsonschema:"Name of the new workspace."`
}

// LoadTemplateOutput is workspace_load's structured output.
type LoadTemplateOutput struct {
	Workspace string   `json:"workspace" jsonschema:"The created workspace."`
	Commit    string   `json:"commit" jsonschema:"The commit that created it."`
	From      string   `json:"from" jsonschema:"The template's commit the files came from."`
	Stripped  []string `json:"stripped" jsonschema:"Credential bindings removed from tool files (file: key); name your own before refreshing."`
	Unbound   []string `json:"unbound" jsonschema:"Artifacts without data: point their connector at your data, then refresh_artifact."`
}

func (h *handlers) templateTools() []server.ServerTool {
	return []server.ServerTool{
		typed(mcp.NewTool(NamePublishTemplate,
			mcp.WithToolTitle("Publish workspace template"),
			mcp.WithDescription("Tag a workspace's published state as a template for workspace_load (owners)."),
			mcp.WithInputSchema[PublishTemplateArgs](),
			// Adds a tag; a second identical call is refused and
			// changes nothing.
			annotations(false, false, true),
		), h.publishTemplate),
		typed(mcp.NewTool(NameLoadTemplate,
			mcp.WithToolTitle("Load workspace template"),
			mcp.WithDescription("Create your own workspace from a template (no credentials, no data); then point its connectors at your data and refresh_artifact."),
			mcp.WithInputSchema[LoadTemplateArgs](),
			// Creates a new workspace only; a second identical call is
			// refused (it exists) and changes nothing.
			annotations(false, false, true),
		), h.loadTemplate),
	}
}

func (h *handlers) publishTemplate(ctx context.Context, a PublishTemplateArgs) *mcp.CallToolResult {
	t, err := h.store.PublishTemplate(ctx, a.Workspace, a.Version)
	if err != nil {
		return h.fail(NamePublishTemplate, err)
	}
	return mcp.NewToolResultStructured(PublishTemplateOutput{Template: t.Name(), Commit: t.Commit},
		fmt.Sprintf("Published template %s (commit %s). Others with at least the viewer role on %s load it with workspace_load.", t.Name(), shortHash(t.Commit), t.Workspace))
}

func (h *handlers) loadTemplate(ctx context.Context, a LoadTemplateArgs) *mcp.CallToolResult {
	res, err := h.store.LoadTemplate(ctx, a.Template, a.NewWorkspace)
	if errors.Is(err, memstore.ErrNotFound) {
		return mcp.NewToolResultError(err.Error() + h.templateList(ctx))
	}
	if err != nil {
		return h.fail(NameLoadTemplate, err)
	}
	h.changed(res.Files...)
	out := LoadTemplateOutput{Workspace: res.Workspace, Commit: res.Commit, From: res.Origin.Commit,
		Stripped: append([]string{}, res.Stripped...), Unbound: append([]string{}, res.Unbound...)}
	return mcp.NewToolResultStructured(out, res.Message)
}

// maxListedTemplates bounds the templates a refusal lists.
const maxListedTemplates = 20

// templateList names the templates the caller may load, for a refusal.
func (h *handlers) templateList(ctx context.Context) string {
	list, err := h.store.Templates(ctx)
	if err != nil || len(list) == 0 {
		return " No template is published that you may load."
	}
	names := make([]string, 0, min(len(list), maxListedTemplates))
	for _, t := range list[:min(len(list), maxListedTemplates)] {
		names = append(names, t.Name())
	}
	more := ""
	if len(list) > maxListedTemplates {
		more = fmt.Sprintf(" and %d more", len(list)-maxListedTemplates)
	}
	return " Templates you may load: " + strings.Join(names, ", ") + more + "."
}

package resources

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// TemplatesURI is the resource listing the workspace templates the caller
// may load.
const TemplatesURI = "memory://templates"

// registerTemplates adds memory://templates.
func (r *Registry) registerTemplates() {
	r.srv.AddResource(mcp.NewResource(TemplatesURI, "templates",
		mcp.WithResourceTitle("Workspace templates"),
		mcp.WithResourceDescription("The published workspace templates you may load with workspace_load, one line each: workspace@version, title, commit."),
		mcp.WithMIMEType(mimeMarkdown)), r.handleTemplates)
}

// handleTemplates serves memory://templates.
func (r *Registry) handleTemplates(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	list, err := r.store.Templates(ctx)
	if err != nil {
		return nil, r.fail(TemplatesURI, err)
	}
	var b strings.Builder
	b.WriteString("# Workspace templates\n\n")
	if len(list) == 0 {
		b.WriteString("No template is published that you may load. A workspace's owner publishes one with workspace_publish_template.\n")
	} else {
		b.WriteString("Create a workspace of your own from one with workspace_load(template, new_workspace).\n\n")
	}
	for _, t := range list {
		fmt.Fprintf(&b, "- %s", t.Name())
		if t.Title != "" {
			fmt.Fprintf(&b, ": %s", t.Title)
		}
		if t.Description != "" {
			fmt.Fprintf(&b, " (%s)", strings.Join(strings.Fields(t.Description), " "))
		}
		fmt.Fprintf(&b, "; commit %s\n", t.Commit[:12])
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: TemplatesURI, MIMEType: mimeMarkdown, Text: b.String()}}, nil
}

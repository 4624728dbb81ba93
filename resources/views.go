package resources

import (
	"context"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/internal/mcpapps"
)

// registerViews adds the MCP Apps views: the artifact viewer the artifact
// tools name, and each artifact's own view. Clients that did not declare
// the extension neither see them listed nor can read them.
func (r *Registry) registerViews() {
	meta := mcp.NewMetaFromMap(mcpapps.ResourceMeta())
	viewer := mcp.NewResource(mcpapps.ViewerURI, "artifact-viewer",
		mcp.WithResourceTitle("Artifact viewer"),
		mcp.WithResourceDescription("MCP Apps view of the artifact a refresh_artifact or show_artifact result carries."),
		mcp.WithMIMEType(mcpapps.MIMEType))
	viewer.Meta = meta
	r.srv.AddResource(viewer, r.handleView)
	tmpl := mcp.NewResourceTemplate(mcpapps.ViewTemplate, "artifact-view",
		mcp.WithTemplateTitle("Artifact view"),
		mcp.WithTemplateDescription("MCP Apps view of one artifact: its page with its current data, self-contained, opening no connections."),
		mcp.WithTemplateMIMEType(mcpapps.MIMEType))
	tmpl.Meta = meta
	r.srv.AddResourceTemplate(tmpl, r.handleView)

	hooks := r.srv.GetHooks()
	if hooks == nil {
		hooks = &server.Hooks{}
		server.WithHooks(hooks)(r.srv)
	}
	hooks.AddAfterListResources(func(ctx context.Context, _ any, _ *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
		if !mcpapps.ClientSupports(ctx) {
			res.Resources = slices.DeleteFunc(res.Resources, func(x mcp.Resource) bool { return mcpapps.IsUI(x.URI) })
		}
	})
	hooks.AddAfterListResourceTemplates(func(ctx context.Context, _ any, _ *mcp.ListResourceTemplatesRequest, res *mcp.ListResourceTemplatesResult) {
		if !mcpapps.ClientSupports(ctx) {
			res.ResourceTemplates = slices.DeleteFunc(res.ResourceTemplates, func(x mcp.ResourceTemplate) bool {
				return x.URITemplate != nil && mcpapps.IsUI(x.URITemplate.Raw())
			})
		}
	})
}

// handleView serves the viewer and the artifacts' views.
func (r *Registry) handleView(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	uri := req.Params.URI
	if !mcpapps.ClientSupports(ctx) {
		return nil, notFound(uri, "views are offered to clients that declare the MCP Apps extension ("+mcpapps.ExtensionID+")")
	}
	var doc []byte
	if uri == mcpapps.ViewerURI {
		doc = mcpapps.Viewer()
	} else {
		ws, artifact, ok := mcpapps.ParseViewURI(uri)
		if !ok {
			return nil, notFound(uri, "no view has this URI")
		}
		if err := r.mayRead(ctx, uri); err != nil {
			return nil, err
		}
		v, err := r.refresher.View(ctx, ws, artifact)
		if err != nil {
			return nil, r.fail(uri, err)
		}
		if doc, err = r.docs.Artifact(v); err != nil {
			return nil, r.fail(uri, err)
		}
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: mcpapps.MIMEType, Text: string(doc), Meta: mcpapps.ResourceMeta()}}, nil
}

package resources

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/internal/mcpapps"
	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/profiler"
	"github.com/selmem/selmem/refresh"
)

// DefaultBudgetTokens is the token budget of a composed context when
// Options.BudgetTokens is not set.
const DefaultBudgetTokens = 4000

// PromptStartSession is the name of the prompt that returns a workspace's
// composed context.
const PromptStartSession = "start_session"

// MIME types of the resources.
const (
	mimeMarkdown = "text/markdown"
	mimeYAML     = "application/yaml"
)

// Log keys.
const (
	logKeyURI       = "uri"
	logKeyWorkspace = "workspace"
	logKeySession   = "session"
	logKeyErr       = "err"
)

// Options configure Register. A nil *Options is valid.
type Options struct {
	BudgetTokens int              // token budget of context and schemas; <= 0 means DefaultBudgetTokens
	Logger       *slog.Logger     // nil discards
	Now          func() time.Time // clock deciding which items are in force; nil means time.Now
	// Refresher serves the artifacts resource and the regenerate_artifact
	// prompt; nil leaves both out.
	Refresher *refresh.Refresher
	// NextRun tells the artifacts resource when an artifact's next
	// scheduled refresh is; nil shows none.
	NextRun func(workspace, artifact string) (time.Time, bool)
}

// Registry is the resources, resource templates and prompt Register added to
// a server. Its Changed method tells subscribed clients about writes. It is
// safe for concurrent use.
type Registry struct {
	srv    *server.MCPServer
	store  *memstore.Store
	budget int
	log    *slog.Logger
	now    func() time.Time
	count  func(string) int

	refresher *refresh.Refresher
	schedule  func(workspace, artifact string) (time.Time, bool)
	docs      mcpapps.Documents // the artifacts' view documents

	mu     sync.Mutex                         // serialises Changed; guards listed
	listed map[string]map[string]mcp.Resource // workspace -> URI -> listed resource

	subsMu    sync.Mutex                       // guards subs, notifiers, views and listens
	subs      map[string]map[string]subscriber // URI -> session ID -> who subscribed
	notifiers map[string]Notifier              // session ID -> its transport's Notifier, if any
	views     map[string]view                  // session ID of a Broadcaster's transport -> its resources/list
	listens   []listen                         // resource subscriptions of subscriptions/listen streams
}

// Register adds selmem's resources, resource templates and the start_session
// prompt to srv, and hooks resource subscriptions so that Changed can notify
// subscribers. Call it before srv starts serving.
//
// srv should be created with server.WithResourceCapabilities(true, true)
// (subscribe and listChanged) and server.WithPromptCapabilities(false):
// without subscribe, clients cannot subscribe and Changed sends no
// resources/updated; without listChanged, mcp-go sends no
// resources/list_changed.
//
// resources/list holds memory://workspaces and, per workspace, its context
// and the task, output, tools, schemas and schemas/{source} resources that
// exist; the templates cover the same URIs for any workspace name.
func Register(srv *server.MCPServer, store *memstore.Store, opts *Options) *Registry {
	r := &Registry{
		srv:       srv,
		store:     store,
		budget:    DefaultBudgetTokens,
		log:       slog.New(slog.DiscardHandler),
		now:       time.Now,
		count:     profiler.Tokens,
		listed:    map[string]map[string]mcp.Resource{},
		subs:      map[string]map[string]subscriber{},
		notifiers: map[string]Notifier{},
		views:     map[string]view{},
	}
	if opts != nil {
		if opts.BudgetTokens > 0 {
			r.budget = opts.BudgetTokens
		}
		if opts.Logger != nil {
			r.log = opts.Logger
		}
		if opts.Now != nil {
			r.now = opts.Now
		}
		r.refresher, r.schedule = opts.Refresher, opts.NextRun
	}
	r.hookSubscriptions()

	templates := []struct{ uri, name, title, desc, mime string }{
		{"memory://workspaces/{workspace}/context", "workspace-context", "Session context",
			fmt.Sprintf("A workspace's task specifications, output constraints, tool configurations and data schemas composed into one prompt for the start of a session: stable order, no timestamps, at most %d tokens.", r.budget), mimeMarkdown},
		{"memory://workspaces/{workspace}/task", "workspace-task", "Task specifications",
			"A workspace's task specifications (task.md): domain rules, format preferences, quality rules.", mimeMarkdown},
		{"memory://workspaces/{workspace}/output", "workspace-output", "Output constraints",
			"A workspace's output constraints (output.md): contracts between artifact and runtime, above all the data-injection contract.", mimeMarkdown},
		{"memory://workspaces/{workspace}/tools", "workspace-tools", "Tool configurations",
			"A workspace's tool configurations (tools/<name>.yaml) as one YAML stream, one document per tool.", mimeYAML},
		{"memory://workspaces/{workspace}/schemas", "workspace-schemas", "Data schemas",
			fmt.Sprintf("A workspace's data schema profiles (schemas/<source>.md), or an index of them with their URIs when together they exceed %d tokens.", r.budget), mimeMarkdown},
		{"memory://workspaces/{workspace}/schemas/{source}", "workspace-schema", "Data schema",
			"The statistical profile of one data source of a workspace (schemas/<source>.md); relationships holds the join keys between sources.", mimeMarkdown},
	}
	if r.refresher != nil {
		a := artifactsTemplate
		templates = append(templates, struct{ uri, name, title, desc, mime string }{a.uri, a.name, a.title, a.desc, mimeMarkdown})
		r.registerArtifacts()
		r.registerViews()
	}
	var sts []server.ServerResourceTemplate
	for _, t := range templates {
		sts = append(sts, server.ServerResourceTemplate{
			Template: mcp.NewResourceTemplate(t.uri, t.name, mcp.WithTemplateTitle(t.title),
				mcp.WithTemplateDescription(t.desc), mcp.WithTemplateMIMEType(t.mime)),
			Handler: r.handleRead,
		})
	}
	srv.AddResourceTemplates(sts...)

	srv.AddResource(mcp.NewResource(WorkspacesURI, "workspaces",
		mcp.WithResourceTitle("Workspaces"),
		mcp.WithResourceDescription("The workspaces in this memory, one line each, with the URI of each workspace's session context."),
		mcp.WithMIMEType(mimeMarkdown)), r.handleRead)

	r.registerTemplates()

	srv.AddPrompt(mcp.NewPrompt(PromptStartSession,
		mcp.WithPromptTitle("Start a session in a workspace"),
		mcp.WithPromptDescription("Returns the workspace's session context (task specifications, output constraints, tool configurations, data schemas) as a user message, the same text as memory://workspaces/{workspace}/context."),
		mcp.WithArgument("workspace", mcp.RequiredArgument(),
			mcp.ArgumentDescription("The workspace's name, as listed by memory://workspaces."))),
		r.handlePrompt)

	r.Changed([]string{workspacesDir})
	return r
}

// handleRead serves every memory:// resource and template.
func (r *Registry) handleRead(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	uri := req.Params.URI
	t, ok := parseURI(uri)
	if !ok {
		return nil, notFound(uri, "no memory resource has this URI")
	}
	text, mime, err := r.render(ctx, t)
	if err != nil {
		return nil, r.fail(uri, err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: mime, Text: text}}, nil
}

// handlePrompt serves start_session.
func (r *Registry) handlePrompt(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	name := req.Params.Arguments["workspace"]
	if name == "" {
		return nil, fmt.Errorf("%w: the argument workspace is required; read %s for the workspace names", mcp.ErrInvalidParams, WorkspacesURI)
	}
	text, _, err := r.render(ctx, target{kind: KindContext, workspace: name})
	if err != nil {
		var m missing
		if errors.Is(err, memstore.ErrDenied) {
			return nil, err
		}
		if errors.As(err, &m) || errors.Is(err, memstore.ErrNotFound) || errors.Is(err, memstore.ErrRejected) {
			return nil, fmt.Errorf("%w: there is no workspace with this name; read %s for the workspace names", mcp.ErrInvalidParams, WorkspacesURI)
		}
		return nil, r.fail(ResourceURI(name, KindContext), err)
	}
	return mcp.NewGetPromptResult("Session context of workspace "+name,
		[]mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text))}), nil
}

// missing is a resource that does not exist although its workspace does;
// why says which part is missing.
type missing struct{ why string }

func (m missing) Error() string { return m.why }

// notFound returns mcp-go's resource-not-found error for uri.
func notFound(uri, why string) error {
	return fmt.Errorf("%w: %s: %s", server.ErrResourceNotFound, uri, why)
}

// fail turns an error of render into the error a client sees: not found for
// missing items and names the store refuses, a generic message (with the
// detail logged) otherwise, so that no host path reaches the client.
func (r *Registry) fail(uri string, err error) error {
	var m missing
	switch {
	case errors.Is(err, memstore.ErrDenied):
		return err // says which role is needed, nothing of the content
	case errors.As(err, &m):
		return notFound(uri, m.why)
	case errors.Is(err, memstore.ErrNotFound):
		return notFound(uri, "there is no workspace with this name")
	case errors.Is(err, memstore.ErrRejected):
		return notFound(uri, "not a valid workspace or source name")
	}
	r.log.Error("read memory resource", logKeyURI, uri, logKeyErr, err)
	return fmt.Errorf("reading %s failed; try again, and report it if it persists", uri)
}

// render returns the text and MIME type of the resource t.
func (r *Registry) render(ctx context.Context, t target) (text, mime string, err error) {
	if t.kind == kindList {
		text, err = r.workspacesText(ctx)
		return text, mimeMarkdown, err
	}
	// Every per-workspace resource, whatever serves it, needs a role in the
	// workspace.
	if err := r.store.Check(ctx, access.ActRead, workspacesDir+"/"+t.workspace); err != nil {
		return "", "", err
	}
	if t.kind == KindArtifacts {
		text, err = r.artifactsText(ctx, t.workspace)
		return text, mimeMarkdown, err
	}
	files, err := scanWorkspace(ctx, r.store, t.workspace)
	if err != nil {
		return "", "", err
	}
	now := r.now()
	switch t.kind {
	case KindContext:
		ws, err := loadFiles(ctx, r.store, files, now)
		if err != nil {
			return "", "", err
		}
		text, _ := Compose(ws, r.budget, r.count)
		return text, mimeMarkdown, nil
	case KindTask, KindOutput:
		file, exists := fileTask, files.task
		if t.kind == KindOutput {
			file, exists = fileOutput, files.output
		}
		if !exists {
			return "", "", missing{"the workspace has no " + file}
		}
		return r.readItem(ctx, files.name, file, markdownItem, mimeMarkdown)
	case kindSchema:
		if !contains(files.schemas, t.source) {
			return "", "", missing{"the workspace has no schema profile of this source"}
		}
		return r.readItem(ctx, files.name, dirSchemas+"/"+t.source+".md", markdownItem, mimeMarkdown)
	case KindTools:
		ws, err := loadFiles(ctx, r.store, files, now)
		if err != nil {
			return "", "", err
		}
		if len(ws.Tools) == 0 {
			return "", "", missing{"the workspace has no tool configuration in force"}
		}
		return toolsText(ws.Tools), mimeYAML, nil
	case KindSchemas:
		ws, err := loadFiles(ctx, r.store, files, now)
		if err != nil {
			return "", "", err
		}
		if len(ws.Schemas) == 0 {
			return "", "", missing{"the workspace has no schema profile in force"}
		}
		return schemasText(ws, r.budget, r.count), mimeMarkdown, nil
	}
	return "", "", missing{"no memory resource has this URI"}
}

// readItem reads one file of workspace ws and returns it if in force.
func (r *Registry) readItem(ctx context.Context, ws, file string, parse func([]byte, time.Time) (string, error), mime string) (string, string, error) {
	content, _, err := r.store.Read(ctx, workspacesDir+"/"+ws+"/"+file)
	if err != nil {
		if errors.Is(err, memstore.ErrNotFound) {
			return "", "", missing{"the workspace has no " + file}
		}
		return "", "", err
	}
	text, err := parse(content, r.now())
	if errors.Is(err, errNotInForce) {
		return "", "", missing{file + " is no longer, or not yet, in force"}
	}
	if err != nil {
		return "", "", err
	}
	return text + "\n", mime, nil
}

// workspacesText renders memory://workspaces.
func (r *Registry) workspacesText(ctx context.Context) (string, error) {
	names, err := listWorkspaces(ctx, r.store)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("# Workspaces\n\n")
	if len(names) == 0 {
		b.WriteString("No workspaces yet.\n")
		return b.String(), nil
	}
	for _, n := range names {
		m := readMeta(ctx, r.store, workspacesDir+"/"+n)
		b.WriteString("- " + n)
		if line := summary(m); line != "" {
			b.WriteString(": " + line)
		}
		fmt.Fprintf(&b, " (%s)\n", ResourceURI(n, KindContext))
	}
	return b.String(), nil
}

// summary is a workspace's one-line description: title and the first line of
// the description.
func summary(m workspaceMeta) string {
	title, desc := oneLine(m.Title), oneLine(m.Description)
	switch {
	case title != "" && desc != "":
		return title + " — " + desc
	case title != "":
		return title
	}
	return desc
}

// toolsText renders tool configurations as one YAML stream: a comment
// heading and one document per tool.
func toolsText(tools []Item) string {
	var b strings.Builder
	for i, t := range tools {
		if i > 0 {
			b.WriteString("---\n")
		}
		fmt.Fprintf(&b, "# tool: %s\n%s\n", t.Name, t.Text)
	}
	return b.String()
}

// schemasText renders every schema profile of ws, or an index of headlines
// and URIs when the profiles exceed budget tokens.
func schemasText(ws Workspace, budget int, count func(string) int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Data schemas of workspace %s\n", ws.Name)
	head := b.String()
	for _, s := range ws.Schemas {
		b.WriteString("\n## " + s.Name + "\n")
		if body := strings.TrimLeft(stripTitle(s.Text, s.Name), "\n"); body != "" {
			b.WriteString("\n" + demote(body, 2) + "\n")
		}
	}
	if full := b.String(); budget <= 0 || count(full) <= budget {
		return full
	}
	b.Reset()
	b.WriteString(head)
	fmt.Fprintf(&b, "\nThe profiles together exceed the %d-token budget, so this is an index: read each profile from its URI.\n\n", budget)
	for _, s := range ws.Schemas {
		fmt.Fprintf(&b, "- %s: %s (%s)\n", s.Name, headline(s.Text, s.Name), s.URI)
	}
	return b.String()
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

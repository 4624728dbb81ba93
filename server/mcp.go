package server

import (
	"log/slog"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/internal/egress"
	"github.com/selmem/selmem/internal/mcpapps"
	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/refresh"
	"github.com/selmem/selmem/resources"
	"github.com/selmem/selmem/tools"
)

// Name is the server name announced to clients.
const Name = "selmem"

// Transports, for Options.Transport.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
)

// Log keys.
const (
	logKeyAddr      = "addr"
	logKeyErr       = "err"
	logKeyTransport = "transport"
)

// Instructions are the server instructions sent at initialisation: how an
// agent should use the memory, and what belongs in it.
const Instructions = `selmem is shared, persistent memory kept as files under /memories, with history in git.

Before working on a task, load what earlier sessions learned: read the workspace's context resource, memory://workspaces/{workspace}/context (or the start_session prompt), or call memory_view on /memories and then on /memories/workspaces/{workspace}. Use memory_search to find anything else.

What belongs in memory — small, stable, reusable context:
- task specifications: domain rules, format preferences, quality rules (workspaces/{ws}/task.md);
- data schemas: statistical profiles of data sources, never the data (workspaces/{ws}/schemas/);
- tool configurations: kind, endpoint, parameters, auth by reference to an env var or secret name (workspaces/{ws}/tools/{name}.yaml);
- output constraints: contracts between an artifact and its runtime (workspaces/{ws}/output.md).
Write one rule per bullet; edit the existing rule instead of adding a near-duplicate; declare source (user_confirmed when the user said or approved it, inferred when it is your own conclusion).

What does not belong, and is refused: conversation transcripts, tool-call logs and stack traces, reasoning and scratch work, secrets (keys, tokens, passwords), raw data.

Every write is one commit: memory_history shows who changed what and memory_revert undoes it.`

// Options configure the MCP server. A nil *Options is valid.
type Options struct {
	Version   string       // announced to clients; "" is "dev"
	Transport string       // TransportStdio (default) or TransportHTTP: decides the default provenance
	Logger    *slog.Logger // nil discards
	// Refresher serves the artifact tools, resource and prompt; nil
	// leaves them unavailable. NewMCPServer points its change
	// notifications at the resources' subscribers.
	Refresher *refresh.Refresher
	// NextRun says when an artifact's next scheduled refresh is.
	NextRun func(workspace, artifact string) (time.Time, bool)
	// Metrics, when set, measures every tool call and refresh run.
	Metrics *Metrics
	// ExternalChanges carries the memory paths changed by commits made
	// elsewhere (other replicas of the memory, see memstore.Store.Follow);
	// each batch is notified to subscribers like the server's own writes.
	// The server reads it until it is closed.
	ExternalChanges <-chan []string
}

// DefaultSource returns the provenance recorded for a write that declares
// none. Over stdio the local user is the principal and owner, and the host
// runs each tool call on their behalf: user_confirmed, as for the command
// line. Over HTTP it is inferred: an authenticated person's writes are
// recorded as user_confirmed by the tools (their own host acts for them),
// and nothing else vouches for the content.
func DefaultSource(transport string) string {
	if transport == TransportHTTP {
		return memstore.SourceInferred
	}
	return memstore.SourceUserConfirmed
}

// NewMCPServer builds the MCP server over store: every tool, the memory://
// resources and the start_session prompt, and the server instructions. It
// offers completions of names and paths (completion/complete), log messages
// to clients that ask for them (logging/setLevel), and lists in pages of
// PageSize.
// Every accepted write tells the resources which paths changed, so that
// subscribed clients are notified.
func NewMCPServer(store *memstore.Store, cfg Config, opts *Options) *mcpserver.MCPServer {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv := mcpserver.NewMCPServer(Name, o.Version,
		mcpserver.WithInstructions(Instructions),
		mcpserver.WithTitle("selmem memory"),
		mcpserver.WithToolCapabilities(false),
		mcpserver.WithResourceCapabilities(true, true),
		mcpserver.WithPromptCapabilities(false),
		mcpserver.WithLogging(),
		mcpserver.WithCompletions(),
		mcpserver.WithPaginationLimit(PageSize),
		mcpserver.WithRecovery(),
		mcpserver.WithResourceRecovery(),
	)
	installProtocol(srv, log)
	o.Metrics.install(srv)
	if o.Refresher != nil {
		// MCP Apps: artifacts as views, for the clients that declare it.
		mcpserver.WithExtensions(mcpapps.Capability())(srv)
	}
	mcpserver.WithToolFilter(tools.ForClient)(srv)
	reg := resources.Register(srv, store, &resources.Options{Logger: log, Refresher: o.Refresher, NextRun: o.NextRun})
	if o.ExternalChanges != nil {
		go func() {
			for paths := range o.ExternalChanges {
				reg.Changed(paths)
			}
		}()
	}
	mcpserver.WithPromptCompletionProvider(reg)(srv)
	mcpserver.WithResourceCompletionProvider(reg)(srv)
	if o.Refresher != nil {
		o.Refresher.OnChanged(reg.Changed)
		if o.Metrics != nil {
			o.Refresher.OnRecorded(o.Metrics.Refreshed)
		}
	}
	policy, err := egress.New(cfg.Profile.Egress())
	if err != nil {
		// Validate reports it at start-up; refuse everything rather than
		// run with a policy that was not meant.
		log.Error("profile outbound policy is invalid; nothing non-public is allowed", logKeyErr, err)
		policy = egress.Deny()
	}
	tools.Register(srv, store, &tools.Options{
		Author:        cfg.Author,
		DefaultSource: DefaultSource(o.Transport),
		Logger:        log,
		Changed:       reg.Changed,
		DataRoots:     cfg.Profile.DataRoots,
		Egress:        policy,
		Refresher:     o.Refresher,
		Subset:        cfg.Tools.Subset,
		Shared:        o.Transport == TransportHTTP && cfg.HTTP.Auth.Enabled(),
	})
	return srv
}

package tools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/gate"
	"github.com/selmem/selmem/profiler"
	"github.com/selmem/selmem/schemas"
)

// NameProfileSource is the name of the profiling tool.
const NameProfileSource = "profile_source"

// Limits of profile_source.
const (
	// MaxProfileTimeout caps source.timeout_seconds.
	MaxProfileTimeout = 300
	// DefaultProfileTimeout bounds a profile_source call of any source
	// (Options.ProfileTimeout): a file in the data roots may be huge, or
	// a small gzip file a huge stream, and a model should not hold a
	// core for longer than a SQL statement may run
	// (profiler.DefaultStatementTimeout).
	DefaultProfileTimeout = 10 * time.Minute
	// progressInterval is the shortest time between two progress
	// notifications of one call.
	progressInterval = 250 * time.Millisecond
)

// ProfileSourceArgs are profile_source's arguments.
type ProfileSourceArgs struct {
	Workspace    string     `json:"workspace" jsonschema:"Workspace, e.g. sales."`
	Name         string     `json:"name" jsonschema:"Schema name, e.g. orders."`
	Source       SourceArgs `json:"source" jsonschema:"The data to profile."`
	BudgetTokens int        `json:"budget_tokens,omitempty" jsonschema:"Default 60 + 32 per column."`
}

// SourceArgs describe the source profile_source reads.
type SourceArgs struct {
	Kind           string `json:"kind" jsonschema:"Which fields apply."`
	Path           string `json:"path,omitempty" jsonschema:"file: CSV/TSV, JSON, JSONL, Parquet or Arrow (.gz too); sql: a SQLite file."`
	Connection     string `json:"connection,omitempty" jsonschema:"sql: name of a database connection the user configured."`
	Query          string `json:"query,omitempty" jsonschema:"sql: one read-only SELECT."`
	URL            string `json:"url,omitempty" jsonschema:"rest: URL answering JSON to a GET."`
	RecordsPath    string `json:"records_path,omitempty" jsonschema:"rest: dot path to the records array, e.g. data.items."`
	Credential     string `json:"credential,omitempty" jsonschema:"rest: name of a credential the user configured."`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"rest: seconds to wait."`
}

// ProfileRelationship is one candidate join of profile_source's output.
type ProfileRelationship struct {
	From        string  `json:"from" jsonschema:"Referencing column, schema.column (the many side)."`
	To          string  `json:"to" jsonschema:"Referenced key, schema.column."`
	Cardinality string  `json:"cardinality" jsonschema:"many-to-one or one-to-one."`
	Containment float64 `json:"containment" jsonschema:"Share of the referencing values found in the key, 0 to 1."`
}

// ProfileSourceOutput is profile_source's structured output.
type ProfileSourceOutput struct {
	Path          string                `json:"path" jsonschema:"The schema file written, /memories/workspaces/{workspace}/schemas/{name}.md."`
	Commit        string                `json:"commit" jsonschema:"The commit that recorded the profile; empty when the stored profile was already up to date."`
	Changed       []string              `json:"changed" jsonschema:"Files whose content changed: the schema, its join sketches, relationships.md."`
	Rows          int64                 `json:"rows" jsonschema:"Rows profiled."`
	Columns       int                   `json:"columns" jsonschema:"Columns profiled."`
	Relationships []ProfileRelationship `json:"relationships" jsonschema:"Candidate joins across the workspace's schemas after this profile, as in schemas/relationships.md."`
}

func (h *handlers) profileTools() []server.ServerTool {
	return []server.ServerTool{
		typedRequest(mcp.NewTool(NameProfileSource,
			mcp.WithToolTitle("Profile data source"),
			mcp.WithDescription("Profile a data file, SQL query or JSON endpoint into a statistical schema (never raw data) "+
				"at /memories/workspaces/{workspace}/schemas/{name}.md, updating the candidate joins in schemas/relationships.md. "+
				"Use it before working with a data source. Connections and credentials are configured by the user and only named here: "+
				"if one is missing, ask the user to add it, never for a password or DSN."),
			mcp.WithInputSchema[ProfileSourceArgs](),
			withSchema(map[string]map[string]any{
				"source.kind":            {"enum": []string{schemas.KindFile, schemas.KindSQL, schemas.KindREST}},
				"source.timeout_seconds": {"minimum": 1, "maximum": MaxProfileTimeout, "default": 30},
				"budget_tokens":          {"minimum": 0, "maximum": 20000},
			}),
			// Writes memory, adds and replaces only its own generated
			// files; the same data gives the same files and no commit;
			// it reads data outside the memory.
			hints(false, false, true, true),
		), h.profileSource),
	}
}

func (h *handlers) profileSource(ctx context.Context, req mcp.CallToolRequest, a ProfileSourceArgs) *mcp.CallToolResult {
	if err := schemas.CheckWorkspace(a.Workspace); err != nil {
		return h.fail(NameProfileSource, err)
	}
	if err := schemas.CheckName(a.Name); err != nil {
		return h.fail(NameProfileSource, err)
	}
	if res := h.may(ctx, NameProfileSource, access.ActWrite, a.Workspace); res != nil {
		return res
	}
	if a.BudgetTokens < 0 {
		return mcp.NewToolResultError(fmt.Sprintf("Error: budget_tokens %d is negative. Give a number of tokens, or leave it out for the default.", a.BudgetTokens))
	}
	s := a.Source
	if s.TimeoutSeconds < 0 || s.TimeoutSeconds > MaxProfileTimeout {
		return mcp.NewToolResultError(fmt.Sprintf("Error: source.timeout_seconds %d is out of range. Use 1 to %d, or leave it out for 30.", s.TimeoutSeconds, MaxProfileTimeout))
	}
	spec := schemas.SourceSpec{
		Kind: s.Kind, Path: s.Path, Connection: s.Connection, Query: s.Query,
		URL: s.URL, RecordsPath: s.RecordsPath, Credential: s.Credential,
		Timeout: time.Duration(s.TimeoutSeconds) * time.Second,
	}
	// Never Local: the model is not the local user.
	src, connector, err := spec.Source(schemas.Access{Roots: h.opts.DataRoots, Policy: h.opts.Egress})
	if err != nil {
		return h.fail(NameProfileSource, err)
	}
	limit := cmp.Or(h.opts.ProfileTimeout, DefaultProfileTimeout)
	pctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	tp, err := profiler.Profile(pctx, src, &profiler.Options{Name: a.Name, Progress: progressReporter(ctx, req), Secrets: gate.HoldsSecret})
	if err != nil {
		if ctx.Err() == nil && errors.Is(pctx.Err(), context.DeadlineExceeded) {
			return mcp.NewToolResultError(fmt.Sprintf("Error: profiling took longer than %s and was stopped; nothing was written. "+
				"Profile a smaller file, or a SQL query that samples the data.", limit))
		}
		return h.sourceFailed(ctx, NameProfileSource, "profiled", err)
	}
	w := &memstore.WriteOptions{Tool: NameProfileSource, Source: memstore.SourceTrustedToolResult, Author: h.author(ctx)}
	res, err := schemas.Save(ctx, h.store, a.Workspace, a.Name, tp, connector, a.BudgetTokens, w)
	if err != nil {
		return h.fail(NameProfileSource, err)
	}
	h.changed(res.Changed...)
	out := ProfileSourceOutput{Path: res.Schema, Commit: res.Commit, Changed: res.Changed, Rows: tp.Rows, Columns: len(tp.Columns),
		Relationships: make([]ProfileRelationship, len(res.Related))}
	if out.Changed == nil {
		out.Changed = []string{}
	}
	for i, r := range res.Related {
		out.Relationships[i] = ProfileRelationship{From: r.FromSource + "." + r.FromColumn, To: r.ToSource + "." + r.ToColumn,
			Cardinality: r.Cardinality, Containment: r.Containment}
	}
	status := fmt.Sprintf("Profile stored at %s (%d rows, %d columns; %d relationships in the workspace).", res.Schema, tp.Rows, len(tp.Columns), len(res.Related))
	if res.Commit == "" {
		status = fmt.Sprintf("Profile at %s is already up to date (%d rows, %d columns); nothing was written.", res.Schema, tp.Rows, len(tp.Columns))
	}
	return mcp.NewToolResultStructured(out, status+"\n\n"+tp.Markdown(a.BudgetTokens))
}

// sourceFailed reports a failure of tool to read a source ("profiled",
// "loaded"). The readers' messages name the source by base name, host or
// redacted DSN only, and say what to do, so they are shown.
func (h *handlers) sourceFailed(ctx context.Context, tool, verb string, err error) *mcp.CallToolResult {
	if ctx.Err() != nil {
		return h.fail(tool, ctx.Err())
	}
	var me *memstore.Error
	if errors.As(err, &me) {
		return h.fail(tool, err)
	}
	msg := strings.TrimPrefix(err.Error(), "profiler: ")
	h.log.Debug("reading a source failed", logKeyTool, tool, logKeyErr, err)
	return mcp.NewToolResultError("Error: the source could not be " + verb + ": " + strings.TrimSuffix(msg, ".") +
		". Check the source's arguments; nothing was written.")
}

// progressReporter returns a profiler progress callback that sends MCP
// progress notifications for req, at most every progressInterval, or nil
// when the client asked for none.
func progressReporter(ctx context.Context, req mcp.CallToolRequest) func(read, total int64) {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return nil
	}
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return nil
	}
	token := req.Params.Meta.ProgressToken
	var (
		mu   sync.Mutex
		last time.Time
		sent int64 = -1
	)
	return func(read, total int64) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if read <= sent || now.Sub(last) < progressInterval {
			return
		}
		last, sent = now, read
		params := map[string]any{"progressToken": token, "progress": read, "message": "reading the source"}
		if total > 0 {
			params["total"] = total
		}
		// A client that went away or cannot keep up misses a progress
		// update, which is harmless.
		_ = srv.SendNotificationToClient(ctx, "notifications/progress", params)
	}
}

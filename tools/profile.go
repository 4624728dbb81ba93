package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/profiler"
	"github.com/selmem/selmem/schemas"
)

// NameProfileSource is the name of the profiling tool.
const NameProfileSource = "profile_source"

// Limits of profile_source.
const (
	// MaxProfileTimeout caps source.timeout_seconds.
	MaxProfileTimeout = 300
	// ProfileEnvPrefix starts the name of every environment variable
	// profile_source may read (dsn_env, header values): a model names
	// them, so it must not be able to name any secret of the server's
	// environment and send it to a URL of its choosing.
	ProfileEnvPrefix = "SELMEM_PROFILE_"
	// progressInterval is the shortest time between two progress
	// notifications of one call.
	progressInterval = 250 * time.Millisecond
)

// ProfileSourceArgs are profile_source's arguments.
type ProfileSourceArgs struct {
	Workspace    string     `json:"workspace" jsonschema:"Workspace to store the schema in: the name under /memories/workspaces/, e.g. sales."`
	Name         string     `json:"name" jsonschema:"Name of the schema, a single name such as orders: the profile is written to /memories/workspaces/{workspace}/schemas/{name}.md."`
	Source       SourceArgs `json:"source" jsonschema:"The data source to profile."`
	BudgetTokens int        `json:"budget_tokens,omitempty" jsonschema:"Token budget of the rendered profile; default 60 + 32 per column, at most 2700."`
}

// SourceArgs describe the source profile_source reads.
type SourceArgs struct {
	Kind           string            `json:"kind" jsonschema:"file, sql or rest."`
	Path           string            `json:"path,omitempty" jsonschema:"file: absolute path of a CSV/TSV, JSON, JSON Lines, Parquet or Arrow file (optionally .gz), inside the server's data roots."`
	DSNEnv         string            `json:"dsn_env,omitempty" jsonschema:"sql: name of the environment variable, starting with SELMEM_PROFILE_, that holds the database's DSN (postgres://… or a SQLite file). Prefer it to dsn: the credentials never pass through you."`
	DSN            string            `json:"dsn,omitempty" jsonschema:"sql: a DSN without credentials, e.g. a SQLite file inside the data roots. A DSN holding a password is refused: use dsn_env."`
	Query          string            `json:"query,omitempty" jsonschema:"sql: the SELECT whose rows to profile."`
	URL            string            `json:"url,omitempty" jsonschema:"rest: http or https URL answering JSON to a GET."`
	RecordsPath    string            `json:"records_path,omitempty" jsonschema:"rest: dot-separated path to the records array in the response, e.g. data.items; default the document itself."`
	Headers        map[string]string `json:"headers,omitempty" jsonschema:"rest: request headers, each mapped to the NAME of the environment variable (starting with SELMEM_PROFILE_) that holds its value, e.g. {\"Authorization\": \"SELMEM_PROFILE_API_TOKEN\"}."`
	TimeoutSeconds int               `json:"timeout_seconds,omitempty" jsonschema:"rest: seconds to wait for the endpoint, 1 to 300; default 30."`
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
			mcp.WithDescription("Profile a data source — a CSV/TSV/JSON/Parquet/Arrow file, the rows of a SQL query, or the JSON records of a REST endpoint — "+
				"into a compact statistical schema (types, nulls, distinct counts, ranges, top values, keys; never the raw data), "+
				"stored as /memories/workspaces/{workspace}/schemas/{name}.md, and recompute the workspace's schemas/relationships.md (candidate join keys). "+
				"Returns the rendered profile. Profiling the same data again changes nothing."),
			mcp.WithInputSchema[ProfileSourceArgs](),
			withSchema(map[string]map[string]any{
				"source.kind":            {"enum": []string{schemas.KindFile, schemas.KindSQL, schemas.KindREST}},
				"source.timeout_seconds": {"minimum": 1, "maximum": MaxProfileTimeout, "default": 30},
				"budget_tokens":          {"minimum": 0, "maximum": 20000},
			}),
			mcp.WithOutputSchema[ProfileSourceOutput](),
			// Writes memory, adds and replaces only its own generated
			// files; the same data gives the same files and no commit;
			// it reads data outside the memory.
			hints("Profile data source", false, false, true, true),
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
	if a.BudgetTokens < 0 {
		return mcp.NewToolResultError(fmt.Sprintf("Error: budget_tokens %d is negative. Give a number of tokens, or leave it out for the default.", a.BudgetTokens))
	}
	s := a.Source
	if s.TimeoutSeconds < 0 || s.TimeoutSeconds > MaxProfileTimeout {
		return mcp.NewToolResultError(fmt.Sprintf("Error: source.timeout_seconds %d is out of range. Use 1 to %d, or leave it out for 30.", s.TimeoutSeconds, MaxProfileTimeout))
	}
	if s.DSN != "" && schemas.HasPassword(s.DSN) {
		// Do not echo the DSN: it holds a secret.
		return mcp.NewToolResultError("Error: source.dsn holds a password, and credentials must not pass through the conversation. " +
			"Ask the user to put the DSN in an environment variable of the selmem server named " + ProfileEnvPrefix + "… and pass that name as source.dsn_env.")
	}
	if s.DSNEnv != "" && !strings.HasPrefix(s.DSNEnv, ProfileEnvPrefix) {
		return mcp.NewToolResultError(fmt.Sprintf("Error: source.dsn_env %q does not start with %s; profile_source reads only such variables. "+
			"Ask the user to set %s<NAME> in selmem's environment to the DSN and pass that name.", s.DSNEnv, ProfileEnvPrefix, ProfileEnvPrefix))
	}
	for name, env := range s.Headers {
		if !strings.HasPrefix(env, ProfileEnvPrefix) {
			return mcp.NewToolResultError(fmt.Sprintf("Error: source.headers[%q] names %q, which does not start with %s; header values are read only from such variables. "+
				"Ask the user to set %s<NAME> in selmem's environment and pass that name.", name, env, ProfileEnvPrefix, ProfileEnvPrefix))
		}
	}
	spec := schemas.SourceSpec{
		Kind: s.Kind, Path: s.Path, DSN: s.DSN, DSNEnv: s.DSNEnv, Query: s.Query,
		URL: s.URL, RecordsPath: s.RecordsPath, Headers: s.Headers,
		Timeout: time.Duration(s.TimeoutSeconds) * time.Second,
	}
	roots := h.opts.DataRoots
	if roots == nil {
		roots = []string{} // never schemas.AnyFile: the model is not the local user
	}
	src, connector, err := spec.Source(roots)
	if err != nil {
		return h.fail(NameProfileSource, err)
	}
	tp, err := profiler.Profile(ctx, src, &profiler.Options{Name: a.Name, Progress: progressReporter(ctx, req)})
	if err != nil {
		return h.profileFailed(ctx, err)
	}
	w := &memstore.WriteOptions{Tool: NameProfileSource, Source: memstore.SourceTrustedToolResult, Author: h.opts.Author}
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

// profileFailed reports a failure to read or profile the source. The
// profiler's messages name the source by base name, host or redacted DSN
// only, and say what to do, so they are shown.
func (h *handlers) profileFailed(ctx context.Context, err error) *mcp.CallToolResult {
	if ctx.Err() != nil {
		return h.fail(NameProfileSource, ctx.Err())
	}
	var me *memstore.Error
	if errors.As(err, &me) {
		return h.fail(NameProfileSource, err)
	}
	msg := strings.TrimPrefix(err.Error(), "profiler: ")
	h.log.Debug("profile failed", logKeyTool, NameProfileSource, logKeyErr, err)
	return mcp.NewToolResultError("Error: the source could not be profiled: " + strings.TrimSuffix(msg, ".") +
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

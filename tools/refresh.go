package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/refresh"
)

// Names of the artifact tools.
const (
	NameRefreshArtifact   = "refresh_artifact"
	NameQueryArtifactData = "query_artifact_data"
)

// RefreshArtifactArgs are refresh_artifact's arguments.
type RefreshArtifactArgs struct {
	Workspace string `json:"workspace" jsonschema:"Workspace, e.g. sales."`
	Artifact  string `json:"artifact" jsonschema:"Artifact name."`
	Source    string `json:"source,omitempty" jsonschema:"Load from this connector (tools/{source}.yaml) from now on."`
	Rebind    bool   `json:"rebind,omitempty" jsonschema:"Only after regenerating the artifact: accept the new data's columns."`
}

// ArtifactColumn is a column of an artifact's data.
type ArtifactColumn struct {
	Name string `json:"name" jsonschema:"Column name."`
	Type string `json:"type" jsonschema:"integer, number, boolean, date, timestamp, text or empty."`
}

// ArtifactTypeChange is a bound column whose type no longer fits.
type ArtifactTypeChange struct {
	Column string `json:"column" jsonschema:"Column name."`
	Was    string `json:"was" jsonschema:"Type the artifact was generated against."`
	Now    string `json:"now" jsonschema:"Type in the new data."`
}

// RefreshTimings are the phases of a refresh, in milliseconds.
type RefreshTimings struct {
	Load     float64 `json:"load_ms" jsonschema:"Reading the data through the connector."`
	Check    float64 `json:"check_ms" jsonschema:"Checking the columns."`
	Snapshot float64 `json:"snapshot_ms" jsonschema:"Storing the snapshot."`
	Profile  float64 `json:"profile_ms" jsonschema:"Profiling the data."`
	Commit   float64 `json:"commit_ms" jsonschema:"Committing the profile and binding."`
	Total    float64 `json:"total_ms" jsonschema:"The whole refresh."`
}

// RefreshArtifactOutput is refresh_artifact's structured output.
type RefreshArtifactOutput struct {
	Outcome      string               `json:"outcome" jsonschema:"refreshed (new data committed), unchanged (the data was already shown) or incompatible (nothing changed; regenerate the artifact)."`
	Commit       string               `json:"commit" jsonschema:"The commit of the profile and binding; empty unless refreshed."`
	Rows         int64                `json:"rows" jsonschema:"Rows in the new data."`
	Columns      []ArtifactColumn     `json:"columns" jsonschema:"Columns of the new data."`
	ColumnsAdded []string             `json:"columns_added" jsonschema:"Columns beyond the artifact's column set."`
	Missing      []string             `json:"missing_columns" jsonschema:"incompatible: columns of the artifact the data lacks."`
	TypeChanges  []ArtifactTypeChange `json:"type_changes" jsonschema:"incompatible: columns whose type changed incompatibly."`
	Snapshot     string               `json:"snapshot" jsonschema:"SHA-256 of the data the artifact now shows."`
	Timings      RefreshTimings       `json:"timings" jsonschema:"Time per phase."`
	ModelCalls   int                  `json:"model_calls" jsonschema:"Always 0: a refresh never calls a model."`
	Warnings     []string             `json:"warnings" jsonschema:"Things to look at, e.g. a bound column with no values."`
	Lint         []string             `json:"lint" jsonschema:"Values of the data copied into the program (file:line: kind: message): they will be stale after the next refresh; compute them from the injected data instead."`
}

// QueryArtifactDataArgs are query_artifact_data's arguments.
type QueryArtifactDataArgs struct {
	Workspace string `json:"workspace" jsonschema:"Workspace, e.g. sales."`
	Artifact  string `json:"artifact" jsonschema:"Artifact name."`
	SQL       string `json:"sql" jsonschema:"e.g. SELECT region, sum(amount) FROM data GROUP BY region"`
}

// QueryArtifactDataOutput is query_artifact_data's structured output.
type QueryArtifactDataOutput struct {
	Columns   []string `json:"columns" jsonschema:"Result column names."`
	Rows      [][]any  `json:"rows" jsonschema:"Result rows."`
	Truncated bool     `json:"truncated" jsonschema:"More rows matched than were returned; aggregate or filter."`
	Snapshot  string   `json:"snapshot" jsonschema:"SHA-256 of the data queried."`
}

func (h *handlers) refreshTools() []server.ServerTool {
	return []server.ServerTool{
		typedRequest(mcp.NewTool(NameRefreshArtifact,
			mcp.WithToolTitle("Refresh artifact data"),
			mcp.WithDescription("Reload an artifact's data (a dashboard or report under /memories/workspaces/{workspace}/artifacts/{artifact}/) through its connector "+
				"when the user wants current numbers; never rewrite an artifact for new data. "+
				"If the new data lacks a column the artifact uses, nothing changes and the result says why: "+
				"use the regenerate_artifact prompt, rewrite the program, then call again with rebind."),
			mcp.WithInputSchema[RefreshArtifactArgs](),
			// Writes its own files only; the same data again changes
			// nothing; it reads data outside the memory.
			hints(false, false, true, true),
			withUI(),
		), h.refreshArtifact),
		typedRequest(mcp.NewTool(NameQueryArtifactData,
			mcp.WithToolTitle("Query artifact data"),
			mcp.WithDescription("Answer a question about an artifact's current data with one read-only SQLite SELECT over the table data, "+
				"instead of reading the data; results are capped."),
			mcp.WithInputSchema[QueryArtifactDataArgs](),
			annotations(true, false, true),
		), h.queryArtifactData),
	}
}

// errNoRefresher answers the artifact tools of a server built without a
// refresher.
const errNoRefresher = "Error: artifacts are not available on this server."

func (h *handlers) refreshArtifact(ctx context.Context, _ mcp.CallToolRequest, a RefreshArtifactArgs) *mcp.CallToolResult {
	if h.opts.Refresher == nil {
		return mcp.NewToolResultError(errNoRefresher)
	}
	if res := h.may(ctx, NameRefreshArtifact, access.ActWrite, a.Workspace); res != nil {
		return res
	}
	res, err := h.opts.Refresher.Refresh(ctx, refresh.Request{Workspace: a.Workspace, Artifact: a.Artifact, Source: a.Source, Rebind: a.Rebind, Trigger: "tool"})
	out := RefreshArtifactOutput{Columns: []ArtifactColumn{}, ColumnsAdded: []string{}, Missing: []string{}, TypeChanges: []ArtifactTypeChange{}, Warnings: []string{}, Lint: []string{}}
	var inc *refresh.IncompatibleError
	switch {
	case errors.As(err, &inc):
		out.Outcome = refresh.OutcomeIncompatible
		out.Columns = artifactColumns(inc.Break.Columns)
		out.Missing = append(out.Missing, inc.Break.Missing...)
		for _, c := range inc.Break.Changed {
			out.TypeChanges = append(out.TypeChanges, ArtifactTypeChange(c))
		}
		return mcp.NewToolResultStructured(out, inc.Error()+fmt.Sprintf(" Get the regenerate_artifact prompt with workspace %s and artifact %s.", a.Workspace, a.Artifact))
	case err != nil:
		return h.failLoad(ctx, NameRefreshArtifact, err)
	}
	out.Outcome, out.Commit, out.Rows = res.Outcome, res.Commit, res.Rows
	out.Columns = artifactColumns(res.Columns)
	out.ColumnsAdded = append(out.ColumnsAdded, res.ColumnsAdded...)
	out.Warnings = append(out.Warnings, res.Warnings...)
	out.Lint = append(out.Lint, res.Lint...)
	out.Snapshot = res.Binding.Snapshot.SHA256
	out.Timings = RefreshTimings(res.Timings)
	var b strings.Builder
	if res.Outcome == refresh.OutcomeUnchanged {
		fmt.Fprintf(&b, "Artifact %s/%s already shows this data (%d rows); nothing was written.", a.Workspace, a.Artifact, res.Rows)
	} else {
		fmt.Fprintf(&b, "Refreshed %s/%s: %d rows, %d columns", a.Workspace, a.Artifact, res.Rows, len(res.Columns))
		if len(res.ColumnsAdded) > 0 {
			fmt.Fprintf(&b, " (new: %s)", strings.Join(res.ColumnsAdded, ", "))
		}
		fmt.Fprintf(&b, ", in %.0f ms; committed %s.", res.Timings.Total, shortHash(res.Commit))
	}
	b.WriteString(" No model was called.")
	for _, w := range res.Warnings {
		b.WriteString(" Warning: " + w + ".")
	}
	if len(res.Lint) > 0 {
		fmt.Fprintf(&b, "\nThe program holds %d copies of values from the data, which will be stale after the next refresh; compute them from the injected data instead:\n- %s",
			len(res.Lint), strings.Join(res.Lint, "\n- "))
	}
	return h.withView(ctx, a.Workspace, a.Artifact, mcp.NewToolResultStructured(out, b.String()))
}

func (h *handlers) queryArtifactData(ctx context.Context, _ mcp.CallToolRequest, a QueryArtifactDataArgs) *mcp.CallToolResult {
	if h.opts.Refresher == nil {
		return mcp.NewToolResultError(errNoRefresher)
	}
	if res := h.may(ctx, NameQueryArtifactData, access.ActRead, a.Workspace); res != nil {
		return res
	}
	res, err := h.opts.Refresher.Query(ctx, a.Workspace, a.Artifact, a.SQL, refresh.QueryLimits{})
	if err != nil {
		return h.fail(NameQueryArtifactData, err)
	}
	out := QueryArtifactDataOutput(res)
	text := fmt.Sprintf("%d rows", len(res.Rows))
	if res.Truncated {
		text += " (truncated: aggregate or filter to see the rest)"
	}
	return mcp.NewToolResultStructured(out, text+".")
}

// failLoad reports a failed refresh: store and argument errors as they
// are, the readers' and the outbound policy's as sourceFailed does.
func (h *handlers) failLoad(ctx context.Context, tool string, err error) *mcp.CallToolResult {
	var tl *refresh.TooLargeError
	if errors.As(err, &tl) {
		return mcp.NewToolResultError(tl.Error())
	}
	return h.sourceFailed(ctx, tool, "loaded", err)
}

func artifactColumns(cols []refresh.Column) []ArtifactColumn {
	out := make([]ArtifactColumn, len(cols))
	for i, c := range cols {
		out[i] = ArtifactColumn(c)
	}
	return out
}

// shortHash is the first 12 digits of a commit hash.
func shortHash(h string) string { return h[:min(12, len(h))] }

package resources

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/gate"
	"github.com/selmem/selmem/profiler"
	"github.com/selmem/selmem/refresh"
)

// PromptRegenerateArtifact is the prompt that hands an artifact whose data
// no longer fits to the agent that must regenerate it.
const PromptRegenerateArtifact = "regenerate_artifact"

// maxProgramBytes caps the program text the regenerate prompt carries.
const maxProgramBytes = 96 << 10

// artifactsTemplate describes memory://workspaces/{workspace}/artifacts.
var artifactsTemplate = struct{ uri, name, title, desc string }{
	"memory://workspaces/{workspace}/artifacts", "workspace-artifacts", "Artifacts",
	"A workspace's artifacts (dashboards, reports) with the data each is bound to, its last refresh and outcome, and its next scheduled run.",
}

// registerArtifacts adds the artifacts template and the
// regenerate_artifact prompt.
func (r *Registry) registerArtifacts() {
	r.srv.AddPrompt(mcp.NewPrompt(PromptRegenerateArtifact,
		mcp.WithPromptTitle("Regenerate an artifact for new data"),
		mcp.WithPromptDescription("For an artifact whose refresh was refused because its data changed shape: the workspace's context, the columns the artifact was built for and the new data's profile, and the artifact's program, with what to do."),
		mcp.WithArgument("workspace", mcp.RequiredArgument(), mcp.ArgumentDescription("The workspace's name.")),
		mcp.WithArgument("artifact", mcp.RequiredArgument(), mcp.ArgumentDescription("The artifact's name, as listed by memory://workspaces/{workspace}/artifacts."))),
		r.handleRegenerate)
}

// artifactsText lists a workspace's artifacts.
func (r *Registry) artifactsText(ctx context.Context, ws string) (string, error) {
	if r.refresher == nil {
		return "", missing{"artifacts are not available on this server"}
	}
	all, err := r.refresher.Bindings(ctx)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Artifacts of workspace %s\n\n", ws)
	n := 0
	for _, a := range all {
		if a.Workspace != ws {
			continue
		}
		n++
		bd := a.Binding
		fmt.Fprintf(&b, "## %s\n\n- connector: %s (tools/%s.yaml)\n", a.Artifact, bd.Connector, bd.Connector)
		if s := bd.Snapshot; s != nil {
			fmt.Fprintf(&b, "- data: %d rows, %d columns, from %s, refreshed %s\n", s.Rows, s.Columns, s.Source, s.RefreshedAt.UTC().Format(time.RFC3339))
		} else {
			b.WriteString("- data: none yet\n")
		}
		if st, ok := r.refresher.Snapshots().LastStatus(ws, a.Artifact); ok {
			fmt.Fprintf(&b, "- last run: %s at %s (%s)", st.Outcome, st.At.UTC().Format(time.RFC3339), st.Trigger)
			if st.Outcome == refresh.OutcomeIncompatible || st.Outcome == refresh.OutcomeFailed {
				fmt.Fprintf(&b, ": %s", st.Message)
			}
			b.WriteString("\n")
		}
		if bd.Schedule != "" {
			fmt.Fprintf(&b, "- schedule: %s", bd.Schedule)
			if next, ok := r.nextRun(ws, a.Artifact); ok {
				fmt.Fprintf(&b, ", next run %s", next.UTC().Format(time.RFC3339))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	if n == 0 {
		return "", missing{"the workspace has no artifact bound to data"}
	}
	return b.String(), nil
}

func (r *Registry) nextRun(ws, artifact string) (time.Time, bool) {
	if r.schedule == nil {
		return time.Time{}, false
	}
	return r.schedule(ws, artifact)
}

// handleRegenerate serves regenerate_artifact.
func (r *Registry) handleRegenerate(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	ws, artifact := req.Params.Arguments["workspace"], req.Params.Arguments["artifact"]
	if r.refresher == nil {
		return nil, fmt.Errorf("%w: artifacts are not available on this server", mcp.ErrInvalidParams)
	}
	if ws == "" || artifact == "" {
		return nil, fmt.Errorf("%w: the arguments workspace and artifact are required", mcp.ErrInvalidParams)
	}
	if err := r.store.Check(ctx, access.ActRead, workspacesDir+"/"+ws); err != nil {
		return nil, r.fail(ResourceURI(ws, KindArtifacts), err)
	}
	bd, err := r.refresher.ReadBinding(ctx, ws, artifact)
	if err != nil {
		var me *memstore.Error
		if errors.As(err, &me) {
			return nil, fmt.Errorf("%w: %s", mcp.ErrInvalidParams, strings.TrimPrefix(me.Msg, "Error: "))
		}
		return nil, r.fail(ResourceURI(ws, KindArtifacts), err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The data of artifact %s in workspace %s changed shape, so it cannot be refreshed as it is. Regenerate its program for the new data.\n\n", artifact, ws)
	b.WriteString("## What to do\n\n")
	b.WriteString("1. Rewrite the program below so it works with the new columns, keeping what it shows and how, as far as the new data allows.\n")
	fmt.Fprintf(&b, "2. Read the data only from the injection point, the element `%s` (or the same-origin `%s`); never hardcode values from the data, not even in insight text.\n", refresh.InjectionPoint, refresh.DataFile)
	fmt.Fprintf(&b, "3. Write the files with memory_create or memory_str_replace under %s/ (leave %s alone).\n", refresh.ArtifactDir(ws, artifact), refresh.BindingName)
	fmt.Fprintf(&b, "4. Call refresh_artifact with workspace %s, artifact %s and rebind true, so the artifact is bound to the new columns.\n\n", ws, artifact)

	if files, err := scanWorkspace(ctx, r.store, ws); err == nil {
		if w, err := loadFiles(ctx, r.store, files, r.now()); err == nil {
			text, _ := Compose(w, r.budget, r.count)
			b.WriteString("## Workspace context\n\n" + text + "\n\n")
		}
	}
	b.WriteString("## Columns the artifact was generated against\n\n")
	for _, c := range bd.Columns {
		fmt.Fprintf(&b, "- %s (%s)\n", c.Name, c.Type)
	}
	b.WriteString("\n## The new data\n\n")
	if st, ok := r.refresher.Snapshots().LastStatus(ws, artifact); ok && st.Break != nil {
		if len(st.Break.Missing) > 0 {
			fmt.Fprintf(&b, "Missing columns: %s.\n", strings.Join(st.Break.Missing, ", "))
		}
		for _, c := range st.Break.Changed {
			fmt.Fprintf(&b, "Type changed: %s from %s to %s.\n", c.Column, c.Was, c.Now)
		}
		b.WriteString("\n")
	}
	t, ref, err := r.refresher.LoadSource(ctx, ws, bd.Connector, bd.Parameters)
	if err != nil {
		fmt.Fprintf(&b, "The data could not be loaded now (%s); ask the user what the new data looks like.\n\n", strings.TrimPrefix(err.Error(), "Error: "))
	} else {
		tp, perr := profiler.Profile(ctx, refresh.Replay(t), &profiler.Options{Name: bd.SchemaName(), Secrets: gate.HoldsSecret})
		t.Release()
		if perr == nil {
			fmt.Fprintf(&b, "Profile of the data now delivered by %s:\n\n%s\n\n", ref, tp.Markdown(0))
		}
	}
	b.WriteString("## The program\n\n")
	entries, _ := r.store.List(ctx, refresh.ArtifactDir(ws, artifact))
	size := 0
	for _, e := range entries {
		if e.IsDir || e.Name == refresh.BindingName {
			continue
		}
		content, _, err := r.store.Read(ctx, e.Path)
		if err != nil {
			continue
		}
		if size+len(content) > maxProgramBytes {
			fmt.Fprintf(&b, "### %s\n\n(%d bytes, not shown: read it with memory_view.)\n\n", e.Path, len(content))
			continue
		}
		size += len(content)
		fmt.Fprintf(&b, "### %s\n\n````\n%s\n````\n\n", e.Path, strings.TrimRight(string(content), "\n"))
	}
	return mcp.NewGetPromptResult("Regenerate artifact "+ws+"/"+artifact,
		[]mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(b.String()))}), nil
}

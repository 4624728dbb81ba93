package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/selmem/selmem/memstore"
)

// Names of the tools that share workspaces: drafts and proposals.
const (
	NameDraftOpen       = "memory_draft_open"
	NamePublish         = "memory_publish"
	NameDraftDiscard    = "memory_draft_discard"
	NameProposals       = "memory_proposals"
	NameProposalApprove = "memory_proposal_approve"
	NameProposalReject  = "memory_proposal_reject"
)

// WorkspaceArgs name a workspace.
type WorkspaceArgs struct {
	Workspace string `json:"workspace" jsonschema:"Workspace name."`
}

// PublishArgs are memory_publish's arguments.
type PublishArgs struct {
	Workspace string `json:"workspace" jsonschema:"Workspace name."`
	Message   string `json:"message" jsonschema:"One-line commit message."`
}

// ProposalArgs name one proposal.
type ProposalArgs struct {
	Workspace string `json:"workspace" jsonschema:"Workspace name."`
	ID        string `json:"id" jsonschema:"Proposal id."`
}

// ShareOutput is the structured output of the draft and proposal writes.
type ShareOutput struct {
	Commit string `json:"commit" jsonschema:"The commit made (published, or the draft's); empty when none."`
}

// ProposalItem is one row of memory_proposals' structured output.
type ProposalItem struct {
	ID         string `json:"id" jsonschema:"Id to approve or reject."`
	Proposer   string `json:"proposer" jsonschema:"Who proposed it; the author once approved."`
	Subject    string `json:"subject" jsonschema:"The write, e.g. str_replace workspaces/sales/task.md."`
	Source     string `json:"source" jsonschema:"Declared provenance; empty when none."`
	Confidence string `json:"confidence" jsonschema:"Declared confidence; empty when none."`
	Time       string `json:"time" jsonschema:"When it was proposed, RFC 3339, UTC."`
	Diff       string `json:"diff" jsonschema:"Unified diff against the published version it was made on."`
}

// ProposalsOutput is memory_proposals' structured output.
type ProposalsOutput struct {
	Proposals []ProposalItem `json:"proposals" jsonschema:"Pending proposals, oldest first."`
}

func (h *handlers) shareTools() []server.ServerTool {
	return []server.ServerTool{
		typed(mcp.NewTool(NameDraftOpen,
			mcp.WithToolTitle("Open a draft"),
			mcp.WithDescription("Start your private draft of a workspace: your writes to it stay unseen by others until memory_publish. Again after a conflict: keeps your versions."),
			mcp.WithInputSchema[WorkspaceArgs](),
			annotations(false, false, false),
		), h.draftOpen),
		typed(mcp.NewTool(NamePublish,
			mcp.WithToolTitle("Publish a draft"),
			mcp.WithDescription("Merge your draft into the published workspace as one commit; a conflict changes nothing and shows both versions."),
			mcp.WithInputSchema[PublishArgs](),
			annotations(false, true, false),
		), h.publish),
		typed(mcp.NewTool(NameDraftDiscard,
			mcp.WithToolTitle("Discard a draft"),
			mcp.WithDescription("Throw away your draft of a workspace; the published one stays."),
			mcp.WithInputSchema[WorkspaceArgs](),
			annotations(false, true, true),
		), h.draftDiscard),
		typed(mcp.NewTool(NameProposals,
			mcp.WithToolTitle("List proposals"),
			mcp.WithDescription("List a workspace's proposals (writes waiting for an owner) with diffs."),
			mcp.WithInputSchema[WorkspaceArgs](),
			annotations(true, false, true),
		), h.proposals),
		typed(mcp.NewTool(NameProposalApprove,
			mcp.WithToolTitle("Approve a proposal"),
			mcp.WithDescription("Publish a pending proposal as its proposer's commit (owners only)."),
			mcp.WithInputSchema[ProposalArgs](),
			annotations(false, true, true),
		), h.proposalApprove),
		typed(mcp.NewTool(NameProposalReject,
			mcp.WithToolTitle("Reject a proposal"),
			mcp.WithDescription("Reject a pending proposal: delete it unpublished (owners only)."),
			mcp.WithInputSchema[ProposalArgs](),
			annotations(false, true, true),
		), h.proposalReject),
	}
}

// shared answers a draft or proposal write; published reports whether it
// changed the published workspace ws (so subscribers hear of it).
func (h *handlers) shared(tool, ws string, r memstore.WriteResult, err error, published bool) *mcp.CallToolResult {
	if err != nil {
		return h.fail(tool, err)
	}
	if published && r.Commit != "" {
		h.changed(memstore.Root + "/workspaces/" + ws)
	}
	return mcp.NewToolResultStructured(ShareOutput{Commit: r.Commit}, r.Message)
}

func (h *handlers) draftOpen(ctx context.Context, a WorkspaceArgs) *mcp.CallToolResult {
	r, err := h.store.OpenDraft(ctx, a.Workspace)
	return h.shared(NameDraftOpen, a.Workspace, r, err, false)
}

func (h *handlers) publish(ctx context.Context, a PublishArgs) *mcp.CallToolResult {
	r, err := h.store.Publish(ctx, a.Workspace, a.Message)
	return h.shared(NamePublish, a.Workspace, r, err, true)
}

func (h *handlers) draftDiscard(ctx context.Context, a WorkspaceArgs) *mcp.CallToolResult {
	r, err := h.store.DiscardDraft(ctx, a.Workspace)
	return h.shared(NameDraftDiscard, a.Workspace, r, err, false)
}

func (h *handlers) proposalApprove(ctx context.Context, a ProposalArgs) *mcp.CallToolResult {
	r, err := h.store.Approve(ctx, a.Workspace, a.ID)
	return h.shared(NameProposalApprove, a.Workspace, r, err, true)
}

func (h *handlers) proposalReject(ctx context.Context, a ProposalArgs) *mcp.CallToolResult {
	r, err := h.store.Reject(ctx, a.Workspace, a.ID)
	return h.shared(NameProposalReject, a.Workspace, r, err, false)
}

func (h *handlers) proposals(ctx context.Context, a WorkspaceArgs) *mcp.CallToolResult {
	ps, err := h.store.Proposals(ctx, a.Workspace)
	if err != nil {
		return h.fail(NameProposals, err)
	}
	out := ProposalsOutput{Proposals: []ProposalItem{}}
	var b strings.Builder
	if len(ps) == 0 {
		fmt.Fprintf(&b, "Workspace %s has no pending proposals.\n", a.Workspace)
	}
	for _, p := range ps {
		item := ProposalItem{ID: p.ID, Proposer: p.Proposer, Subject: p.Subject, Source: p.Source,
			Confidence: p.Confidence, Time: p.Time.UTC().Format(time.RFC3339), Diff: p.Diff}
		out.Proposals = append(out.Proposals, item)
		fmt.Fprintf(&b, "Proposal %s by %s at %s: %s", item.ID, item.Proposer, item.Time, item.Subject)
		if item.Source != "" {
			fmt.Fprintf(&b, " (source %s", item.Source)
			if item.Confidence != "" {
				fmt.Fprintf(&b, ", confidence %s", item.Confidence)
			}
			b.WriteString(")")
		}
		b.WriteString("\n" + item.Diff + "\n")
	}
	return mcp.NewToolResultStructured(out, b.String())
}

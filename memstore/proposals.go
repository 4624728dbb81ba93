package memstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/selmem/selmem/memstore/access"
)

// A proposal is a write that needs an owner's approval: a commit on top of
// the published commit of its time, named by refs/proposals/<ws>/<id>, with
// the proposer as author and trailers Proposal: <ws>, Tool:, Source:,
// Confidence:, Author:. Approving merges it onto the published branch as
// a draft is published; rejecting deletes the ref.

const (
	proposalsPrefix  = "refs/proposals/"
	trailerProposal  = "Proposal"
	trailerApproved  = "Approved-by"
	maxProposalTries = 3
)

func proposalRef(ws, id string) plumbing.ReferenceName {
	return plumbing.ReferenceName(proposalsPrefix + ws + "/" + id)
}

// newProposalID returns a short id, ordered by time, unique with high
// probability (and checked: the ref must not exist).
func (s *Store) newProposalID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return s.now().UTC().Format("060102-150405") + "-" + hex.EncodeToString(b[:])
}

// writeProposal records changes, made on top of the published commit head,
// as a new proposal for d.ws.
func (s *Store) writeProposal(ctx context.Context, d destination, head *object.Commit, changes []change, subject, tool string, w *WriteOptions) (string, error) {
	if _, err := s.checkChanges(ctx, head, head.Hash, changes); err != nil {
		return "", err
	}
	meta := s.meta(subject, &tool, s.authored(ctx, w))
	meta.Trailers = append(meta.Trailers, trailer{trailerProposal, d.ws})
	next, err := s.git.commit(head, changes, meta)
	if err != nil {
		s.git.dropObjects()
		return "", err
	}
	for range maxProposalTries {
		id := s.newProposalID()
		err = s.moveRef(proposalRef(d.ws, id), plumbing.ZeroHash, next, meta)
		if errors.Is(err, errHeadMoved) {
			continue // the id is taken
		}
		if err != nil {
			return "", err
		}
		s.routed = &routedWrite{kind: toProposal, ws: d.ws, id: id}
		return next.String(), nil
	}
	return "", fmt.Errorf("record a proposal: %w", err)
}

// Proposal is a pending proposal.
type Proposal struct {
	ID         string
	Workspace  string
	Proposer   string
	Subject    string // what the write did, e.g. "str_replace workspaces/sales/task.md"
	Source     string
	Confidence string
	Time       time.Time
	Commit     string
	// Diff is the unified diff of the proposal against the published
	// commit it was made on.
	Diff string
}

// Proposals lists the pending proposals for workspace ws, oldest first,
// with their diffs. It needs the viewer role.
func (s *Store) Proposals(ctx context.Context, ws string) ([]Proposal, error) {
	if err := s.checkProposalRole(ctx, ws, "list the proposals of", access.RoleViewer); err != nil {
		return nil, err
	}
	refs, err := s.git.listRefs(proposalsPrefix + ws + "/")
	if err != nil {
		return nil, err
	}
	var out []Proposal
	for _, name := range sortedRefs(refs) {
		c, err := object.GetCommit(s.git.repo.Storer, refs[name])
		if err != nil {
			return nil, err
		}
		info := commitInfo(c)
		p := Proposal{ID: strings.TrimPrefix(name.String(), proposalsPrefix+ws+"/"), Workspace: ws,
			Proposer: c.Author.Name, Subject: info.Subject, Source: info.Trailers["Source"],
			Confidence: info.Trailers["Confidence"], Time: info.Time, Commit: c.Hash.String()}
		if p.Diff, err = proposalDiff(c); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// proposalDiff is the unified diff of c against its parent.
func proposalDiff(c *object.Commit) (string, error) {
	parent, err := c.Parent(0)
	if err != nil {
		return "", err
	}
	patch, err := parent.Patch(c)
	if err != nil {
		return "", err
	}
	return patch.String(), nil
}

// checkProposalRole checks the principal's role in ws on the published
// branch.
func (s *Store) checkProposalRole(ctx context.Context, ws, action string, need access.Role) error {
	_, err := s.needRole(ctx, ws, action, need)
	return err
}

// loadProposal reads the proposal id of ws.
func (s *Store) loadProposal(ws, id string) (plumbing.ReferenceName, *object.Commit, error) {
	if err := checkRefPart("proposal id", id); err != nil {
		return "", nil, err
	}
	ref := proposalRef(ws, id)
	h, err := s.git.readNamedRef(ref)
	if errors.Is(err, errRefMissing) {
		return "", nil, &Error{Kind: ErrNotFound, Msg: fmt.Sprintf("Error: workspace %s has no proposal %q.", ws, id),
			Hint: "memory_proposals lists the pending ones."}
	}
	if err != nil {
		return "", nil, err
	}
	c, err := object.GetCommit(s.git.repo.Storer, h)
	return ref, c, err
}

// Approve merges proposal id of ws onto the published branch, three ways
// as Publish does, as one commit authored by the proposer with the
// approver in an Approved-by: trailer, and deletes the proposal. It needs
// the owner role.
func (s *Store) Approve(ctx context.Context, ws, id string) (WriteResult, error) {
	return s.lockedWrite(ctx, func() (WriteResult, error) {
		p, err := s.needRole(ctx, ws, "approve proposals for", access.RoleOwner)
		if err != nil {
			return WriteResult{}, err
		}
		ref, c, err := s.loadProposal(ws, id)
		if err != nil {
			return WriteResult{}, err
		}
		parent, err := c.Parent(0)
		if err != nil {
			return WriteResult{}, err
		}
		bt, err := parent.Tree()
		if err != nil {
			return WriteResult{}, err
		}
		pt, err := c.Tree()
		if err != nil {
			return WriteResult{}, err
		}
		diffs, err := changedFiles(bt, pt, "workspaces/"+ws)
		if err != nil {
			return WriteResult{}, err
		}
		info := commitInfo(c)
		w := &WriteOptions{Tool: info.Trailers["Tool"], Source: info.Trailers["Source"], Author: c.Author.Name,
			trailers: []trailer{{trailerProposal, id}, {trailerApproved, p.User}}}
		if v, err := strconv.ParseFloat(info.Trailers["Confidence"], 64); err == nil {
			w.Confidence = &v
		}
		if w.Tool == "" {
			w.Tool = "memory_proposal_approve"
		}
		res, err := s.mergeOnto(ctx, diffs, "proposal "+id,
			"Reject it (memory_proposal_reject) and redo the change on the published version, or ask the proposer to.",
			info.Subject, w)
		if err != nil {
			return WriteResult{}, err
		}
		if err := s.dropRef(ref, c.Hash); err != nil {
			s.log.Warn("delete the approved proposal", "ref", ref.String(), logKeyErr, err)
		}
		if res.Commit == "" {
			res.Message = fmt.Sprintf("Proposal %s was already published; it is closed.", id)
		} else {
			res.Message = fmt.Sprintf("Approved proposal %s by %s: published %s of workspace %s as commit %s.", id, c.Author.Name, res.Message, ws, res.Commit[:12])
		}
		return res, nil
	})
}

// Reject deletes proposal id of ws. It needs the owner role.
func (s *Store) Reject(ctx context.Context, ws, id string) (WriteResult, error) {
	return s.lockedWrite(ctx, func() (WriteResult, error) {
		if _, err := s.needRole(ctx, ws, "reject proposals for", access.RoleOwner); err != nil {
			return WriteResult{}, err
		}
		ref, c, err := s.loadProposal(ws, id)
		if err != nil {
			return WriteResult{}, err
		}
		if err := s.dropRef(ref, c.Hash); err != nil {
			return WriteResult{}, err
		}
		return WriteResult{Message: fmt.Sprintf("Rejected proposal %s by %s; nothing was published.", id, c.Author.Name)}, nil
	})
}

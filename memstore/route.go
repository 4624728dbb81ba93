package memstore

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/selmem/selmem/memstore/access"
)

// destKind is where a write goes.
type destKind int

const (
	toMain     destKind = iota // the published branch
	toDraft                    // the principal's open draft of the workspace
	toProposal                 // a new proposal for the workspace
)

// destination is route's decision for one write.
type destination struct {
	kind  destKind
	ws    string
	draft *draftState // toDraft: the open draft
}

// route decides where a write by the principal in ctx to workspace ws goes:
// (1) to their open draft of ws, if any; else (2) to a proposal when they
// are a viewer of ws, or neither owner nor without a role and the write is
// inferred or less confident than Options.ProposalThreshold; else (3) to
// the published branch. Paths outside workspaces always go to (3). The
// permission check of the write comes after: a proposal needs only read
// access. It runs under the store's lock.
func (s *Store) route(ctx context.Context, ws string, w *WriteOptions) (destination, error) {
	if ws == "" {
		return destination{}, nil
	}
	p := s.principal(ctx)
	d, err := s.loadDraft(p.User, ws)
	if err != nil {
		return destination{}, err
	}
	if d != nil {
		return destination{kind: toDraft, ws: ws, draft: d}, nil
	}
	tree, err := s.git.headTree()
	if err != nil {
		return destination{}, err
	}
	role, err := s.roleIn(p, tree, ws)
	if err != nil {
		return destination{}, err
	}
	unsure := w != nil && (w.Source == SourceInferred ||
		(w.Confidence != nil && *w.Confidence < s.opts.ProposalThreshold))
	if role == access.RoleViewer || (role > access.RoleNone && role < access.RoleOwner && unsure) {
		return destination{kind: toProposal, ws: ws}, nil
	}
	return destination{}, nil
}

// routeChanges routes a write made of changes: every workspace it touches
// must agree, as one commit goes to one place.
func (s *Store) routeChanges(ctx context.Context, changes []change, w *WriteOptions) (destination, error) {
	var wss []string
	for _, c := range changes {
		if ws := workspaceOf(c.Path); !slices.Contains(wss, ws) {
			wss = append(wss, ws)
		}
	}
	var out destination
	for _, ws := range wss {
		d, err := s.route(ctx, ws, w)
		if err != nil {
			return destination{}, err
		}
		if d.kind == toMain {
			continue
		}
		if len(wss) > 1 {
			return destination{}, &Error{Kind: ErrInvalid,
				Msg:  fmt.Sprintf("Error: this write touches several places (%s) but its changes to workspace %q cannot be published directly.", strings.Join(wss, ", "), ws),
				Hint: "Write each workspace separately. Nothing was written."}
		}
		out = d
	}
	return out, nil
}

// headFor returns the commit a write to the paths rels reads from: the
// principal's draft view (their draft over the published branch) when the
// write goes to their draft, else the published branch's commit. It runs
// under the store's lock.
func (s *Store) headFor(ctx context.Context, w *WriteOptions, rels ...string) (*object.Commit, error) {
	changes := make([]change, len(rels))
	for i, rel := range rels {
		changes[i] = change{Path: rel}
	}
	head, err := s.git.headCommit()
	if err != nil {
		return nil, err
	}
	d, err := s.routeChanges(ctx, changes, w)
	if err != nil || d.kind != toDraft {
		return head, err
	}
	return s.draftViewCommit(head, d.draft)
}

// routedWrite records where the current locked write went when it did not
// change the published branch, so that its result says so.
type routedWrite struct {
	kind destKind
	ws   string
	id   string // the proposal's id
}

// result rewrites the result of a write that went to a draft or became a
// proposal.
func (r *routedWrite) result(res WriteResult) WriteResult {
	switch r.kind {
	case toDraft:
		res.Pending = "draft"
		res.Message = res.Message + "\n(In your draft of workspace " + r.ws + ": only you see it until memory_publish.)"
	case toProposal:
		res.Pending = "proposal"
		res.Message = fmt.Sprintf("Recorded as proposal %s for workspace %s; nothing changed yet: an owner of the workspace must approve it (memory_proposals lists it).", r.id, r.ws)
		res.SHA = ""
	}
	return res
}

// refPart matches a user or workspace name that can be one component of a
// ref name.
var refPart = regexp.MustCompile(`^[A-Za-z0-9_@+=-][A-Za-z0-9._@+=-]*$`)

// checkRefPart refuses a name that cannot be part of a ref name.
func checkRefPart(what, name string) error {
	if refPart.MatchString(name) && !strings.Contains(name, "..") && !strings.HasSuffix(name, ".lock") && !strings.HasSuffix(name, ".") {
		return nil
	}
	return &Error{Kind: ErrInvalid, Msg: fmt.Sprintf("Error: the %s %q cannot name a draft or proposal.", what, name),
		Hint: "Use letters, digits, '.', '_', '-', '@'."}
}

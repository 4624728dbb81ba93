package memstore

import (
	"context"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/selmem/selmem/memstore/access"
)

// principal returns the principal ctx carries; none is the local owner,
// named as the store's default author.
func (s *Store) principal(ctx context.Context) access.Principal {
	if p, ok := access.FromContext(ctx); ok {
		return p
	}
	return access.Local(s.opts.Author)
}

// roleIn returns p's role in workspace ws under the ACL of tree (the
// published branch's) and the org policy.
func (s *Store) roleIn(p access.Principal, tree *object.Tree, ws string) (access.Role, error) {
	acl, err := s.aclSource(tree)(ws)
	if err != nil {
		return access.RoleNone, err
	}
	return s.opts.Policy.Role(p, acl), nil
}

// checkWorkspace decides whether the principal in ctx may do act on
// workspace ws, under the ACLs of tree (the published branch's).
func (s *Store) checkWorkspace(ctx context.Context, tree *object.Tree, act access.Action, ws string) error {
	if err := s.opts.Policy.Check(s.principal(ctx), act, virtual("workspaces/"+ws), s.aclSource(tree)); err != nil {
		return denied(err)
	}
	return nil
}

package memstore

import (
	"context"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/selmem/selmem/memstore/access"
)

// This file is a stand-in for part ENFORCE's aclSource, so that routing
// (drafts, proposals) compiles and is tested on its own. When the parts are
// joined, roleIn should ask ENFORCE's aclSource(tree) and Options.Policy
// instead, and this file goes.

// principal returns the principal ctx carries; none is the local owner,
// named as the store's default author.
func (s *Store) principal(ctx context.Context) access.Principal {
	if p, ok := access.FromContext(ctx); ok {
		return p
	}
	return access.Local(s.opts.Author)
}

// roleIn returns p's role in workspace ws under the ACL in
// workspaces/<ws>/workspace.yaml of tree (the published branch's).
func (s *Store) roleIn(p access.Principal, tree *object.Tree, ws string) (access.Role, error) {
	content, _, err := readFile(tree, "workspaces/"+ws+"/"+access.WorkspaceFile)
	if err != nil {
		return access.RoleNone, err
	}
	acl, err := access.ParseACL(content)
	if err != nil {
		return access.RoleNone, &Error{Kind: ErrInvalid, Msg: "Error: the workspace.yaml of " + ws + " cannot be read: " + err.Error(),
			Hint: "Ask an owner to fix its YAML.", Err: err}
	}
	return access.Policy{}.Role(p, acl), nil
}

package memstore

// This file is a stand-in for part ENFORCE's role lookup (Store.aclSource
// and the store's principal helper), so that templates compile and are
// tested before the merge. The lead replaces both functions with ENFORCE's
// and deletes this file.

import (
	"context"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/selmem/selmem/memstore/access"
)

// templatePrincipal is who ctx acts for: the local owner when it carries
// no principal (the command line, stdio).
func (s *Store) templatePrincipal(ctx context.Context) access.Principal {
	if p, ok := access.FromContext(ctx); ok {
		return p
	}
	return access.Local(s.opts.Author)
}

// templateCheck decides whether the caller may do act on workspace ws,
// reading the workspace's ACL from tree (the published branch's).
func (s *Store) templateCheck(ctx context.Context, tree *object.Tree, act access.Action, ws string) error {
	src := func(name string) (access.ACL, error) {
		data, ok, err := readFile(tree, "workspaces/"+name+"/"+access.WorkspaceFile)
		if err != nil || !ok {
			return access.ACL{}, err
		}
		return access.ParseACL(data)
	}
	return access.Policy{}.Check(s.templatePrincipal(ctx), act, virtual("workspaces/"+ws), src)
}

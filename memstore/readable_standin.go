package memstore

// STAND-IN for part ENFORCE's Store.ReadableFilter, so that search can be
// built and tested before the merge; the lead deletes this file and keeps
// ENFORCE's (which uses Options.Policy and the cached ACL source of the
// published branch). This one reads every workspace's ACL from HEAD on
// each call, under the zero Policy (no org admins).

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/selmem/selmem/memstore/access"
)

// ReadableFilter returns what the context's principal may read, as the
// index backends filter it; no principal is the local owner (Filter.All).
func (s *Store) ReadableFilter(ctx context.Context) (access.Filter, error) {
	p, ok := access.FromContext(ctx)
	if !ok || p.IsLocal() {
		return access.Filter{All: true}, nil
	}
	tree, err := s.git.headTree()
	if err != nil {
		return access.Filter{}, err
	}
	acls := map[string]access.ACL{}
	wsTree, err := tree.Tree("workspaces")
	if errors.Is(err, object.ErrDirectoryNotFound) {
		return access.Policy{}.Readable(p, acls), nil
	}
	if err != nil {
		return access.Filter{}, err
	}
	for _, e := range wsTree.Entries {
		if e.Mode.IsFile() {
			continue
		}
		content, _, err := readFile(tree, "workspaces/"+e.Name+"/"+access.WorkspaceFile)
		if err != nil {
			return access.Filter{}, err
		}
		acl, err := access.ParseACL(content)
		if err != nil {
			return access.Filter{}, fmt.Errorf("workspace %s: %w", e.Name, err)
		}
		acls[e.Name] = acl
	}
	return access.Policy{}.Readable(p, acls), nil
}

package access

import (
	"slices"
	"strings"
)

// Root is the virtual root of the memory.
const Root = "/memories"

// AreaKind is the part of the memory a path lies in.
type AreaKind int

// Areas of the memory.
const (
	AreaRoot       AreaKind = iota // /memories itself
	AreaWorkspaces                 // /memories/workspaces, the list of workspaces
	AreaWorkspace                  // /memories/workspaces/<ws> and below
	AreaUsers                      // /memories/users, the list of user directories
	AreaUser                       // /memories/users/<u> and below
	AreaOrg                        // /memories/org and below
	AreaOther                      // anything else under /memories
)

// Area is where a virtual path lies.
type Area struct {
	Kind      AreaKind
	Workspace string // for AreaWorkspace
	User      string // for AreaUser
	Rest      string // the path below the workspace or user directory, "" for the directory itself
}

// Classify says where the virtual path vp (already cleaned: /memories or
// /memories/...) lies.
func Classify(vp string) Area {
	rel := strings.TrimPrefix(strings.TrimPrefix(vp, Root), "/")
	if rel == "" {
		return Area{Kind: AreaRoot}
	}
	parts := strings.SplitN(rel, "/", 3)
	rest := ""
	if len(parts) == 3 {
		rest = parts[2]
	}
	switch parts[0] {
	case "workspaces":
		if len(parts) == 1 {
			return Area{Kind: AreaWorkspaces}
		}
		return Area{Kind: AreaWorkspace, Workspace: parts[1], Rest: rest}
	case "users":
		if len(parts) == 1 {
			return Area{Kind: AreaUsers}
		}
		return Area{Kind: AreaUser, User: parts[1], Rest: rest}
	case "org":
		return Area{Kind: AreaOrg}
	}
	return Area{Kind: AreaOther}
}

// Action is what a principal attempts on a path.
type Action int

// Actions.
const (
	ActRead            Action = iota // read, list, search, history
	ActWrite                         // create, edit, delete, rename, revert
	ActSetACL                        // change the acl: of workspace.yaml
	ActPublish                       // publish a draft onto the workspace
	ActApprove                       // approve or reject a proposal, tag a template
	ActLoad                          // load the workspace as a template into one's own
	ActDeleteWorkspace               // delete a workspace's directory as a whole
	actionCount
)

var actionWords = [actionCount]string{"read", "write", "change the ACL of", "publish to", "approve changes to", "load", "delete the workspace at"}

// need is the least role each action needs in a workspace.
var need = [actionCount]Role{RoleViewer, RoleSteward, RoleOwner, RoleSteward, RoleOwner, RoleViewer, RoleOwner}

// ACLSource returns the ACL of a workspace; a workspace without one (or
// that does not exist) has the empty ACL.
type ACLSource func(workspace string) (ACL, error)

// Check decides whether p may do act on the virtual path vp, returning nil
// or a *DeniedError (or the ACL source's error). Listing the root, the
// workspaces and the users directories is allowed to everyone: the store
// filters what such a listing shows with Visible.
func (pol Policy) Check(p Principal, act Action, vp string, acls ACLSource) error {
	if p.IsLocal() {
		return nil
	}
	a := Classify(vp)
	deny := func(needed string, have Role) error {
		return &DeniedError{Principal: p.String(), Path: vp, Action: actionWords[act], Need: needed, Have: have}
	}
	switch a.Kind {
	case AreaWorkspace:
		acl, err := acls(a.Workspace)
		if err != nil {
			return err
		}
		role := pol.Role(p, acl)
		if role < need[act] {
			return deny(article(need[act].String())+" of workspace "+a.Workspace, role)
		}
		return nil
	case AreaUser:
		if a.User == p.User {
			return nil
		}
		return deny("to be the user "+a.User, RoleNone)
	case AreaRoot, AreaWorkspaces, AreaUsers:
		if act == ActRead {
			return nil
		}
		if pol.IsAdmin(p) && a.Kind == AreaRoot {
			return nil
		}
		return deny("to be an org admin", RoleNone)
	default: // org and other
		if act == ActRead || pol.IsAdmin(p) {
			return nil
		}
		return deny("to be an org admin", RoleNone)
	}
}

// Visible reports whether a listing of a directory may show the entry at
// virtual path vp to p: a workspace p has a role in, p's own user
// directory, and everything else outside workspaces/ and users/.
func (pol Policy) Visible(p Principal, vp string, acls ACLSource) bool {
	return pol.Check(p, ActRead, vp, acls) == nil
}

// Filter is what a principal may read, in the form both index backends
// apply inside their queries, before ranking and limit.
type Filter struct {
	All        bool     // no restriction (the local principal)
	Workspaces []string // readable workspaces, sorted; chunks of others are excluded
	User       string   // the one users/<User>/ directory that is readable
}

// Readable returns p's filter over the given workspaces' ACLs.
func (pol Policy) Readable(p Principal, workspaces map[string]ACL) Filter {
	if p.IsLocal() {
		return Filter{All: true}
	}
	f := Filter{User: p.User}
	for ws, acl := range workspaces {
		if pol.Role(p, acl) >= RoleViewer {
			f.Workspaces = append(f.Workspaces, ws)
		}
	}
	slices.Sort(f.Workspaces)
	return f
}

// Allows reports whether the filter lets a chunk at virtual path vp
// through.
func (f Filter) Allows(vp string) bool {
	if f.All {
		return true
	}
	switch a := Classify(vp); a.Kind {
	case AreaWorkspace:
		_, ok := slices.BinarySearch(f.Workspaces, a.Workspace)
		return ok
	case AreaUser:
		return f.User != "" && a.User == f.User
	}
	return true
}

// Package access decides who may do what in the memory. It is the one place
// where a principal, a workspace's ACL and a virtual path meet: the store
// asks it before every read, write and search, and the server establishes
// the principal. It knows nothing of MCP, HTTP or git.
//
// The rules:
//   - the local principal (stdio, the command line) may do everything;
//   - /memories/workspaces/<ws>/ follows the workspace's ACL in
//     workspace.yaml: owners do everything, stewards edit everything but
//     the ACL, viewers read; org admins are owners of every workspace;
//   - /memories/users/<u>/ belongs to u alone;
//   - /memories/org/ and other paths outside workspaces/ and users/ are
//     readable by every principal and writable by org admins.
package access

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Kind is what sort of principal acts.
type Kind string

// Principal kinds.
const (
	// KindLocal is the user who runs selmem over stdio or the command
	// line: the owner of everything.
	KindLocal Kind = "local"
	// KindPerson is an authenticated person (an OIDC user or a personal
	// token).
	KindPerson Kind = "person"
	// KindService is an authenticated program (a service token). It cannot
	// vouch for content as the user: it cannot claim user_confirmed.
	KindService Kind = "service"
)

// Principal is who a request acts for.
type Principal struct {
	User   string   // user name; commit author and users/<User>/
	Groups []string // group names, matched by "group:<name>" ACL entries
	Kind   Kind
	Admin  bool // an org admin (from the server's configuration)
}

// Local returns the local principal named user.
func Local(user string) Principal { return Principal{User: user, Kind: KindLocal} }

// IsLocal reports whether p is the local owner of everything.
func (p Principal) IsLocal() bool { return p.Kind == KindLocal }

// IsPerson reports whether p is a person, who may vouch for content as
// user_confirmed.
func (p Principal) IsPerson() bool { return p.Kind == KindLocal || p.Kind == KindPerson }

// String names p for logs and messages.
func (p Principal) String() string {
	if p.Kind == KindService {
		return "service " + p.User
	}
	return p.User
}

// matches reports whether the ACL entry e names p: "user" or "group:name".
func (p Principal) matches(e string) bool {
	e = strings.TrimSpace(e)
	if g, ok := strings.CutPrefix(e, "group:"); ok {
		return slices.Contains(p.Groups, g)
	}
	return e != "" && e == p.User
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal ctx carries, if any.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// Role is a principal's standing in one workspace, ordered: a higher role
// may do everything a lower one may.
type Role int

// Roles, lowest first.
const (
	RoleNone Role = iota
	RoleViewer
	RoleSteward
	RoleOwner
)

// String returns the role's name as written in workspace.yaml.
func (r Role) String() string {
	switch r {
	case RoleViewer:
		return "viewer"
	case RoleSteward:
		return "steward"
	case RoleOwner:
		return "owner"
	}
	return "none"
}

// ACL is a workspace's access list, the acl: key of workspace.yaml. Entries
// are user names or "group:<name>".
type ACL struct {
	Owners   []string `yaml:"owners,omitempty" json:"owners,omitempty"`
	Stewards []string `yaml:"stewards,omitempty" json:"stewards,omitempty"`
	Viewers  []string `yaml:"viewers,omitempty" json:"viewers,omitempty"`
}

// RoleOf returns p's role under the ACL alone (see Policy.Role for admins
// and the local principal).
func (a ACL) RoleOf(p Principal) Role {
	has := func(list []string) bool { return slices.ContainsFunc(list, p.matches) }
	switch {
	case has(a.Owners):
		return RoleOwner
	case has(a.Stewards):
		return RoleSteward
	case has(a.Viewers):
		return RoleViewer
	}
	return RoleNone
}

// Empty reports whether the ACL names nobody.
func (a ACL) Empty() bool { return len(a.Owners)+len(a.Stewards)+len(a.Viewers) == 0 }

// Equal reports whether a and b grant the same entries in the same roles.
func (a ACL) Equal(b ACL) bool {
	norm := func(x []string) []string {
		y := slices.Clone(x)
		slices.Sort(y)
		return slices.Compact(y)
	}
	return slices.Equal(norm(a.Owners), norm(b.Owners)) &&
		slices.Equal(norm(a.Stewards), norm(b.Stewards)) &&
		slices.Equal(norm(a.Viewers), norm(b.Viewers))
}

// Policy is the organisation-wide part of access: who the org admins are.
type Policy struct {
	Admins []string // user names or "group:<name>"
}

// IsAdmin reports whether p is an org admin: marked so when authenticated,
// or named in the policy.
func (pol Policy) IsAdmin(p Principal) bool {
	return p.Admin || slices.ContainsFunc(pol.Admins, p.matches)
}

// Role returns p's role in a workspace with the given ACL: owner for the
// local principal and for org admins, else what the ACL grants.
func (pol Policy) Role(p Principal, acl ACL) Role {
	if p.IsLocal() || pol.IsAdmin(p) {
		return RoleOwner
	}
	return acl.RoleOf(p)
}

// DeniedError is a refused access. Its text says which role the action
// needs, never what the refused path holds.
type DeniedError struct {
	Principal string // who was refused
	Path      string // the virtual path, or the workspace
	Action    string // what was attempted, e.g. "write", "read", "change the ACL of"
	Need      string // the role or standing needed, e.g. "steward", "org admin", "the user alice"
	Have      Role   // the principal's role in the workspace, when a workspace is concerned
}

func (e *DeniedError) Error() string {
	msg := fmt.Sprintf("Error: %s may not %s %s: it needs %s", e.Principal, e.Action, e.Path, e.Need)
	if e.Have > RoleNone {
		msg += fmt.Sprintf(" (they are %s)", article(e.Have.String()))
	}
	return msg + ". Ask an owner of the workspace to grant the role, or work in a workspace of your own."
}

func article(role string) string {
	if strings.HasPrefix(role, "o") {
		return "an " + role
	}
	return "a " + role
}

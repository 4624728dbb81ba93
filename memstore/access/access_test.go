package access

import (
	"errors"
	"testing"
)

func TestPolicyCheck(t *testing.T) {
	acls := map[string]ACL{
		"sales": {Owners: []string{"olga"}, Stewards: []string{"group:analysts"}, Viewers: []string{"vic"}},
	}
	src := func(ws string) (ACL, error) { return acls[ws], nil }
	pol := Policy{Admins: []string{"group:admins"}}
	var (
		local   = Local("me")
		admin   = Principal{User: "ada", Groups: []string{"admins"}, Kind: KindPerson}
		owner   = Principal{User: "olga", Kind: KindPerson}
		steward = Principal{User: "sam", Groups: []string{"analysts"}, Kind: KindPerson}
		viewer  = Principal{User: "vic", Kind: KindPerson}
		other   = Principal{User: "otto", Kind: KindPerson}
		service = Principal{User: "ci", Kind: KindService}
	)
	const (
		ws     = "/memories/workspaces/sales/task.md"
		own    = "/memories/users/vic/notes.md"
		org    = "/memories/org/rules.md"
		other2 = "/memories/workspaces/hr/task.md"
	)
	tests := []struct {
		name string
		p    Principal
		act  Action
		path string
		ok   bool
	}{
		{"local writes anything", local, ActWrite, other2, true},
		{"admin sets any ACL", admin, ActSetACL, ws, true},
		{"owner sets ACL", owner, ActSetACL, ws, true},
		{"steward writes", steward, ActWrite, ws, true},
		{"steward cannot set ACL", steward, ActSetACL, ws, false},
		{"steward cannot approve", steward, ActApprove, ws, false},
		{"steward publishes", steward, ActPublish, ws, true},
		{"viewer reads", viewer, ActRead, ws, true},
		{"viewer loads", viewer, ActLoad, ws, true},
		{"steward cannot delete the workspace", steward, ActDeleteWorkspace, "/memories/workspaces/sales", false},
		{"owner deletes the workspace", owner, ActDeleteWorkspace, "/memories/workspaces/sales", true},
		{"viewer cannot write", viewer, ActWrite, ws, false},
		{"other cannot read", other, ActRead, ws, false},
		{"other reads nothing of a workspace without ACL", other, ActRead, other2, false},
		{"user writes own dir", viewer, ActWrite, own, true},
		{"other user cannot read a user dir", other, ActRead, own, false},
		{"admin cannot read a user dir", admin, ActRead, own, false},
		{"everyone reads org", service, ActRead, org, true},
		{"non-admin cannot write org", owner, ActWrite, org, false},
		{"admin writes org", admin, ActWrite, org, true},
		{"everyone lists workspaces", other, ActRead, "/memories/workspaces", true},
		{"nobody but admins writes the root", owner, ActWrite, "/memories", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := pol.Check(tt.p, tt.act, tt.path, src)
			if (err == nil) != tt.ok {
				t.Fatalf("Check = %v, want allowed %v", err, tt.ok)
			}
			var d *DeniedError
			if err != nil && !errors.As(err, &d) {
				t.Fatalf("error %T is not a *DeniedError", err)
			}
		})
	}
}

func TestDeniedSaysTheRole(t *testing.T) {
	src := func(string) (ACL, error) { return ACL{Viewers: []string{"vic"}}, nil }
	err := Policy{}.Check(Principal{User: "vic", Kind: KindPerson}, ActWrite, "/memories/workspaces/sales/task.md", src)
	want := "Error: vic may not write /memories/workspaces/sales/task.md: it needs a steward of workspace sales (they are a viewer). Ask an owner of the workspace to grant the role, or work in a workspace of your own."
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

func TestReadableFilter(t *testing.T) {
	pol := Policy{}
	p := Principal{User: "vic", Kind: KindPerson}
	f := pol.Readable(p, map[string]ACL{"b": {Viewers: []string{"vic"}}, "a": {Owners: []string{"vic"}}, "c": {}})
	for vp, want := range map[string]bool{
		"/memories/workspaces/a/x.md": true,
		"/memories/workspaces/b/x.md": true,
		"/memories/workspaces/c/x.md": false,
		"/memories/users/vic/x.md":    true,
		"/memories/users/ann/x.md":    false,
		"/memories/org/x.md":          true,
	} {
		if got := f.Allows(vp); got != want {
			t.Errorf("Allows(%s) = %v, want %v", vp, got, want)
		}
	}
	if !pol.Readable(Local("me"), nil).Allows("/memories/users/ann/x.md") {
		t.Error("the local principal reads everything")
	}
}

func TestParseACL(t *testing.T) {
	acl, err := ParseACL([]byte("title: Sales\nacl:\n  owners: [olga]\n  viewers: [\"group:all\"]\n"))
	if err != nil || len(acl.Owners) != 1 || acl.Viewers[0] != "group:all" {
		t.Fatalf("ParseACL = %+v, %v", acl, err)
	}
	if _, err := ParseACL([]byte("acl: [")); err == nil {
		t.Fatal("malformed YAML must fail")
	}
}

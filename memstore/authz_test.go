package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
)

// The principals of the access tests. Workspace sales names olga owner, the
// analysts group steward, vic viewer and the service ci steward; hr is
// hank's; ada is an org admin.
var (
	pLocal   = access.Local("me")
	pAdmin   = access.Principal{User: "ada", Kind: access.KindPerson}
	pOwner   = access.Principal{User: "olga", Kind: access.KindPerson}
	pSteward = access.Principal{User: "sam", Groups: []string{"analysts"}, Kind: access.KindPerson}
	pViewer  = access.Principal{User: "vic", Kind: access.KindPerson}
	pOther   = access.Principal{User: "otto", Kind: access.KindPerson}
	pService = access.Principal{User: "ci", Kind: access.KindService}
)

const (
	salesYAML = "title: Sales\nacl:\n  owners: [olga]\n  stewards: [\"group:analysts\", ci]\n  viewers: [vic]\n"
	hrYAML    = "title: HR\nacl:\n  owners: [hank]\n"
)

// newACLStore opens a store without an index whose org admins are ada,
// holding the sales and hr workspaces, org/ and a directory per user.
func newACLStore(t testing.TB) *memstore.Store {
	t.Helper()
	s, err := memstore.Open(context.Background(), t.TempDir(), &memstore.Options{
		Now: func() time.Time { return fixedNow }, Durability: memstore.DurabilityOS,
		Policy: access.Policy{Admins: []string{"ada"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	files := map[string]string{
		"/memories/workspaces/sales/workspace.yaml": salesYAML,
		"/memories/workspaces/sales/task.md":        "# Sales task\n",
		"/memories/workspaces/hr/workspace.yaml":    hrYAML,
		"/memories/workspaces/hr/task.md":           "# HR task\n",
		"/memories/org/rules.md":                    "# Org rules\n",
	}
	for _, u := range []string{"me", "ada", "olga", "sam", "vic", "otto", "ci", "hank"} {
		files["/memories/users/"+u+"/notes.md"] = "# Notes of " + u + "\n"
	}
	if _, err := s.Put(context.Background(), files, nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// as returns a context acting for p (the local principal is no principal
// at all, as on the command line).
func as(p access.Principal) context.Context {
	if p.IsLocal() {
		return context.Background()
	}
	return access.WithPrincipal(context.Background(), p)
}

// area is where a matrix case acts, relative to the principal.
type area int

const (
	ownWS area = iota
	otherWS
	org
	ownUser
	otherUser
)

var areaNames = []string{"own workspace", "other workspace", "org", "own user dir", "other user dir"}

// dirOf returns the directory of area a for principal p.
func dirOf(p access.Principal, a area) string {
	switch a {
	case ownWS:
		return "/memories/workspaces/sales"
	case otherWS:
		return "/memories/workspaces/hr"
	case org:
		return "/memories/org"
	case ownUser:
		return "/memories/users/" + p.User
	}
	return "/memories/users/hank"
}

// allowed is the expected decision of the matrix: may p read (or write)
// in area a.
func allowed(p access.Principal, a area, write bool) bool {
	switch {
	case p.IsLocal(), a == ownUser:
		return true
	case a == otherUser:
		return false
	case a == org:
		return !write || p.User == "ada"
	case p.User == "ada":
		return true
	case a == ownWS && write:
		return p.User == "olga" || p.User == "sam" || p.User == "ci"
	case a == ownWS:
		return p.User != "otto"
	}
	return false
}

// storeState is what a refused write must leave unchanged.
type storeState struct {
	head  string
	files map[string]string
}

func stateOf(t *testing.T, s *memstore.Store) storeState {
	t.Helper()
	head, err := s.Head()
	if err != nil {
		t.Fatal(err)
	}
	st := storeState{head: head, files: map[string]string{}}
	err = filepath.WalkDir(s.Dir(), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			st.files[p] = string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestAccessMatrix(t *testing.T) {
	s := newACLStore(t)
	src := &memstore.WriteOptions{Source: memstore.SourceTrustedToolResult}
	local := context.Background()
	n := 0
	// fixture writes, as the local owner, a file of its own for one case.
	fixture := func(dir string) string {
		n++
		p := fmt.Sprintf("%s/case-%03d.md", dir, n)
		if _, err := s.Create(local, p, "# Case\n\nfirst\n", nil); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Each op prepares its target as the local owner (a file of its own
	// for a write), then runs as the principal.
	type op struct {
		name    string
		write   bool
		prepare func(dir string) string
		run     func(ctx context.Context, p string) error
	}
	file := func(dir string) string { return fixtureOrNotes(dir) }
	same := func(dir string) string { return dir }
	var revertTo string
	ops := []op{
		{"read", false, file, func(ctx context.Context, p string) error { _, _, err := s.Read(ctx, p); return err }},
		{"view file", false, file, func(ctx context.Context, p string) error { _, err := s.View(ctx, p, nil); return err }},
		{"view dir", false, same, func(ctx context.Context, p string) error { _, err := s.View(ctx, p, nil); return err }},
		{"list", false, same, func(ctx context.Context, p string) error { _, err := s.List(ctx, p); return err }},
		{"history", false, file, func(ctx context.Context, p string) error { _, err := s.History(ctx, p, nil); return err }},
		{"create", true, func(dir string) string { n++; return fmt.Sprintf("%s/new-%03d.md", dir, n) },
			func(ctx context.Context, p string) error { _, err := s.Create(ctx, p, "# New\n", src); return err }},
		{"str_replace", true, fixture, func(ctx context.Context, p string) error {
			_, err := s.StrReplace(ctx, p, "first", "second", src)
			return err
		}},
		{"insert", true, fixture, func(ctx context.Context, p string) error { _, err := s.Insert(ctx, p, 1, "more", src); return err }},
		{"delete", true, fixture, func(ctx context.Context, p string) error { _, err := s.Delete(ctx, p, src); return err }},
		{"rename", true, fixture, func(ctx context.Context, p string) error {
			_, err := s.Rename(ctx, p, strings.TrimSuffix(p, ".md")+"-moved.md", src)
			return err
		}},
		{"put", true, fixture, func(ctx context.Context, p string) error {
			_, err := s.Put(ctx, map[string]string{p: "# Put\n"}, src)
			return err
		}},
		{"revert", true, func(dir string) string {
			p := fixture(dir)
			first, err := s.History(local, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			revertTo = first[0].Hash
			if _, err := s.StrReplace(local, p, "first", "changed", nil); err != nil {
				t.Fatal(err)
			}
			return p
		}, func(ctx context.Context, p string) error { _, err := s.Revert(ctx, p, revertTo, src); return err }},
	}
	principals := []struct {
		name string
		p    access.Principal
	}{
		{"local", pLocal}, {"admin", pAdmin}, {"owner", pOwner}, {"steward", pSteward},
		{"viewer", pViewer}, {"other", pOther}, {"service", pService},
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-12s %-8s", "op", "who")
	for _, a := range areaNames {
		fmt.Fprintf(&table, " %-16s", a)
	}
	table.WriteString("\n")
	violations := 0
	for _, o := range ops {
		for _, pr := range principals {
			fmt.Fprintf(&table, "%-12s %-8s", o.name, pr.name)
			for a := ownWS; a <= otherUser; a++ {
				dir := dirOf(pr.p, a)
				want := allowed(pr.p, a, o.write)
				name := fmt.Sprintf("%s/%s/%s", o.name, pr.name, areaNames[a])
				target := o.prepare(dir)
				before := stateOf(t, s)
				err := o.run(as(pr.p), target)
				got := err == nil
				mark := "allow"
				if !got {
					mark = "deny"
				}
				if o.write && a == ownWS && pr.p.User == pViewer.User {
					// A viewer's write becomes a proposal: accepted,
					// and nothing published.
					mark = "propose"
					fmt.Fprintf(&table, " %-16s", mark)
					if err != nil {
						violations++
						t.Errorf("%s: err = %v, want a proposal", name, err)
					}
					checkNothingWritten(t, s, name, before)
					continue
				}
				fmt.Fprintf(&table, " %-16s", mark)
				if got != want {
					violations++
					t.Errorf("%s: err = %v, want allowed %v", name, err, want)
					continue
				}
				if got {
					continue
				}
				var d *access.DeniedError
				if !errors.Is(err, memstore.ErrDenied) || !errors.As(err, &d) {
					violations++
					t.Errorf("%s: refusal %v is not an ErrDenied wrapping *access.DeniedError", name, err)
				}
				if o.write {
					checkNothingWritten(t, s, name, before)
				}
			}
			table.WriteString("\n")
		}
	}
	t.Logf("authorization matrix (%d violations):\n%s", violations, table.String())
}

// fixtureOrNotes names a file every area holds: the task of a workspace,
// the rules of org, the notes of a user.
func fixtureOrNotes(dir string) string {
	switch {
	case strings.HasPrefix(dir, "/memories/workspaces/"):
		return dir + "/task.md"
	case dir == "/memories/org":
		return dir + "/rules.md"
	}
	return dir + "/notes.md"
}

// checkOutcome asserts that a write failed with want (and changed nothing),
// or succeeded when want is nil; it reports whether it succeeded.
func checkOutcome(t *testing.T, s *memstore.Store, before storeState, err, want error) bool {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatal(err)
		}
		return true
	}
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
	checkNothingWritten(t, s, t.Name(), before)
	return false
}

// checkNothingWritten asserts that a refused write left the branch and the
// working files as they were.
func checkNothingWritten(t *testing.T, s *memstore.Store, name string, before storeState) {
	t.Helper()
	after := stateOf(t, s)
	if after.head != before.head {
		t.Errorf("%s: the branch moved", name)
	}
	for p, content := range before.files {
		if got, ok := after.files[p]; !ok || got != content {
			t.Errorf("%s: working file %s changed", name, p)
		}
	}
	for p := range after.files {
		if _, ok := before.files[p]; !ok {
			t.Errorf("%s: working file %s appeared", name, p)
		}
	}
}

func TestListingsShowOnlyWhatIsReadable(t *testing.T) {
	s := newACLStore(t)
	ctx := as(pViewer)
	view, err := s.View(ctx, "/memories", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/memories/workspaces/sales", "/memories/users/vic", "/memories/org"} {
		if !strings.Contains(view, want+"\n") {
			t.Errorf("the view of /memories lacks %s:\n%s", want, view)
		}
	}
	for _, hidden := range []string{"/memories/workspaces/hr", "/memories/users/hank", "/memories/users/olga"} {
		if strings.Contains(view, hidden) {
			t.Errorf("the view of /memories shows %s:\n%s", hidden, view)
		}
	}
	full, err := s.View(context.Background(), "/memories", nil)
	if err != nil {
		t.Fatal(err)
	}
	if first := func(v string) string { return strings.SplitN(v, "\n", 3)[1] }; first(view) == first(full) {
		t.Errorf("the viewer's total counts hidden files: %q", first(view))
	}
	for dir, want := range map[string][]string{
		"/memories/workspaces": {"sales"},
		"/memories/users":      {"vic"},
	} {
		entries, err := s.List(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name)
		}
		if strings.Join(names, ",") != strings.Join(want, ",") {
			t.Errorf("List(%s) = %v, want %v", dir, names, want)
		}
	}
	// A refusal says which role is needed, whether or not the path exists.
	for _, p := range []string{"/memories/workspaces/hr/task.md", "/memories/workspaces/hr/nothing.md"} {
		_, _, err := s.Read(ctx, p)
		if !errors.Is(err, memstore.ErrDenied) || !strings.Contains(err.Error(), "it needs a viewer of workspace hr") {
			t.Errorf("Read(%s) = %v, want a refusal naming the viewer role", p, err)
		}
	}
	_, _, err = s.Read(ctx, "/memories/workspaces/hr/task.md/below")
	if !errors.Is(err, memstore.ErrDenied) {
		t.Errorf("a path below a file of an unreadable workspace = %v, want the refusal (not that it is below a file)", err)
	}
}

func TestCreatingAWorkspaceMakesItsOwner(t *testing.T) {
	s := newACLStore(t)
	ctx := as(pOther)
	before := commitCount(t, s)
	res, err := s.Create(ctx, "/memories/workspaces/otto-lab/task.md", "# Lab\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := commitCount(t, s); got != before+1 {
		t.Errorf("creating a workspace made %d commits, want one", got-before)
	}
	yaml, _, err := s.Read(ctx, "/memories/workspaces/otto-lab/workspace.yaml")
	if err != nil {
		t.Fatal(err)
	}
	acl, err := access.ParseACL(yaml)
	if err != nil || !slices.Equal(acl.Owners, []string{"otto"}) {
		t.Fatalf("workspace.yaml = %q (%v), want otto as its only owner", yaml, err)
	}
	hist, err := s.History(ctx, "/memories/workspaces/otto-lab", nil)
	if err != nil || len(hist) != 1 || hist[0].Hash != res.Commit || hist[0].Author != "otto" {
		t.Fatalf("history = %+v, %v", hist, err)
	}
	// Now it is otto's: he changes its ACL; others cannot read it.
	if _, err := s.StrReplace(ctx, "/memories/workspaces/otto-lab/workspace.yaml", "owners:", "viewers: [vic]\n  owners:", nil); err != nil {
		t.Errorf("the creator changes the ACL: %v", err)
	}
	if _, _, err := s.Read(as(pViewer), "/memories/workspaces/otto-lab/task.md"); err != nil {
		t.Errorf("a viewer named by the creator reads: %v", err)
	}
	if _, _, err := s.Read(as(pOwner), "/memories/workspaces/otto-lab/task.md"); !errors.Is(err, memstore.ErrDenied) {
		t.Errorf("someone else reads the new workspace: %v", err)
	}

	tests := []struct {
		name string
		p    access.Principal
		path string
		text string
		want error // nil, ErrDenied or ErrInvalid
	}{
		{"own workspace.yaml naming them owner", pOther, "/memories/workspaces/w2/workspace.yaml", "acl:\n  owners: [otto, vic]\n", nil},
		{"workspace.yaml without them as owner", pOther, "/memories/workspaces/w3/workspace.yaml", "acl:\n  stewards: [otto]\n  owners: [vic]\n", memstore.ErrInvalid},
		{"a service cannot create a workspace", pService, "/memories/workspaces/w4/task.md", "# T\n", memstore.ErrDenied},
		{"an existing workspace is not taken over", pOther, "/memories/workspaces/hr/new.md", "# T\n", memstore.ErrDenied},
		{"a file among the workspaces", pOther, "/memories/workspaces/notes.md", "# T\n", memstore.ErrInvalid},
		{"a file among the workspaces, no extension", pOther, "/memories/workspaces/payroll", "x\n", memstore.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := stateOf(t, s)
			_, err := s.Create(as(tt.p), tt.path, tt.text, nil)
			if checkOutcome(t, s, before, err, tt.want) {
				ws := strings.Split(tt.path, "/")[3]
				if _, _, err := s.Read(as(tt.p), "/memories/workspaces/"+ws+"/workspace.yaml"); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestWorkspaceYAMLAndWorkspaceDeletion(t *testing.T) {
	const yamlPath = "/memories/workspaces/sales/workspace.yaml"
	tests := []struct {
		name string
		p    access.Principal
		op   func(ctx context.Context, s *memstore.Store) error
		want error
	}{
		{"steward edits the title", pSteward, func(ctx context.Context, s *memstore.Store) error {
			_, err := s.StrReplace(ctx, yamlPath, "title: Sales", "title: Sales team", nil)
			return err
		}, nil},
		{"steward adds a viewer", pSteward, func(ctx context.Context, s *memstore.Store) error {
			_, err := s.StrReplace(ctx, yamlPath, "viewers: [vic]", "viewers: [vic, otto]", nil)
			return err
		}, memstore.ErrDenied},
		{"owner adds a viewer", pOwner, func(ctx context.Context, s *memstore.Store) error {
			_, err := s.StrReplace(ctx, yamlPath, "viewers: [vic]", "viewers: [vic, otto]", nil)
			return err
		}, nil},
		{"admin adds a viewer", pAdmin, func(ctx context.Context, s *memstore.Store) error {
			_, err := s.StrReplace(ctx, yamlPath, "viewers: [vic]", "viewers: [vic, otto]", nil)
			return err
		}, nil},
		{"steward deletes workspace.yaml", pSteward, func(ctx context.Context, s *memstore.Store) error {
			_, err := s.Delete(ctx, yamlPath, nil)
			return err
		}, memstore.ErrDenied},
		{"steward renames workspace.yaml away", pSteward, func(ctx context.Context, s *memstore.Store) error {
			_, err := s.Rename(ctx, yamlPath, "/memories/workspaces/sales/old.yaml", nil)
			return err
		}, memstore.ErrDenied},
		{"steward deletes the workspace", pSteward, func(ctx context.Context, s *memstore.Store) error {
			_, err := s.Delete(ctx, "/memories/workspaces/sales", nil)
			return err
		}, memstore.ErrDenied},
		{"owner deletes the workspace", pOwner, func(ctx context.Context, s *memstore.Store) error {
			_, err := s.Delete(ctx, "/memories/workspaces/sales", nil)
			return err
		}, nil},
		{"owner writes malformed YAML", pOwner, func(ctx context.Context, s *memstore.Store) error {
			_, err := s.StrReplace(ctx, yamlPath, "viewers: [vic]", "viewers: [vic", nil)
			return err
		}, memstore.ErrInvalid},
		{"steward moves a file to a workspace they cannot write", pSteward, func(ctx context.Context, s *memstore.Store) error {
			_, err := s.Rename(ctx, "/memories/workspaces/sales/task.md", "/memories/workspaces/hr/task2.md", nil)
			return err
		}, memstore.ErrDenied},
		{"admin moves a file between workspaces", pAdmin, func(ctx context.Context, s *memstore.Store) error {
			_, err := s.Rename(ctx, "/memories/workspaces/sales/task.md", "/memories/workspaces/hr/task2.md", nil)
			return err
		}, nil},
		{"a service claims user_confirmed", pService, func(ctx context.Context, s *memstore.Store) error {
			_, err := s.Create(ctx, "/memories/workspaces/sales/ci.md", "# CI\n", &memstore.WriteOptions{Source: memstore.SourceUserConfirmed})
			if err != nil && !strings.Contains(err.Error(), "a service token cannot vouch for content as a user") {
				t.Errorf("the refusal does not say why: %v", err)
			}
			return err
		}, memstore.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newACLStore(t)
			before := stateOf(t, s)
			checkOutcome(t, s, before, tt.op(as(tt.p), s), tt.want)
		})
	}
}

func TestMalformedACLLeavesOnlyAdmins(t *testing.T) {
	s := newACLStore(t)
	// The write gate refuses malformed YAML; a commit made with git itself
	// can still break workspace.yaml.
	p := filepath.Join(s.Dir(), "workspaces", "sales", "workspace.yaml")
	if err := os.WriteFile(p, []byte("acl: [olga\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, s, "add", "-A")
	gitCmd(t, s, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "-m", "break the ACL")
	for _, tt := range []struct {
		p    access.Principal
		want bool
	}{{pOwner, false}, {pViewer, false}, {pAdmin, true}, {pLocal, true}} {
		_, _, err := s.Read(as(tt.p), "/memories/workspaces/sales/task.md")
		if (err == nil) != tt.want {
			t.Errorf("%s reads a workspace with a malformed ACL: %v, want allowed %v", tt.p, err, tt.want)
		}
	}
	// An admin repairs it.
	if _, err := s.Put(as(pAdmin), map[string]string{"/memories/workspaces/sales/workspace.yaml": salesYAML}, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Read(as(pOwner), "/memories/workspaces/sales/task.md"); err != nil {
		t.Errorf("after the repair: %v", err)
	}
}

func TestAuthorIsThePrincipal(t *testing.T) {
	s := newACLStore(t)
	res, err := s.Create(as(pOwner), "/memories/workspaces/sales/a.md", "# A\n",
		&memstore.WriteOptions{Author: "someone-else", Source: memstore.SourceInferred})
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.History(context.Background(), "/memories/workspaces/sales/a.md", nil)
	if err != nil || h[0].Hash != res.Commit {
		t.Fatal(h, err)
	}
	if h[0].Author != "olga" || h[0].Trailers["Author"] != "olga" {
		t.Errorf("author %q, trailer %q, want olga", h[0].Author, h[0].Trailers["Author"])
	}
}

func TestHistoryShowsOnlyReadableCommits(t *testing.T) {
	s := newACLStore(t)
	local := context.Background()
	if _, err := s.Create(as(pOwner), "/memories/workspaces/sales/plan.md", "# Plan\n", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(local, "/memories/workspaces/hr/secret.md", "# Salaries\n", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Rename(local, "/memories/workspaces/hr/secret.md", "/memories/workspaces/sales/moved.md", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(as(pOther), "/memories/users/otto/todo.md", "# Todo\n", nil); err != nil {
		t.Fatal(err)
	}
	hist, err := s.History(as(pViewer), "/memories", &memstore.HistoryOptions{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range hist {
		lines = append(lines, c.Subject+" "+strings.Join(c.Paths, ","))
		for _, p := range c.Paths {
			if !strings.HasPrefix(p, "/memories/workspaces/sales/") && !strings.HasPrefix(p, "/memories/users/vic/") && !strings.HasPrefix(p, "/memories/org/") {
				t.Errorf("the viewer sees the path %s", p)
			}
		}
		if strings.Contains(c.Subject, "hr") || strings.Contains(c.Subject, "otto") {
			t.Errorf("the viewer sees the subject %q", c.Subject)
		}
	}
	want := []string{
		"rename /memories/workspaces/sales/moved.md", // the hr side is cut
		"create workspaces/sales/plan.md /memories/workspaces/sales/plan.md",
		"put /memories/org/rules.md,/memories/users/vic/notes.md,/memories/workspaces/sales/task.md,/memories/workspaces/sales/workspace.yaml",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("the viewer's history:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}

	// The author filter, for anyone; an admin sees every commit of the
	// author, even in a directory the admin may not read (without its paths).
	byOlga, err := s.History(as(pViewer), "/memories", &memstore.HistoryOptions{Author: "olga"})
	if err != nil || len(byOlga) != 1 || byOlga[0].Author != "olga" {
		t.Errorf("history by olga = %+v, %v", byOlga, err)
	}
	byOtto, err := s.History(as(pViewer), "/memories", &memstore.HistoryOptions{Author: "otto"})
	if err != nil || len(byOtto) != 0 {
		t.Errorf("a viewer sees otto's private commit: %+v, %v", byOtto, err)
	}
	audit, err := s.History(as(pAdmin), "/memories", &memstore.HistoryOptions{Author: "otto"})
	if err != nil || len(audit) != 1 || len(audit[0].Paths) != 0 || audit[0].Subject != "create" {
		t.Errorf("the admin's audit of otto = %+v, %v", audit, err)
	}
	if all, err := s.History(local, "/memories", &memstore.HistoryOptions{Author: "otto"}); err != nil || len(all) != 1 || all[0].Paths != nil {
		t.Errorf("the local owner's history by otto = %+v, %v", all, err)
	}
}

func TestReadableFilter(t *testing.T) {
	s := newACLStore(t)
	f, err := s.ReadableFilter(as(pViewer))
	if err != nil {
		t.Fatal(err)
	}
	if f.All || !slices.Equal(f.Workspaces, []string{"sales"}) || f.User != "vic" {
		t.Errorf("viewer's filter = %+v", f)
	}
	if f, _ := s.ReadableFilter(as(pAdmin)); !slices.Equal(f.Workspaces, []string{"hr", "sales"}) {
		t.Errorf("admin's filter = %+v", f)
	}
	if f, _ := s.ReadableFilter(context.Background()); !f.All {
		t.Errorf("local filter = %+v", f)
	}
}

func TestMaintenanceNeedsAnAdmin(t *testing.T) {
	s := newACLStore(t)
	if err := s.Reindex(as(pOwner), nil); !errors.Is(err, memstore.ErrDenied) {
		t.Errorf("an owner reindexes: %v", err)
	}
	// The store has no index: past the check, an admin learns that.
	if err := s.Reindex(as(pAdmin), nil); errors.Is(err, memstore.ErrDenied) || err == nil {
		t.Errorf("an admin's reindex: %v", err)
	}
	if err := s.Check(as(pViewer), access.ActRead, "/memories/workspaces/hr"); !errors.Is(err, memstore.ErrDenied) {
		t.Errorf("Check lets the viewer read hr: %v", err)
	}
	if err := s.Check(as(pViewer), access.ActRead, "/memories/workspaces/sales"); err != nil {
		t.Errorf("Check refuses the viewer sales: %v", err)
	}
}

// TestAccessUnderConcurrentWrites reads and filters as a principal while
// writes change the tree (and the ACL cache carried over them); run with
// -race.
func TestAccessUnderConcurrentWrites(t *testing.T) {
	s := newACLStore(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 20 {
			ws := fmt.Sprintf("/memories/workspaces/w%02d/task.md", i)
			if _, err := s.Create(as(pOther), ws, "# T\n", nil); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for {
		select {
		case <-done:
			f, err := s.ReadableFilter(as(pOther))
			if err != nil || len(f.Workspaces) != 20 {
				t.Errorf("otto's filter after creating 20 workspaces = %v, %v", f.Workspaces, err)
			}
			return
		default:
		}
		if _, err := s.ReadableFilter(as(pOther)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.View(as(pViewer), "/memories/workspaces", nil); err != nil {
			t.Fatal(err)
		}
	}
}

// A name that differs from a hidden one only in case is refused without
// naming the hidden one; a readable one is named.
func TestCaseCollisionNamesOnlyWhatIsReadable(t *testing.T) {
	s := newACLStore(t)
	if _, _, err := s.Read(as(pOther), "/memories/workspaces/hr"); !errors.Is(err, memstore.ErrDenied) {
		t.Fatalf("fixture: otto reads hr: %v", err)
	}
	_, err := s.Create(as(pOther), "/memories/workspaces/HR/x.md", "# X\n", nil)
	if !errors.Is(err, memstore.ErrRejected) || strings.Contains(err.Error(), "workspaces/hr") {
		t.Errorf("hidden collision: %v, want a refusal that does not name workspaces/hr", err)
	}
	_, err = s.Create(context.Background(), "/memories/workspaces/HR/x.md", "# X\n", nil)
	if !errors.Is(err, memstore.ErrRejected) || !strings.Contains(err.Error(), "/memories/workspaces/hr ") {
		t.Errorf("readable collision: %v, want a refusal naming /memories/workspaces/hr", err)
	}
}

// A look-alike of a hidden name is refused without naming the hidden one;
// a look-alike of a readable one is named.
func TestLookAlikeCollisionNamesOnlyWhatIsReadable(t *testing.T) {
	tests := []struct{ name, p string }{
		{"fullwidth", "/memories/workspaces/\uff48\uff52/x.md"},
		{"cyrillic", "/memories/workspaces/\u04bbr/x.md"}, // Cyrillic һ
		{"fullwidth capitals", "/memories/workspaces/\uff28\uff32/x.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newACLStore(t)
			before := stateOf(t, s)
			_, err := s.Create(as(pOther), tt.p, "# X\n", nil)
			if !errors.Is(err, memstore.ErrRejected) || strings.Contains(err.Error(), "workspaces/hr") || !strings.Contains(err.Error(), "an existing name") {
				t.Errorf("hidden collision: %v, want a refusal that does not name workspaces/hr", err)
			}
			checkNothingWritten(t, s, t.Name(), before)
			_, err = s.Create(context.Background(), tt.p, "# X\n", nil)
			if !errors.Is(err, memstore.ErrRejected) || !strings.Contains(err.Error(), "/memories/workspaces/hr ") {
				t.Errorf("readable collision: %v, want a refusal naming /memories/workspaces/hr", err)
			}
		})
	}
}

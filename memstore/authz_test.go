package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// canRead and canWrite are the expected decisions of the matrix.
func canRead(p access.Principal, a area) bool {
	switch {
	case p.IsLocal():
		return true
	case a == org, a == ownUser:
		return true
	case a == otherUser:
		return false
	case p.User == "ada":
		return true
	case a == ownWS:
		return p.User != "otto"
	}
	return false
}

func canWrite(p access.Principal, a area) bool {
	switch {
	case p.IsLocal():
		return true
	case a == ownUser:
		return true
	case a == otherUser:
		return false
	case p.User == "ada":
		return true
	case a == ownWS:
		return p.User == "olga" || p.User == "sam" || p.User == "ci"
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
				want := canRead(pr.p, a)
				if o.write {
					want = canWrite(pr.p, a)
				}
				name := fmt.Sprintf("%s/%s/%s", o.name, pr.name, areaNames[a])
				target := o.prepare(dir)
				before := stateOf(t, s)
				err := o.run(as(pr.p), target)
				got := err == nil
				mark := "allow"
				if !got {
					mark = "deny"
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

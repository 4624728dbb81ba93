package memstore_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/sqliteindex"
	"github.com/selmem/selmem/resources"
)

// The shared workspace of these tests: olivia owns it, steve stewards it,
// vera views it. Files are created by the local owner (no principal).
const (
	wsYAML = "title: Sales\nacl:\n  owners: [olivia]\n  stewards: [steve]\n  viewers: [vera]\n"
	wsDir  = "/memories/workspaces/sales"
	task   = wsDir + "/task.md"
	output = wsDir + "/output.md"
)

func asUser(user string) context.Context {
	return access.WithPrincipal(context.Background(), access.Principal{User: user, Kind: access.KindPerson})
}

// sharedStore returns a store holding the shared workspace.
func sharedStore(t *testing.T) *memstore.Store {
	t.Helper()
	s := newStore(t)
	mustCreate(t, s, wsDir+"/workspace.yaml", wsYAML)
	mustCreate(t, s, task, "# Task\n\nReport revenue by region.\n")
	mustCreate(t, s, output, "# Output\n\nA table, one row per region.\n")
	return s
}

func mustRead(t *testing.T, ctx context.Context, s *memstore.Store, p string) string {
	t.Helper()
	b, _, err := s.Read(ctx, p)
	if err != nil {
		t.Fatalf("Read(%s): %v", p, err)
	}
	return string(b)
}

// must fails the test when the write it wraps fails: must(t)(s.Create(…)).
func must(t *testing.T) func(memstore.WriteResult, error) memstore.WriteResult {
	t.Helper()
	return func(res memstore.WriteResult, err error) memstore.WriteResult {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
}

// snapshot is what a refused publish must leave unchanged: main, every
// draft and proposal ref, and the working files of the workspace.
func snapshot(t *testing.T, s *memstore.Store) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(gitCmd(t, s, "for-each-ref", "--format=%(refname) %(objectname)"))
	err := filepath.WalkDir(filepath.Join(s.Dir(), "workspaces"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		b.WriteString(p + "\n" + string(data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// checkRefs asserts that every draft and proposal ref file holds a commit
// hash (never empty, never left locked) and that git finds the repository
// whole.
func checkRefs(t *testing.T, s *memstore.Store) {
	t.Helper()
	hash := regexp.MustCompile(`^[0-9a-f]{40}\n$`)
	for _, dir := range []string{"drafts", "proposals"} {
		root := filepath.Join(s.Dir(), ".git", "refs", dir)
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			data, _ := os.ReadFile(p)
			if !hash.Match(data) {
				t.Errorf("ref %s holds %q, not a commit hash", p, data)
			}
			return nil
		})
	}
	if out, err := exec.Command("git", "-C", s.Dir(), "fsck", "--strict").CombinedOutput(); err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
}

func TestStore_DraftVisibility(t *testing.T) {
	s := sharedStore(t)
	steve := asUser("steve")
	must(t)(s.OpenDraft(steve, "sales"))
	res := must(t)(s.StrReplace(steve, task, "revenue", "margin", nil))
	if res.Pending != "draft" {
		t.Errorf("Pending = %q, want draft", res.Pending)
	}
	must(t)(s.Create(steve, wsDir+"/tools/crm.yaml", "name: crm\n", nil))

	published := "# Task\n\nReport revenue by region.\n"
	drafted := "# Task\n\nReport margin by region.\n"
	for _, c := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"steward who drafts", steve, drafted},
		{"viewer", asUser("vera"), published},
		{"owner", asUser("olivia"), published},
		{"local", context.Background(), published},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := mustRead(t, c.ctx, s, task); got != c.want {
				t.Errorf("Read = %q, want %q", got, c.want)
			}
			view, err := s.View(c.ctx, wsDir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := strings.Contains(view, "crm.yaml"), c.want == drafted; got != want {
				t.Errorf("View lists the drafted crm.yaml: %v, want %v\n%s", got, want, view)
			}
			entries, err := s.List(c.ctx, wsDir)
			if err != nil {
				t.Fatal(err)
			}
			hasTools := false
			for _, e := range entries {
				hasTools = hasTools || e.Name == "tools"
			}
			if hasTools != (c.want == drafted) {
				t.Errorf("List shows tools/: %v", hasTools)
			}
		})
	}
	if data, _ := os.ReadFile(filepath.Join(s.Dir(), "workspaces", "sales", "task.md")); string(data) != published {
		t.Errorf("working file = %q: a draft must not touch it", data)
	}
	ws, err := resources.LoadWorkspace(asUser("vera"), s, "sales", fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ws.Task.Text, "margin") {
		t.Errorf("composed context shows the draft before publish: %q", ws.Task.Text)
	}

	before := commitCount(t, s)
	res = must(t)(s.Publish(steve, "sales", "margin, not revenue"))
	if got := commitCount(t, s); got != before+1 {
		t.Errorf("publish made %d commits, want 1", got-before)
	}
	if got := gitCmd(t, s, "log", "-1", "--format=%an|%s", "main"); got != "steve|publish sales: margin, not revenue\n" {
		t.Errorf("publish commit = %q", got)
	}
	if got := mustRead(t, asUser("vera"), s, task); got != drafted {
		t.Errorf("after publish the viewer reads %q", got)
	}
	if ws, err = resources.LoadWorkspace(context.Background(), s, "sales", fixedNow); err != nil || !strings.Contains(ws.Task.Text, "margin") {
		t.Errorf("composed context after publish: %v %+v", err, ws.Task)
	}
	if drafts, err := s.Drafts(steve); err != nil || len(drafts) != 0 {
		t.Errorf("Drafts after publish = %v, %v; want none (publish closes the draft)", drafts, err)
	}
	// Writes go to main again.
	if res = must(t)(s.StrReplace(steve, task, "margin", "profit", nil)); res.Pending != "" {
		t.Errorf("write after publish went to %q", res.Pending)
	}
	checkRefs(t, s)
}

func TestStore_Publish(t *testing.T) {
	published := "# Task\n\nReport revenue by region.\n"
	for _, c := range []struct {
		name      string
		draft     func(t *testing.T, s *memstore.Store) // steve, draft open
		main      func(t *testing.T, s *memstore.Store) // olivia, on main
		mainFirst bool                                  // main's write comes before the draft's
		conflicts []string                              // expected conflicting paths
		want      map[string]string                     // path -> content after publish; "" absent
	}{
		{
			name: "concurrent change to another file merges",
			draft: func(t *testing.T, s *memstore.Store) {
				must(t)(s.StrReplace(asUser("steve"), task, "revenue", "margin", nil))
			},
			main: func(t *testing.T, s *memstore.Store) {
				must(t)(s.StrReplace(asUser("olivia"), output, "A table", "A chart", nil))
			},
			want: map[string]string{task: "# Task\n\nReport margin by region.\n", output: "# Output\n\nA chart, one row per region.\n"},
		},
		{
			name: "conflicting change is refused",
			draft: func(t *testing.T, s *memstore.Store) {
				must(t)(s.StrReplace(asUser("steve"), task, "revenue", "margin", nil))
			},
			main: func(t *testing.T, s *memstore.Store) {
				must(t)(s.StrReplace(asUser("olivia"), task, "revenue", "bookings", nil))
			},
			conflicts: []string{task},
		},
		{
			name:  "draft deletes a file the published branch changed",
			draft: func(t *testing.T, s *memstore.Store) { must(t)(s.Delete(asUser("steve"), task, nil)) },
			main: func(t *testing.T, s *memstore.Store) {
				must(t)(s.StrReplace(asUser("olivia"), task, "revenue", "bookings", nil))
			},
			conflicts: []string{task},
		},
		{
			name: "same change on both sides",
			draft: func(t *testing.T, s *memstore.Store) {
				must(t)(s.StrReplace(asUser("steve"), task, "revenue", "margin", nil))
			},
			main: func(t *testing.T, s *memstore.Store) {
				must(t)(s.StrReplace(asUser("olivia"), task, "revenue", "margin", nil))
			},
			want: map[string]string{task: "# Task\n\nReport margin by region.\n"},
		},
		{
			name:      "a file published before the draft first touched it is no conflict",
			mainFirst: true,
			main: func(t *testing.T, s *memstore.Store) {
				must(t)(s.StrReplace(asUser("olivia"), task, "revenue", "bookings", nil))
			},
			draft: func(t *testing.T, s *memstore.Store) {
				// steve sees olivia's version through the draft and edits it.
				must(t)(s.StrReplace(asUser("steve"), task, "by region", "by quarter", nil))
			},
			want: map[string]string{task: "# Task\n\nReport bookings by quarter.\n"},
		},
		{
			name: "deletes, renames and new directories",
			draft: func(t *testing.T, s *memstore.Store) {
				must(t)(s.Create(asUser("steve"), wsDir+"/schemas/crm.md", "# CRM\n", nil))
				must(t)(s.Rename(asUser("steve"), output, wsDir+"/result.md", nil))
			},
			want: map[string]string{output: "", wsDir + "/result.md": "# Output\n\nA table, one row per region.\n", wsDir + "/schemas/crm.md": "# CRM\n", task: published},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := sharedStore(t)
			steve := asUser("steve")
			must(t)(s.OpenDraft(steve, "sales"))
			if c.mainFirst {
				c.main(t, s)
			}
			c.draft(t, s)
			if c.main != nil && !c.mainFirst {
				c.main(t, s)
			}
			before := snapshot(t, s)
			_, err := s.Publish(steve, "sales", "")
			if len(c.conflicts) > 0 {
				var ce *memstore.ConflictError
				if !errors.Is(err, memstore.ErrConflict) || !errors.As(err, &ce) {
					t.Fatalf("Publish err = %v, want a ConflictError", err)
				}
				var paths []string
				for _, x := range ce.Conflicts {
					paths = append(paths, x.Path)
				}
				if strings.Join(paths, ",") != strings.Join(c.conflicts, ",") {
					t.Errorf("conflicts = %v, want %v", paths, c.conflicts)
				}
				for _, v := range []string{"published version", "your version", "bookings"} {
					if !strings.Contains(err.Error(), v) {
						t.Errorf("error lacks %q:\n%v", v, err)
					}
				}
				if after := snapshot(t, s); after != before {
					t.Errorf("a refused publish changed something:\nbefore:\n%s\nafter:\n%s", before, after)
				}
				checkRefs(t, s)
				return
			}
			if err != nil {
				t.Fatalf("Publish: %v", err)
			}
			for p, want := range c.want {
				data, err := os.ReadFile(filepath.Join(s.Dir(), strings.TrimPrefix(p, "/memories/")))
				if want == "" {
					if err == nil {
						t.Errorf("%s still exists after publish", p)
					}
					continue
				}
				if string(data) != want {
					t.Errorf("%s = %q, want %q", p, data, want)
				}
				if got := mustRead(t, asUser("vera"), s, p); got != want {
					t.Errorf("viewer reads %s = %q, want %q", p, got, want)
				}
			}
			if out := gitCmd(t, s, "status", "--porcelain"); out != "" {
				t.Errorf("working files differ from main after publish:\n%s", out)
			}
			checkRefs(t, s)
		})
	}
}

func TestStore_DraftConflictResolvedByReopening(t *testing.T) {
	s := sharedStore(t)
	steve := asUser("steve")
	must(t)(s.OpenDraft(steve, "sales"))
	must(t)(s.StrReplace(steve, task, "revenue", "margin", nil))
	must(t)(s.StrReplace(asUser("olivia"), task, "revenue", "bookings", nil))
	if _, err := s.Publish(steve, "sales", ""); !errors.Is(err, memstore.ErrConflict) {
		t.Fatalf("Publish = %v, want a conflict", err)
	}
	// steve merges both versions by hand in the draft, then marks the
	// conflict resolved by opening the draft again.
	must(t)(s.StrReplace(steve, task, "margin", "margin and bookings", nil))
	res := must(t)(s.OpenDraft(steve, "sales"))
	if !strings.Contains(res.Message, task) {
		t.Errorf("reopen message does not name the resolved file: %s", res.Message)
	}
	must(t)(s.Publish(steve, "sales", "merged"))
	if got := mustRead(t, asUser("vera"), s, task); got != "# Task\n\nReport margin and bookings by region.\n" {
		t.Errorf("published %q", got)
	}
	checkRefs(t, s)
}

func TestStore_DiscardDraft(t *testing.T) {
	s := sharedStore(t)
	steve := asUser("steve")
	must(t)(s.OpenDraft(steve, "sales"))
	must(t)(s.StrReplace(steve, task, "revenue", "margin", nil))
	head, _ := s.Head()
	must(t)(s.DiscardDraft(steve, "sales"))
	if got, _ := s.Head(); got != head {
		t.Error("discard moved main")
	}
	if got := mustRead(t, steve, s, task); strings.Contains(got, "margin") {
		t.Errorf("after discard steve still reads the draft: %q", got)
	}
	if _, err := s.DiscardDraft(steve, "sales"); !errors.Is(err, memstore.ErrNotFound) {
		t.Errorf("second discard = %v, want ErrNotFound", err)
	}
	if _, err := s.Publish(steve, "sales", ""); !errors.Is(err, memstore.ErrNotFound) {
		t.Errorf("publish without a draft = %v, want ErrNotFound", err)
	}
	checkRefs(t, s)
}

func TestStore_DraftRoles(t *testing.T) {
	s := sharedStore(t)
	for _, c := range []struct {
		user string
		ok   bool
	}{{"olivia", true}, {"steve", true}, {"vera", false}, {"mallory", false}} {
		_, err := s.OpenDraft(asUser(c.user), "sales")
		var denied *access.DeniedError
		if c.ok != (err == nil) || (!c.ok && !errors.As(err, &denied)) {
			t.Errorf("OpenDraft as %s = %v, want ok %v", c.user, err, c.ok)
		}
	}
	// The local principal (no principal in ctx) may draft too.
	must(t)(s.OpenDraft(context.Background(), "sales"))
	drafts, err := s.Drafts(context.Background())
	if err != nil || len(drafts) != 3 {
		t.Errorf("local Drafts = %v, %v; want the three open drafts", drafts, err)
	}
	if drafts, _ := s.Drafts(asUser("steve")); len(drafts) != 1 || drafts[0].User != "steve" {
		t.Errorf("steve's Drafts = %v, want only his", drafts)
	}
}

func TestStore_Proposals(t *testing.T) {
	conf := func(f float64) *float64 { return &f }
	for _, c := range []struct {
		name     string
		user     string
		w        *memstore.WriteOptions
		proposal bool
	}{
		{"viewer inferred", "vera", &memstore.WriteOptions{Source: memstore.SourceInferred}, true},
		{"viewer confirmed", "vera", &memstore.WriteOptions{Source: memstore.SourceUserConfirmed}, true},
		{"steward inferred", "steve", &memstore.WriteOptions{Source: memstore.SourceInferred}, true},
		{"steward unsure", "steve", &memstore.WriteOptions{Source: memstore.SourceTrustedToolResult, Confidence: conf(0.3)}, true},
		{"steward sure", "steve", &memstore.WriteOptions{Source: memstore.SourceTrustedToolResult, Confidence: conf(0.9)}, false},
		{"owner inferred", "olivia", &memstore.WriteOptions{Source: memstore.SourceInferred}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := sharedStore(t)
			head, _ := s.Head()
			res, err := s.StrReplace(asUser(c.user), task, "revenue", "churn", c.w)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Head(); (got == head) != c.proposal || (res.Pending == "proposal") != c.proposal {
				t.Fatalf("proposal = %v (Pending %q), want %v", got == head, res.Pending, c.proposal)
			}
			if !c.proposal {
				return
			}
			if !strings.Contains(res.Message, "owner") {
				t.Errorf("message does not say an owner must approve: %s", res.Message)
			}
			if got := mustRead(t, asUser(c.user), s, task); strings.Contains(got, "churn") {
				t.Errorf("the proposal is visible before approval: %q", got)
			}
			props, err := s.Proposals(asUser("olivia"), "sales")
			if err != nil || len(props) != 1 {
				t.Fatalf("Proposals = %v, %v", props, err)
			}
			p := props[0]
			if p.Proposer != c.user || !strings.Contains(p.Diff, "-Report revenue by region.") || !strings.Contains(p.Diff, "+Report churn by region.") {
				t.Errorf("proposal = %+v", p)
			}
			if _, err := s.Approve(asUser("steve"), "sales", p.ID); err == nil {
				t.Error("a steward approved a proposal")
			}
			before := commitCount(t, s)
			must(t)(s.Approve(asUser("olivia"), "sales", p.ID))
			if got := commitCount(t, s); got != before+1 {
				t.Errorf("approve made %d commits", got-before)
			}
			log := gitCmd(t, s, "log", "-1", "--format=%an%n%B", "main")
			for _, want := range []string{c.user + "\n", "Approved-by: olivia", "Source: " + c.w.Source, "Proposal: " + p.ID} {
				if !strings.Contains(log, want) {
					t.Errorf("approved commit lacks %q:\n%s", want, log)
				}
			}
			if got := mustRead(t, asUser("vera"), s, task); !strings.Contains(got, "churn") {
				t.Errorf("after approval: %q", got)
			}
			if props, _ := s.Proposals(asUser("olivia"), "sales"); len(props) != 0 {
				t.Errorf("approved proposal still listed: %v", props)
			}
			checkRefs(t, s)
		})
	}
}

func TestStore_RejectProposal(t *testing.T) {
	s := sharedStore(t)
	res := must(t)(s.Create(asUser("vera"), wsDir+"/tools/crm.yaml", "name: crm\n", &memstore.WriteOptions{Source: memstore.SourceInferred}))
	if res.Pending != "proposal" {
		t.Fatalf("Pending = %q", res.Pending)
	}
	props, err := s.Proposals(asUser("vera"), "sales")
	if err != nil || len(props) != 1 {
		t.Fatalf("Proposals = %v, %v", props, err)
	}
	if _, err := s.Reject(asUser("vera"), "sales", props[0].ID); err == nil {
		t.Error("a viewer rejected a proposal")
	}
	head, _ := s.Head()
	must(t)(s.Reject(asUser("olivia"), "sales", props[0].ID))
	if got, _ := s.Head(); got != head {
		t.Error("reject moved main")
	}
	if props, _ := s.Proposals(asUser("olivia"), "sales"); len(props) != 0 {
		t.Errorf("rejected proposal still listed: %v", props)
	}
	if _, err := s.Approve(asUser("olivia"), "sales", props0(props)); !errors.Is(err, memstore.ErrNotFound) {
		t.Errorf("approving a rejected proposal = %v", err)
	}
	checkRefs(t, s)
}

func props0(ps []memstore.Proposal) string {
	if len(ps) == 0 {
		return "gone"
	}
	return ps[0].ID
}

func TestStore_ApproveConflict(t *testing.T) {
	s := sharedStore(t)
	must(t)(s.StrReplace(asUser("vera"), task, "revenue", "churn", &memstore.WriteOptions{Source: memstore.SourceInferred}))
	must(t)(s.StrReplace(asUser("olivia"), task, "revenue", "bookings", nil))
	props, _ := s.Proposals(asUser("olivia"), "sales")
	before := snapshot(t, s)
	_, err := s.Approve(asUser("olivia"), "sales", props[0].ID)
	var ce *memstore.ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || !strings.Contains(ce.Conflicts[0].Yours, "churn") || !strings.Contains(ce.Conflicts[0].Published, "bookings") {
		t.Fatalf("Approve = %v, want a conflict on task.md", err)
	}
	if after := snapshot(t, s); after != before {
		t.Errorf("a refused approval changed something")
	}
}

func TestStore_SearchOverDraft(t *testing.T) {
	for _, scratch := range []bool{true, false} {
		t.Run(map[bool]string{true: "scratch index", false: "no scratch index"}[scratch], func(t *testing.T) {
			home := t.TempDir()
			idx, err := sqliteindex.Open(filepath.Join(home, "index.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { idx.Close() })
			opts := &memstore.Options{Index: idx, Embedder: embedder.NewBuiltin(), Now: func() time.Time { return fixedNow }}
			if scratch {
				opts.ScratchIndex = func(dir string) (memstore.Index, error) {
					return sqliteindex.Open(filepath.Join(dir, "scratch.db"), nil)
				}
			}
			s, err := memstore.Open(context.Background(), home, opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close(context.Background()) })
			mustCreate(t, s, wsDir+"/workspace.yaml", wsYAML)
			mustCreate(t, s, task, "# Task\n\nReport revenue by region.\n")
			mustCreate(t, s, output, "# Output\n\nA revenue table, one row per region.\n")
			steve := asUser("steve")
			must(t)(s.OpenDraft(steve, "sales"))
			must(t)(s.StrReplace(steve, task, "revenue", "quokka", nil))

			paths := func(ctx context.Context, q string) []string {
				t.Helper()
				res, err := s.Search(ctx, memstore.SearchRequest{Query: q})
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, h := range res.Hits {
					if h.TextRank > 0 { // what the words find, not what means alike
						out = append(out, h.Path)
					}
				}
				slices.Sort(out)
				return slices.Compact(out)
			}
			wantQuokka := []string(nil)
			if scratch {
				wantQuokka = []string{task}
			}
			for _, c := range []struct {
				ctx   context.Context
				query string
				want  []string
			}{
				{steve, "quokka", wantQuokka},
				{asUser("vera"), "quokka", nil},
				{steve, "revenue", []string{output}},
				{asUser("vera"), "revenue", []string{output, task}},
			} {
				if got := paths(c.ctx, c.query); !slices.Equal(got, c.want) {
					p, _ := access.FromContext(c.ctx)
					t.Errorf("%s searches %q: %v, want %v", p.User, c.query, got, c.want)
				}
			}
		})
	}
}

func TestStore_PublishACLChangeNeedsOwner(t *testing.T) {
	s := sharedStore(t)
	for _, c := range []struct {
		user string
		ok   bool
	}{{"steve", false}, {"olivia", true}} {
		ctx := asUser(c.user)
		must(t)(s.OpenDraft(ctx, "sales"))
		_, err := s.StrReplace(ctx, wsDir+"/workspace.yaml", "viewers: [vera]", "viewers: [vera, "+c.user+"x]", nil)
		var denied *access.DeniedError
		if !c.ok {
			// A steward's ACL change is refused already in the draft.
			if !errors.As(err, &denied) {
				t.Errorf("%s drafts an ACL change: %v, want refused", c.user, err)
			}
			must(t)(s.DiscardDraft(ctx, "sales"))
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		// A file the draft creates reads back through the draft.
		must(t)(s.Create(ctx, wsDir+"/notes/"+c.user+".md", "note\n", nil))
		if got := mustRead(t, ctx, s, wsDir+"/notes/"+c.user+".md"); got != "note\n" {
			t.Errorf("%s reads their drafted note as %q", c.user, got)
		}
		_, err = s.Publish(ctx, "sales", "acl")
		if c.ok != (err == nil) || (!c.ok && !errors.As(err, &denied)) {
			t.Errorf("%s publishes an ACL change: %v, want ok %v", c.user, err, c.ok)
		}
	}
}

package memstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
)

// revenueFiles is a workspace worth publishing: specifications, a tool
// bound to the publisher's credential and connection, a profile, an
// artifact that was refreshed, and notes.
var revenueFiles = map[string]string{
	"/memories/workspaces/revenue/workspace.yaml": "title: Revenue\ndescription: Monthly revenue by region\nacl:\n  owners: [olga]\n  viewers: [vic]\n",
	"/memories/workspaces/revenue/task.md":        "# Task\n\n- Revenue is net of refunds.\n",
	"/memories/workspaces/revenue/output.md":      "# Output\n\n- Data arrives as JSON in #selmem-data.\n",
	"/memories/workspaces/revenue/tools/orders.yaml": "# The orders export.\nkind: rest\nurl: https://api.example.com/orders?region=emea&api_key=OLGAS_KEY_NAME\n" +
		"records_path: data.items\ncredential: olga-api\n",
	"/memories/workspaces/revenue/tools/ledger.yaml":             "kind: sql\nconnection: finance-prod\nquery: SELECT region, amount FROM ledger\n",
	"/memories/workspaces/revenue/schemas/orders.md":             "# orders\n\n| column | type |\n|---|---|\n| region | text |\n",
	"/memories/workspaces/revenue/artifacts/dash/index.html":     "<!doctype html><p>dash</p>\n",
	"/memories/workspaces/revenue/artifacts/dash/binding.yaml":   "connector: orders\ncolumns:\n  - name: region\n    type: text\nsnapshot:\n  sha256: " + strings.Repeat("ab", 32) + "\n  rows: 3\n  columns: 1\n  refreshed_at: 2026-06-01T12:00:00Z\n  source: file:orders.csv\n",
	"/memories/workspaces/revenue/notes/meeting-with-finance.md": "# Notes\n\n- Finance wants the EMEA split.\n",
	"/memories/workspaces/other/task.md":                         "# Other\n",
	"/memories/workspaces/other/workspace.yaml":                  "title: Other\nacl:\n  owners: [otto]\n",
}

func person(user string) context.Context {
	return access.WithPrincipal(context.Background(), access.Principal{User: user, Kind: access.KindPerson})
}

func newRevenueStore(t *testing.T) *memstore.Store {
	t.Helper()
	s := newStore(t)
	if _, err := s.Put(context.Background(), revenueFiles, nil); err != nil {
		t.Fatal(err)
	}
	return s
}

func read(t *testing.T, s *memstore.Store, p string) string {
	t.Helper()
	data, _, err := s.Read(context.Background(), p)
	if err != nil {
		t.Fatalf("Read(%s): %v", p, err)
	}
	return string(data)
}

func TestStore_PublishAndLoadTemplate(t *testing.T) {
	s := newRevenueStore(t)
	ctx := context.Background()
	tpl, err := s.PublishTemplate(person("olga"), "revenue", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if tpl.Title != "Revenue" || tpl.Name() != "revenue@1.0.0" {
		t.Fatalf("published %+v", tpl)
	}
	// A later change of the workspace does not change the template.
	if _, err := s.StrReplace(ctx, "/memories/workspaces/revenue/task.md", "net of refunds", "gross", nil); err != nil {
		t.Fatal(err)
	}

	res, err := s.LoadTemplate(person("vic"), "revenue@1.0.0", "vics-revenue")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Origin, (memstore.Origin{Template: "revenue", Version: "1.0.0", Commit: tpl.Commit}); got != want {
		t.Errorf("origin = %+v, want %+v", got, want)
	}
	const dir = "/memories/workspaces/vics-revenue/"
	wantFiles := []string{
		dir + "artifacts/dash/binding.yaml", dir + "artifacts/dash/index.html", dir + "output.md",
		dir + "schemas/orders.md", dir + "task.md", dir + "tools/ledger.yaml", dir + "tools/orders.yaml", dir + "workspace.yaml",
	}
	if diff := cmp.Diff(wantFiles, res.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"notes"}, res.Omitted); diff != "" {
		t.Errorf("omitted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"dash"}, res.Unbound); diff != "" {
		t.Errorf("unbound (-want +got):\n%s", diff)
	}
	if got := read(t, s, dir+"task.md"); !strings.Contains(got, "net of refunds") {
		t.Errorf("task.md is not the tagged version: %q", got)
	}
	wantYAML := "title: Revenue\ndescription: Monthly revenue by region\nacl:\n  owners:\n    - vic\nfrom:\n  template: revenue\n  version: 1.0.0\n  commit: " + tpl.Commit + "\n"
	if diff := cmp.Diff(wantYAML, read(t, s, dir+"workspace.yaml")); diff != "" {
		t.Errorf("workspace.yaml (-want +got):\n%s", diff)
	}
	binding := read(t, s, dir+"artifacts/dash/binding.yaml")
	if strings.Contains(binding, "snapshot") || !strings.Contains(binding, "name: region") {
		t.Errorf("binding keeps its columns and drops its snapshot:\n%s", binding)
	}
	for _, secret := range []string{"olga-api", "finance-prod", "OLGAS_KEY_NAME"} {
		for _, f := range []string{"tools/orders.yaml", "tools/ledger.yaml"} {
			if got := read(t, s, dir+f); strings.Contains(got, secret) {
				t.Errorf("%s still names %s:\n%s", f, secret, got)
			}
		}
	}
	if got := read(t, s, dir+"tools/orders.yaml"); !strings.Contains(got, "region=emea") || !strings.Contains(got, "records_path: data.items") {
		t.Errorf("orders.yaml lost more than its credentials:\n%s", got)
	}
	wantStripped := []string{"tools/ledger.yaml: connection", "tools/orders.yaml: credential", "tools/orders.yaml: url (URL credentials)"}
	if diff := cmp.Diff(wantStripped, res.Stripped); diff != "" {
		t.Errorf("stripped (-want +got):\n%s", diff)
	}
	if _, _, err := s.Read(ctx, dir+"notes/meeting-with-finance.md"); !errors.Is(err, memstore.ErrNotFound) {
		t.Errorf("notes were copied: %v", err)
	}
	// The loaded workspace is searchable: the write took the normal path.
	hits, err := s.Search(ctx, memstore.SearchRequest{Query: "refunds", Workspace: "vics-revenue"})
	if err != nil || len(hits.Hits) == 0 {
		t.Errorf("search in the loaded workspace = %+v, %v", hits, err)
	}
}

func TestStore_TemplateRefusals(t *testing.T) {
	s := newRevenueStore(t)
	if _, err := s.PublishTemplate(person("olga"), "revenue", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	var denied *access.DeniedError
	tests := []struct {
		name string
		run  func() error
		want func(error) bool
	}{
		{"publish an existing version", func() error { _, err := s.PublishTemplate(person("olga"), "revenue", "1.0.0"); return err }, is(memstore.ErrExists)},
		{"publish a bad version", func() error { _, err := s.PublishTemplate(person("olga"), "revenue", "../x"); return err }, is(memstore.ErrInvalid)},
		{"publish a missing workspace", func() error { _, err := s.PublishTemplate(context.Background(), "nope", "1"); return err }, is(memstore.ErrNotFound)},
		{"a viewer cannot publish", func() error { _, err := s.PublishTemplate(person("vic"), "revenue", "2"); return err }, errorAs(&denied)},
		{"load into an existing workspace", func() error {
			_, err := s.LoadTemplate(person("vic"), "revenue@1.0.0", "other")
			return err
		}, is(memstore.ErrExists)},
		{"load into its own workspace", func() error {
			_, err := s.LoadTemplate(context.Background(), "revenue@1.0.0", "revenue")
			return err
		}, is(memstore.ErrExists)},
		{"load without a version", func() error { _, err := s.LoadTemplate(person("vic"), "revenue", "x"); return err }, is(memstore.ErrInvalid)},
		{"load a missing version", func() error { _, err := s.LoadTemplate(person("vic"), "revenue@9", "x"); return err }, is(memstore.ErrNotFound)},
		{"load into a nested name", func() error { _, err := s.LoadTemplate(person("vic"), "revenue@1.0.0", "a/b"); return err }, is(memstore.ErrInvalid)},
		{"someone without a role cannot load", func() error {
			_, err := s.LoadTemplate(person("otto"), "revenue@1.0.0", "ottos")
			return err
		}, errorAs(&denied)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			head, _ := s.Head()
			if err := tt.run(); !tt.want(err) {
				t.Fatalf("err = %v", err)
			}
			if h, _ := s.Head(); h != head {
				t.Fatal("a refused call committed")
			}
		})
	}
}

func is(target error) func(error) bool { return func(err error) bool { return errors.Is(err, target) } }

func errorAs[T error](target *T) func(error) bool {
	return func(err error) bool { return errors.As(err, target) }
}

func TestStore_TemplatesListedToViewers(t *testing.T) {
	s := newRevenueStore(t)
	for _, v := range []string{"1.0.0", "1.1.0"} {
		if _, err := s.PublishTemplate(context.Background(), "revenue", v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PublishTemplate(context.Background(), "other", "1"); err != nil {
		t.Fatal(err)
	}
	names := func(ctx context.Context) []string {
		list, err := s.Templates(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, tpl := range list {
			out = append(out, tpl.Name())
		}
		return out
	}
	for _, tt := range []struct {
		who  context.Context
		want []string
	}{
		{context.Background(), []string{"other@1", "revenue@1.0.0", "revenue@1.1.0"}},
		{person("vic"), []string{"revenue@1.0.0", "revenue@1.1.0"}},
		{person("otto"), []string{"other@1"}},
		{person("nobody"), []string{}},
	} {
		if diff := cmp.Diff(tt.want, names(tt.who)); diff != "" {
			t.Errorf("templates (-want +got):\n%s", diff)
		}
	}
}

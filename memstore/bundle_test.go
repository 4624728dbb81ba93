package memstore_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/selmem/selmem/memstore"
)

// exportRevenue publishes two templates of the revenue workspace and
// exports it.
func exportRevenue(t *testing.T, opts *memstore.ExportOptions) (*memstore.Store, []byte, memstore.ExportResult) {
	t.Helper()
	ctx := context.Background()
	s := newRevenueStore(t)
	for _, v := range []string{"1.0.0", "1.1.0"} {
		if _, err := s.PublishTemplate(ctx, "revenue", v); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Insert(ctx, "/memories/workspaces/revenue/task.md", 0, "<!-- after "+v+" -->", nil); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	res, err := s.ExportWorkspace(ctx, "revenue", opts, &buf)
	if err != nil {
		t.Fatal(err)
	}
	return s, buf.Bytes(), res
}

func TestStore_ExportIsAGitBundle(t *testing.T) {
	_, data, res := exportRevenue(t, nil)
	file := filepath.Join(t.TempDir(), "revenue.bundle")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	gitIn(t, repo, "init", "-q")
	if out := gitIn(t, repo, "bundle", "verify", file); !strings.Contains(out, "is okay") {
		t.Errorf("git bundle verify:\n%s", out)
	}
	heads := gitIn(t, repo, "bundle", "list-heads", file)
	if diff := cmp.Diff(strings.Join(res.Refs, "\n"), heads); diff != "" {
		t.Errorf("list-heads (-export +git):\n%s", diff)
	}
	for _, want := range []string{" refs/heads/main", " refs/tags/templates/revenue/1.0.0", " refs/tags/templates/revenue/1.1.0"} {
		if !strings.Contains(heads, want) {
			t.Errorf("the bundle has no %s:\n%s", want, heads)
		}
	}
	// git reads every object and finds the history whole.
	gitIn(t, repo, "fetch", "-q", file, "refs/*:refs/*")
	gitIn(t, repo, "fsck", "--strict", "--no-dangling")
	files := gitIn(t, repo, "ls-tree", "-r", "--name-only", "main")
	want := "workspaces/revenue/artifacts/dash/binding.yaml\nworkspaces/revenue/artifacts/dash/index.html\nworkspaces/revenue/output.md\n" +
		"workspaces/revenue/schemas/orders.md\nworkspaces/revenue/task.md\nworkspaces/revenue/tools/ledger.yaml\nworkspaces/revenue/tools/orders.yaml\n" +
		"workspaces/revenue/workspace.yaml"
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("the bundle's files (-want +got):\n%s", diff)
	}
	for _, f := range strings.Split(files, "\n") {
		content := gitIn(t, repo, "show", "main:"+f)
		for _, leak := range []string{"olga", "vic", "finance-prod", "sha256"} {
			if strings.Contains(content, leak) {
				t.Errorf("the bundle's %s carries %q:\n%s", f, leak, content)
			}
		}
	}
}

func TestStore_ExportImportRoundTrip(t *testing.T) {
	ctx := context.Background()
	src, data, _ := exportRevenue(t, nil)
	dst := newStore(t)
	res, err := dst.ImportBundle(ctx, bytes.NewReader(data), &memstore.ImportOptions{As: "their-revenue", Origin: "revenue.bundle"})
	if err != nil {
		t.Fatal(err)
	}
	const dir = "/memories/workspaces/their-revenue/"
	if got := read(t, dst, dir+"task.md"); got != read(t, src, "/memories/workspaces/revenue/task.md") {
		t.Errorf("task.md = %q", got)
	}
	wsYAML := read(t, dst, dir+"workspace.yaml")
	for _, want := range []string{"title: Revenue", "owners:\n    - selmem", "template: revenue", "bundle: revenue.bundle", "commit: " + res.Origin.Commit} {
		if !strings.Contains(wsYAML, want) {
			t.Errorf("workspace.yaml lacks %q:\n%s", want, wsYAML)
		}
	}
	list, err := dst.Templates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tpl := range list {
		names = append(names, tpl.Name())
	}
	if diff := cmp.Diff([]string{"their-revenue@1.0.0", "their-revenue@1.1.0"}, names); diff != "" {
		t.Errorf("imported templates (-want +got):\n%s", diff)
	}
	// The imported templates load, with the content they were published
	// with.
	if _, err := dst.LoadTemplate(ctx, "their-revenue@1.0.0", "v1"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, dst, "/memories/workspaces/v1/task.md"); strings.Contains(got, "after") {
		t.Errorf("template 1.0.0 holds a later edit: %q", got)
	}
	// Importing again refuses and changes nothing.
	head, _ := dst.Head()
	if _, err := dst.ImportBundle(ctx, bytes.NewReader(data), &memstore.ImportOptions{As: "their-revenue"}); !errors.Is(err, memstore.ErrExists) {
		t.Fatalf("second import = %v, want ErrExists", err)
	}
	if h, _ := dst.Head(); h != head {
		t.Error("a refused import committed")
	}
	gitCmd(t, dst, "fsck", "--strict", "--no-dangling")
}

func TestStore_ExportOneTemplate(t *testing.T) {
	_, data, res := exportRevenue(t, &memstore.ExportOptions{Template: "1.0.0"})
	if len(res.Refs) != 2 || !strings.HasSuffix(res.Refs[1], "refs/tags/templates/revenue/1.0.0") {
		t.Fatalf("refs = %v", res.Refs)
	}
	dst := newStore(t)
	got, err := dst.ImportBundle(context.Background(), bytes.NewReader(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Workspace != "revenue" || got.Origin.Version != "1.0.0" {
		t.Errorf("imported %+v", got)
	}
}

// TestStore_ImportRefusesDamage: a truncated or altered bundle is refused
// and leaves nothing behind: no commit, no ref, no object.
func TestStore_ImportRefusesDamage(t *testing.T) {
	_, data, _ := exportRevenue(t, nil)
	headerEnd := bytes.Index(data, []byte("\n\nPACK")) + 2
	flip := func(at int) []byte {
		b := bytes.Clone(data)
		b[at] ^= 0x55
		return b
	}
	tests := []struct {
		name string
		data []byte
		max  int64
		want error
	}{
		{"empty", nil, 0, memstore.ErrInvalid},
		{"garbage", []byte("hello, this is not a bundle\n\n"), 0, memstore.ErrInvalid},
		{"v3", append([]byte("# v3 git bundle\n"), data[len("# v2 git bundle\n"):]...), 0, memstore.ErrInvalid},
		{"header only", data[:headerEnd], 0, memstore.ErrInvalid},
		{"truncated header", data[:headerEnd/2], 0, memstore.ErrInvalid},
		{"truncated pack", data[:headerEnd+(len(data)-headerEnd)/2], 0, memstore.ErrInvalid},
		{"last byte missing", data[:len(data)-1], 0, memstore.ErrInvalid},
		{"pack byte flipped", flip(headerEnd + (len(data)-headerEnd)/2), 0, memstore.ErrInvalid},
		{"checksum flipped", flip(len(data) - 3), 0, memstore.ErrInvalid},
		{"prerequisite", append([]byte("# v2 git bundle\n-"+strings.Repeat("a", 40)+" base\n"), data[len("# v2 git bundle\n"):]...), 0, memstore.ErrInvalid},
		{"ref outside the namespace", bytes.Replace(data, []byte("refs/tags/templates/revenue/1.1.0"), []byte("refs/heads/xxxxxxxxxxxxxxxxxxxxxxx"), 1), 0, memstore.ErrInvalid},
		{"ref of another workspace", bytes.Replace(data, []byte("refs/tags/templates/revenue/1.1.0"), []byte("refs/tags/templates/finance/1.1.0"), 1), 0, memstore.ErrInvalid},
		{"too large", data, int64(len(data) - 1), memstore.ErrRejected},
	}
	dst := newStore(t)
	before := snapshotRepo(t, dst)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := dst.ImportBundle(context.Background(), bytes.NewReader(tt.data), &memstore.ImportOptions{MaxBytes: tt.max})
			if !errors.Is(err, tt.want) {
				t.Fatalf("import = %v, want %v", err, tt.want)
			}
			if diff := cmp.Diff(before, snapshotRepo(t, dst)); diff != "" {
				t.Fatalf("a refused import left something behind (-before +after):\n%s", diff)
			}
		})
	}
}

// snapshotRepo lists every file under the repository's .git directory
// except the lock and the index, which change without a write.
func snapshotRepo(t *testing.T, s *memstore.Store) []string {
	t.Helper()
	var out []string
	root := filepath.Join(s.Dir(), ".git")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel != "selmem.lock" && rel != "index" {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

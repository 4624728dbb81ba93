package schemas_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/profiler"
	"github.com/selmem/selmem/schemas"
)

// openStore opens a store in a fresh home.
func openStore(t *testing.T) (*memstore.Store, string) {
	t.Helper()
	home := t.TempDir()
	s, err := memstore.Open(context.Background(), home, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s, home
}

func commitCount(t *testing.T, home string) int {
	t.Helper()
	out, err := exec.Command("git", "-C", filepath.Join(home, "memory"), "rev-list", "--count", "HEAD").Output()
	if err != nil {
		return 0
	}
	var n int
	fmt.Sscan(string(out), &n)
	return n
}

// writeCSVs writes customers.csv and orders.csv (orders.customer_id
// references customers.id) into dir.
func writeCSVs(t *testing.T, dir string, orders int) (customers, ordersPath string) {
	t.Helper()
	var cu, or strings.Builder
	cu.WriteString("id,name,segment\n")
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&cu, "%d,customer %d,%s\n", i, i, []string{"retail", "smb", "corp"}[i%3])
	}
	or.WriteString("order_id,customer_id,amount\n")
	for i := 1; i <= orders; i++ {
		fmt.Fprintf(&or, "%d,%d,%d.%02d\n", 5000+i, 1+(i*37)%250, i%300, i%100)
	}
	customers, ordersPath = filepath.Join(dir, "customers.csv"), filepath.Join(dir, "orders.csv")
	for p, s := range map[string]string{customers: cu.String(), ordersPath: or.String()} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return customers, ordersPath
}

func profile(t *testing.T, path, name string) *profiler.TableProfile {
	t.Helper()
	tp, err := profiler.Profile(context.Background(), profiler.FileSource{Path: path}, &profiler.Options{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func TestSave(t *testing.T) {
	ctx := context.Background()
	s, home := openStore(t)
	customers, orders := writeCSVs(t, t.TempDir(), 2000)
	w := &memstore.WriteOptions{Tool: "test", Source: memstore.SourceTrustedToolResult}

	before := commitCount(t, home)
	res, err := schemas.Save(ctx, s, "sales", "customers", profile(t, customers, "customers"), "file:customers.csv", 0, w)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := commitCount(t, home)-before, 1; got != want {
		t.Errorf("%d commits, want %d (one per stored profile)", got, want)
	}
	if got, want := strings.Join(res.Changed, " "), "/memories/workspaces/sales/schemas/customers.joins.csv /memories/workspaces/sales/schemas/customers.md /memories/workspaces/sales/schemas/relationships.md"; got != want {
		t.Errorf("changed %s, want %s", got, want)
	}
	md, _, err := s.Read(res.Schema)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(md), "---\ntype: schema\nsource: trusted_tool_result\nconfidence: 1\nconnector: \"file:customers.csv\"\nrows: 300\n") || string(md) != res.Text {
		t.Errorf("customers.md:\n%s", md)
	}

	res, err = schemas.Save(ctx, s, "sales", "orders", profile(t, orders, "orders"), "file:orders.csv", 0, w)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Related) != 1 || res.Related[0].FromSource != "orders" || res.Related[0].ToColumn != "id" {
		t.Errorf("relationships %+v", res.Related)
	}
	rel, _, _ := s.Read(res.Relationships)
	if !strings.Contains(string(rel), "- orders.customer_id → customers.id: many-to-one") {
		t.Errorf("relationships.md:\n%s", rel)
	}

	// The same data again: nothing to write, no commit.
	before = commitCount(t, home)
	res, err = schemas.Save(ctx, s, "sales", "orders", profile(t, orders, "orders"), "file:orders.csv", 0, w)
	if err != nil || res.Commit != "" || res.Changed != nil {
		t.Errorf("unchanged save: %+v, %v", res, err)
	}
	if got := commitCount(t, home) - before; got != 0 {
		t.Errorf("unchanged save made %d commits", got)
	}

	// A deleted schema no longer takes part in relationships.
	if _, err := s.Delete(ctx, "/memories/workspaces/sales/schemas/customers.md", nil); err != nil {
		t.Fatal(err)
	}
	res, err = schemas.Save(ctx, s, "sales", "orders", profile(t, orders, "orders"), "file:orders.csv", 0, w)
	if err != nil || len(res.Related) != 0 || len(res.Changed) != 1 {
		t.Errorf("after deleting customers.md: %+v, %v", res, err)
	}

	for _, tc := range []struct{ ws, name, want string }{
		{"sales", "relationships", "reserved"},
		{"sales", "x.joins", "reserved"},
		{"sales", "a/b", "single name"},
		{"sales", "", "name is empty"},
		{"../x", "n", "single name"},
		{"", "n", "workspace is empty"},
		{"sales", ".hidden", "not a valid name"},
	} {
		_, err := schemas.Save(ctx, s, tc.ws, tc.name, profile(t, orders, "orders"), "", 0, w)
		if !errors.Is(err, memstore.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Save(%q, %q): %v, want ErrInvalid mentioning %q", tc.ws, tc.name, err, tc.want)
		}
	}
}

func TestSourceSpec_Source(t *testing.T) {
	root := t.TempDir()
	other := t.TempDir()
	in, _ := writeCSVs(t, root, 10)
	out, _ := writeCSVs(t, other, 10)
	link := filepath.Join(root, "link.csv")
	if err := os.Symlink(out, link); err != nil {
		t.Fatal(err)
	}
	roots := []string{root}
	for _, tc := range []struct {
		name  string
		spec  schemas.SourceSpec
		roots []string
		ref   string // want this connector, or
		err   string // an error mentioning this
	}{
		{"file in root", schemas.SourceSpec{Kind: "file", Path: in}, roots, "file:customers.csv", ""},
		{"file outside", schemas.SourceSpec{Kind: "file", Path: out}, roots, "", "outside the data roots"},
		{"dotdot", schemas.SourceSpec{Kind: "file", Path: root + "/../x.csv"}, roots, "", ".. element"},
		{"symlink out", schemas.SourceSpec{Kind: "file", Path: link}, roots, "", "outside the data roots"},
		{"relative", schemas.SourceSpec{Kind: "file", Path: "customers.csv"}, roots, "", "not absolute"},
		{"missing", schemas.SourceSpec{Kind: "file", Path: filepath.Join(root, "nope.csv")}, roots, "", "does not exist"},
		{"missing outside", schemas.SourceSpec{Kind: "file", Path: filepath.Join(other, "nope.csv")}, roots, "", "outside the data roots"},
		{"directory", schemas.SourceSpec{Kind: "file", Path: root}, roots, "", "not a regular file"},
		{"no roots", schemas.SourceSpec{Kind: "file", Path: in}, nil, "", "profile.data_roots"},
		{"any file", schemas.SourceSpec{Kind: "file", Path: out}, []string{schemas.AnyFile}, "file:customers.csv", ""},
		{"unknown kind", schemas.SourceSpec{Kind: "ftp"}, roots, "", `kind "ftp" is not known`},
		{"sqlite outside", schemas.SourceSpec{Kind: "sql", DSN: filepath.Join(other, "x.db"), Query: "SELECT 1"}, roots, "", "outside the data roots"},
		{"sql env unset", schemas.SourceSpec{Kind: "sql", DSNEnv: "SELMEM_TEST_UNSET_DSN", Query: "SELECT 1"}, roots, "", "SELMEM_TEST_UNSET_DSN is not set"},
		{"sql no query", schemas.SourceSpec{Kind: "sql", DSN: "postgres://db/x"}, roots, "", "needs a query"},
		{"sql postgres", schemas.SourceSpec{Kind: "sql", DSN: "postgres://u:pw@db:5432/x?sslmode=disable", Query: "SELECT 1"}, roots, "sql:postgres://db:5432/x", ""},
		{"rest", schemas.SourceSpec{Kind: "rest", URL: "https://api.example.com:8443/v1/items?key=s3cret"}, roots, "rest:https://api.example.com:8443/v1/items", ""},
		{"rest bad url", schemas.SourceSpec{Kind: "rest", URL: "ftp://x"}, roots, "", "http or https"},
		{"rest bad header", schemas.SourceSpec{Kind: "rest", URL: "https://x", Headers: map[string]string{"Authorization": "Bearer abc"}}, roots, "", "environment variable"},
		{"mixed", schemas.SourceSpec{Kind: "file", Path: in, URL: "https://x"}, roots, "", "takes only a path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ref, err := tc.spec.Source(tc.roots)
			switch {
			case tc.err == "" && (err != nil || ref != tc.ref):
				t.Errorf("Source: %q, %v; want %q", ref, err, tc.ref)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("Source: %v; want an error mentioning %q", err, tc.err)
			}
		})
	}
}

func TestHasPassword(t *testing.T) {
	for dsn, want := range map[string]bool{
		"postgres://u:pw@db/x":                    true,
		"postgres://u@db/x?password=pw":           true,
		"host=db user=u password=pw dbname=x":     true,
		"postgres://u@db/x":                       false,
		"/data/shop.db":                           false,
		"host=db user=u dbname=x sslmode=require": false,
	} {
		if got := schemas.HasPassword(dsn); got != want {
			t.Errorf("HasPassword(%q) = %v, want %v", dsn, got, want)
		}
	}
}

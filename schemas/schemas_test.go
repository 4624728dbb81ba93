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

	"github.com/selmem/selmem/internal/egress"
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
	md, _, err := s.Read(ctx, res.Schema)
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
	rel, _, _ := s.Read(ctx, res.Relationships)
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
	t.Setenv("SELMEM_TEST_WH_DSN", "postgres://u:pw@db.internal:5432/wh?sslmode=disable")
	policy, err := egress.New(egress.Config{Key: "profile",
		Credentials: map[string]egress.Credential{"api": {Env: "SELMEM_TEST_API_TOKEN", Hosts: []string{"api.example.com"}}},
		Connections: map[string]egress.Connection{
			"wh":      {Driver: "postgres", DSNEnv: "SELMEM_TEST_WH_DSN"},
			"unset":   {Driver: "postgres", DSNEnv: "SELMEM_TEST_UNSET_DSN"},
			"shop":    {Driver: "sqlite", Path: filepath.Join(root, "customers.csv")},
			"outside": {Driver: "sqlite", Path: out},
		}})
	if err != nil {
		t.Fatal(err)
	}
	mcp := schemas.Access{Roots: []string{root}, Policy: policy}
	local := schemas.Access{Local: true, Policy: policy}
	for _, tc := range []struct {
		name string
		spec schemas.SourceSpec
		a    schemas.Access
		ref  string // want this connector, or
		err  string // an error mentioning this
	}{
		{"file in root", schemas.SourceSpec{Kind: "file", Path: in}, mcp, "file:customers.csv", ""},
		{"file outside", schemas.SourceSpec{Kind: "file", Path: out}, mcp, "", "outside the data roots"},
		{"dotdot", schemas.SourceSpec{Kind: "file", Path: root + "/../x.csv"}, mcp, "", ".. element"},
		{"symlink out", schemas.SourceSpec{Kind: "file", Path: link}, mcp, "", "outside the data roots"},
		{"relative", schemas.SourceSpec{Kind: "file", Path: "customers.csv"}, mcp, "", "not absolute"},
		{"missing", schemas.SourceSpec{Kind: "file", Path: filepath.Join(root, "nope.csv")}, mcp, "", "does not exist"},
		{"missing outside", schemas.SourceSpec{Kind: "file", Path: filepath.Join(other, "nope.csv")}, mcp, "", "outside the data roots"},
		{"directory", schemas.SourceSpec{Kind: "file", Path: root}, mcp, "", "not a regular file"},
		{"no roots", schemas.SourceSpec{Kind: "file", Path: in}, schemas.Access{}, "", "profile.data_roots"},
		{"local any file", schemas.SourceSpec{Kind: "file", Path: out}, local, "file:customers.csv", ""},
		{"unknown kind", schemas.SourceSpec{Kind: "ftp"}, mcp, "", `kind "ftp" is not known`},
		{"sqlite path", schemas.SourceSpec{Kind: "sql", Path: in, Query: "SELECT 1"}, mcp, "sql:sqlite:customers.csv", ""},
		{"sqlite path outside", schemas.SourceSpec{Kind: "sql", Path: filepath.Join(other, "x.db"), Query: "SELECT 1"}, mcp, "", "outside the data roots"},
		{"connection postgres", schemas.SourceSpec{Kind: "sql", Connection: "wh", Query: "SELECT 1"}, mcp, "sql:connection:wh", ""},
		{"connection sqlite", schemas.SourceSpec{Kind: "sql", Connection: "shop", Query: "SELECT 1"}, mcp, "sql:connection:shop", ""},
		{"connection sqlite outside", schemas.SourceSpec{Kind: "sql", Connection: "outside", Query: "SELECT 1"}, mcp, "", "outside the data roots"},
		{"connection unknown", schemas.SourceSpec{Kind: "sql", Connection: "nope", Query: "SELECT 1"}, mcp, "", `connection "nope" is not configured (configured: outside, shop, unset, wh)`},
		{"connection env unset", schemas.SourceSpec{Kind: "sql", Connection: "unset", Query: "SELECT 1"}, mcp, "", "SELMEM_TEST_UNSET_DSN is not set"},
		{"dsn refused", schemas.SourceSpec{Kind: "sql", DSN: "host=127.0.0.1 user=postgres", Query: "SELECT 1"}, mcp, "", "a DSN cannot be given here"},
		{"dsn local", schemas.SourceSpec{Kind: "sql", DSN: "postgres://u:pw@db:5432/x?sslmode=disable", Query: "SELECT 1"}, local, "sql:postgres://db:5432/x", ""},
		{"sqlite dsn local", schemas.SourceSpec{Kind: "sql", DSN: out, Query: "SELECT 1"}, local, "sql:sqlite:customers.csv", ""},
		{"sql nothing", schemas.SourceSpec{Kind: "sql", Query: "SELECT 1"}, mcp, "", "needs connection"},
		{"sql both", schemas.SourceSpec{Kind: "sql", Connection: "wh", Path: in, Query: "SELECT 1"}, mcp, "", "not both"},
		{"sql no query", schemas.SourceSpec{Kind: "sql", Connection: "wh"}, mcp, "", "needs a query"},
		{"rest", schemas.SourceSpec{Kind: "rest", URL: "https://api.example.com:8443/v1/items?key=s3cret"}, mcp, "rest:https://api.example.com:8443/v1/items", ""},
		{"rest credential", schemas.SourceSpec{Kind: "rest", URL: "https://api.example.com/v1", Credential: "api"}, mcp, "", "SELMEM_TEST_API_TOKEN is not set"},
		{"rest unknown credential", schemas.SourceSpec{Kind: "rest", URL: "https://api.example.com/v1", Credential: "x"}, mcp, "", `credential "x" is not configured (configured: api)`},
		{"rest user info", schemas.SourceSpec{Kind: "rest", URL: "https://u:p@api.example.com/v1"}, mcp, "", "user or password"},
		{"rest ipv6", schemas.SourceSpec{Kind: "rest", URL: "http://[2001:db8::1]:8080/v1"}, mcp, "rest:http://[2001:db8::1]:8080/v1", ""},
		{"rest ipv6 local", schemas.SourceSpec{Kind: "rest", URL: "http://[::1]/v1", Headers: map[string]string{"X-Key": "SELMEM_TEST_KEY"}}, local, "rest:http://[::1]/v1", ""},
		{"rest bad url", schemas.SourceSpec{Kind: "rest", URL: "ftp://x"}, mcp, "", "http or https"},
		{"rest headers refused", schemas.SourceSpec{Kind: "rest", URL: "https://x", Headers: map[string]string{"X-Leak": "SELMEM_TEST_WH_DSN"}}, mcp, "", "headers cannot be given here"},
		{"rest bad header local", schemas.SourceSpec{Kind: "rest", URL: "https://x", Headers: map[string]string{"Authorization": "Bearer abc"}}, local, "", "environment variable"},
		{"mixed", schemas.SourceSpec{Kind: "file", Path: in, URL: "https://x"}, mcp, "", "takes only a path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ref, err := tc.spec.Source(tc.a)
			switch {
			case tc.err == "" && (err != nil || ref != tc.ref):
				t.Errorf("Source: %q, %v; want %q", ref, err, tc.ref)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("Source: %v; want an error mentioning %q", err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), "pw@") {
				t.Errorf("error leaks a DSN: %v", err)
			}
		})
	}
}

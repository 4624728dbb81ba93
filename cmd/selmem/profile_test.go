package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/selmem/selmem/internal/egress/egresstest"
	"github.com/selmem/selmem/profiler"
)

// gitShow returns the content of rel at HEAD of the memory repository.
func gitShow(t *testing.T, home, rel string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", filepath.Join(home, "memory"), "show", "main:"+rel).CombinedOutput()
	if err != nil {
		t.Fatalf("git show %s: %v: %s", rel, err, out)
	}
	return string(out)
}

func commitCount(t *testing.T, home string) int {
	t.Helper()
	out, err := exec.Command("git", "-C", filepath.Join(home, "memory"), "rev-list", "--count", "main").Output()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	fmt.Sscan(string(out), &n)
	return n
}

// relatedCSVs writes customers.csv and orders.csv, whose customer_id
// references customers.id.
func relatedCSVs(t *testing.T, orders int) (customers, ordersPath string) {
	t.Helper()
	dir := t.TempDir()
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

func TestCLI_Profile(t *testing.T) {
	home := t.TempDir()
	customers, orders := relatedCSVs(t, 2000)

	t.Run("print markdown", func(t *testing.T) {
		code, stdout, stderr := cli(t, home, "", "profile", customers)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.HasPrefix(stdout, "# customers\n300 rows × 3 columns; csv; key: id") {
			t.Errorf("stdout:\n%s", stdout)
		}
		if stderr != "" {
			t.Errorf("stderr %q, want nothing (not a terminal: no progress bar)", stderr)
		}
	})
	t.Run("print json", func(t *testing.T) {
		code, stdout, stderr := cli(t, home, "", "profile", orders, "--json", "--name", "o")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var tp profiler.TableProfile
		if err := json.Unmarshal([]byte(stdout), &tp); err != nil {
			t.Fatalf("stdout is not a JSON profile: %v\n%s", err, stdout)
		}
		if got, want := fmt.Sprint(tp.Name, " ", tp.Rows, " ", len(tp.Columns)), "o 2000 3"; got != want {
			t.Errorf("profile %s, want %s", got, want)
		}
	})
	t.Run("budget", func(t *testing.T) {
		_, stdout, _ := cli(t, home, "", "profile", customers, "--budget", "40")
		if n := profiler.Tokens(stdout); n > 60 {
			t.Errorf("%d tokens at --budget 40:\n%s", n, stdout)
		}
	})

	if code, _, stderr := cli(t, home, "", "init"); code != exitOK {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	before := commitCount(t, home)
	code, stdout, stderr := cli(t, home, "", "profile", customers, "--workspace", "sales", "--name", "customers")
	if code != exitOK {
		t.Fatalf("profile customers: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"Wrote: /memories/workspaces/sales/schemas/customers.md\n",
		"Wrote: /memories/workspaces/sales/schemas/customers.joins.csv\n",
		"Wrote: /memories/workspaces/sales/schemas/relationships.md\n",
		"(0 relationships)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	md := gitShow(t, home, "workspaces/sales/schemas/customers.md")
	for _, want := range []string{"---\ntype: schema\nsource: trusted_tool_result\nconfidence: 1\nconnector: \"file:customers.csv\"\nrows: 300\nfingerprint: \"sha256:", "---\n# customers\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("customers.md lacks %q:\n%s", want, md)
		}
	}
	if got := gitShow(t, home, "workspaces/sales/schemas/relationships.md"); !strings.Contains(got, "No candidate join keys") {
		t.Errorf("relationships.md with one source:\n%s", got)
	}

	code, stdout, stderr = cli(t, home, "", "profile", orders, "--workspace", "sales", "--name", "orders")
	if code != exitOK {
		t.Fatalf("profile orders: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "Wrote: /memories/workspaces/sales/schemas/relationships.md\n") || !strings.Contains(stdout, "(1 relationships)") {
		t.Errorf("stdout:\n%s", stdout)
	}
	rel := gitShow(t, home, "workspaces/sales/schemas/relationships.md")
	if !strings.HasPrefix(rel, "---\ntype: relationships\nsource: trusted_tool_result\n---\n# Relationships\n") ||
		!strings.Contains(rel, "- orders.customer_id → customers.id: many-to-one; 100.0% of values found") {
		t.Errorf("relationships.md:\n%s", rel)
	}
	// One commit per stored profile.
	if got, want := commitCount(t, home)-before, 2; got != want {
		t.Errorf("%d commits, want %d", got, want)
	}
	if code, stdout, _ := cli(t, home, "", "log", "workspaces/sales/schemas/orders.md"); code != exitOK ||
		!strings.Contains(stdout, "Tool: cli profile, Source: trusted_tool_result") {
		t.Errorf("log: %s", stdout)
	}

	// Profiling the same data again writes nothing; new data replaces the
	// schema in one commit.
	before = commitCount(t, home)
	if code, stdout, _ := cli(t, home, "", "profile", orders, "--workspace", "sales", "--name", "orders"); code != exitOK ||
		strings.Count(stdout, "Unchanged: ") != 3 {
		t.Errorf("re-profile unchanged: exit %d:\n%s", code, stdout)
	}
	if got := commitCount(t, home); got != before {
		t.Errorf("unchanged re-profile made %d commits", got-before)
	}
	_, orders2 := relatedCSVs(t, 2500)
	if code, stdout, stderr := cli(t, home, "", "profile", orders2, "--workspace", "sales", "--name", "orders"); code != exitOK {
		t.Fatalf("re-profile: exit %d: %s%s", code, stdout, stderr)
	}
	if got := gitShow(t, home, "workspaces/sales/schemas/orders.md"); !strings.Contains(got, "rows: 2500\n") {
		t.Errorf("orders.md not replaced:\n%s", got)
	}
	if got, want := commitCount(t, home)-before, 1; got != want {
		t.Errorf("re-profile with new data: %d commits, want %d", got, want)
	}
}

// initWithShop initialises a selmem home and writes a SQLite database
// with table p of 3 rows; it returns both paths.
func initWithShop(t *testing.T) (home, dbPath string) {
	t.Helper()
	home = t.TempDir()
	if code, _, stderr := cli(t, home, "", "init"); code != exitOK {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	dbPath = filepath.Join(t.TempDir(), "shop.db")
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE p(id INTEGER PRIMARY KEY, kind TEXT); INSERT INTO p(kind) VALUES ('a'),('b'),('a')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	return home, dbPath
}

func TestCLI_ProfileSources(t *testing.T) {
	home, dbPath := initWithShop(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0ken-value" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `{"data":{"items":[{"id":1,"kind":"a"},{"id":2,"kind":"b"}]}}`)
	}))
	defer srv.Close()
	t.Setenv("TEST_PROFILE_TOKEN", "Bearer t0ken-value")

	code, _, stderr := cli(t, home, "", "profile", "--sql", dbPath, "SELECT * FROM p", "--workspace", "shop", "--name", "products")
	if code != exitOK {
		t.Fatalf("sql: exit %d: %s", code, stderr)
	}
	if md := gitShow(t, home, "workspaces/shop/schemas/products.md"); !strings.Contains(md, "connector: \"sql:sqlite:shop.db\"\nrows: 3\n") {
		t.Errorf("products.md:\n%s", md)
	}
	code, stdout, stderr := cli(t, home, "", "profile", "--url", srv.URL+"/v1/items?api_key=s3cret", "--records-path", "data.items",
		"--header", "Authorization: TEST_PROFILE_TOKEN", "--workspace", "shop", "--name", "items")
	if code != exitOK {
		t.Fatalf("url: exit %d: %s%s", code, stdout, stderr)
	}
	md := gitShow(t, home, "workspaces/shop/schemas/items.md")
	if !strings.Contains(md, "connector: \"rest:http://127.0.0.1:") || !strings.Contains(md, "/v1/items\"\nrows: 2\n") ||
		strings.Contains(md, "s3cret") || strings.Contains(md, "t0ken") {
		t.Errorf("items.md (connector without query or credentials):\n%s", md)
	}

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no source", []string{"profile"}, exitUsage, "give one source"},
		{"two sources", []string{"profile", "--sql", dbPath, "--url", srv.URL, "SELECT 1"}, exitUsage, "give one source"},
		{"sql without query", []string{"profile", "--sql", dbPath}, exitUsage, "QUERY"},
		{"header without url", []string{"profile", "x.csv", "--header", "A: B"}, exitUsage, "--url only"},
		{"bad header", []string{"profile", "--url", srv.URL, "--header", "Authorization Bearer x"}, exitUsage, "Name: ENV_VAR"},
		{"json and workspace", []string{"profile", "x.csv", "--json", "--workspace", "w", "--name", "n"}, exitUsage, "drop --json"},
		{"workspace without name", []string{"profile", "x.csv", "--workspace", "w"}, exitUsage, "--name"},
		{"reserved name", []string{"profile", "x.csv", "--workspace", "w", "--name", "relationships"}, exitUsage, "reserved"},
		{"slash in name", []string{"profile", "x.csv", "--workspace", "w", "--name", "a/b"}, exitUsage, "single name"},
		{"missing file", []string{"profile", "nope.csv"}, exitFailed, "does not exist"},
		{"missing env", []string{"profile", "--url", srv.URL, "--header", "X-Key: NOPE_UNSET_VAR"}, exitFailed, "NOPE_UNSET_VAR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, home, "", tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q (stdout %q)", code, stderr, tc.code, tc.want, stdout)
			}
		})
	}
}

// TestCLI_ProfileNamed profiles a configured connection and sends a
// configured credential, and shows that the host the user names is
// reached while a redirect from it to another loopback port is refused.
func TestCLI_ProfileNamed(t *testing.T) {
	home, dbPath := initWithShop(t)
	other := egresstest.NewRecorder(t, nil)
	api := egresstest.NewRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/away" {
			http.Redirect(w, r, other.URL, http.StatusFound)
			return
		}
		if r.Header.Get("X-Api-Key") != "k3y" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `{"data":{"items":[{"id":1},{"id":2}]}}`)
	})
	yml := fmt.Sprintf(`profile:
  credentials:
    api:
      env: TEST_API_KEY
      hosts: [%q]
      header: X-Api-Key
      allow_http: true
  connections:
    shop:
      driver: sqlite
      path: %s
`, api.Addr(), dbPath)
	if err := os.WriteFile(filepath.Join(home, "selmem.yaml"), []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_API_KEY", "k3y")
	if code, stdout, stderr := cli(t, home, "", "profile", "--connection", "shop", "SELECT * FROM p"); code != exitOK || !strings.Contains(stdout, "3 rows") {
		t.Errorf("--connection: exit %d: %s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := cli(t, home, "", "profile", "--connection", "shop", "DELETE FROM p"); code != exitFailed || !strings.Contains(stderr, "DELETE is not allowed") {
		t.Errorf("--connection DELETE: exit %d: %s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := cli(t, home, "", "profile", "--url", api.URL+"/items", "--records-path", "data.items", "--credential", "api"); code != exitOK || !strings.Contains(stdout, "2 rows") {
		t.Errorf("--credential: exit %d: %s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := cli(t, home, "", "profile", "--url", api.URL+"/away", "--credential", "api"); code != exitFailed || !strings.Contains(stderr, "refused: the redirect to 127.0.0.1 is a loopback address") {
		t.Errorf("redirect: exit %d: %s%s", code, stdout, stderr)
	}
	if n := len(other.Requests()); n != 0 {
		t.Errorf("the redirect target got %d requests", n)
	}
}

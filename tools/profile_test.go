package tools_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	_ "modernc.org/sqlite"

	"github.com/selmem/selmem/internal/egress"
	"github.com/selmem/selmem/internal/egress/egresstest"
	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/tools"
)

// profileEnv is a memory served over an in-process MCP client, with one
// data root.
type profileEnv struct {
	home, root string
	c          *client.Client
	mu         sync.Mutex
	changed    []string
	progress   []map[string]any
}

// newProfileEnv serves the tools with the outbound policy policy returns
// for the data root (nil: egress.Deny()).
func newProfileEnv(t *testing.T, policy func(root string) *egress.Policy) *profileEnv {
	t.Helper()
	ctx := context.Background()
	e := &profileEnv{home: t.TempDir(), root: t.TempDir()}
	var pol *egress.Policy
	if policy != nil {
		pol = policy(e.root)
	}
	store, err := memstore.Open(ctx, e.home, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close(ctx) })
	srv := server.NewMCPServer("selmem-test", "v0", server.WithToolCapabilities(false))
	tools.Register(srv, store, &tools.Options{
		Author:    "tester",
		DataRoots: []string{e.root},
		Egress:    pol,
		Changed: func(paths []string) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.changed = append(e.changed, paths...)
		},
	})
	e.c = connect(t, srv, func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.progress = append(e.progress, n.Params.AdditionalFields)
		}
	})
	return e
}

// call runs profile_source and returns its text, structured output and isError.
func (e *profileEnv) call(t *testing.T, args map[string]any, meta *mcp.Meta) (string, map[string]any, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tools.NameProfileSource
	req.Params.Arguments = args
	req.Params.Meta = meta
	res, err := e.c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("protocol error: %v", err)
	}
	return unpack(res)
}

func (e *profileEnv) commits(t *testing.T) int {
	t.Helper()
	out, err := exec.Command("git", "-C", filepath.Join(e.home, "memory"), "rev-list", "--count", "HEAD").Output()
	if err != nil {
		return 0
	}
	var n int
	fmt.Sscan(string(out), &n)
	return n
}

func (e *profileEnv) show(t *testing.T, rel string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", filepath.Join(e.home, "memory"), "show", "HEAD:"+rel).CombinedOutput()
	if err != nil {
		t.Fatalf("git show %s: %v: %s", rel, err, out)
	}
	return string(out)
}

// writeFile writes text to dir/name and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func customersCSV() string {
	var b strings.Builder
	b.WriteString("id,name,segment\n")
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&b, "%d,customer %d,%s\n", i, i, []string{"retail", "smb", "corp"}[i%3])
	}
	return b.String()
}

func ordersCSV(n int) string {
	var b strings.Builder
	b.WriteString("order_id,customer_id,amount\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d,%d,%d.%02d\n", 5000+i, 1+(i*37)%250, i%300, i%100)
	}
	return b.String()
}

func fileSource(p string) map[string]any { return map[string]any{"kind": "file", "path": p} }

func TestProfileSource(t *testing.T) {
	const secret = "t0ken"
	t.Setenv("SELMEM_PROFILE_TEST_TOKEN", secret)
	t.Setenv("SELMEM_PROFILE_SALES_DSN", "postgres://sales:hunter2@db.internal/sales")
	// attacker is a loopback listener a model must not reach: nothing in
	// allowed_hosts names its port.
	attacker := egresstest.NewRecorder(t, nil)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	// open is an allowed endpoint the credential is not bound to.
	open := egresstest.NewRecorder(t, nil)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, attacker.URL+"/stolen", http.StatusFound)
			return
		case "/redirect-open":
			http.Redirect(w, r, open.URL+"/items", http.StatusFound)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+secret {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `{"data":{"items":[{"id":1,"kind":"a"},{"id":2,"kind":"b"}]}}`)
	}))
	defer api.Close()
	fakePG := egresstest.NewRecorder(t, nil) // a raw listener would do; nothing may connect at all
	e := newProfileEnv(t, func(root string) *egress.Policy {
		p, err := egress.New(egress.Config{
			Key:          "profile",
			AllowedHosts: []string{api.Listener.Addr().String(), slow.Listener.Addr().String(), open.Listener.Addr().String()},
			Credentials: map[string]egress.Credential{
				"api": {Env: "SELMEM_PROFILE_TEST_TOKEN", Hosts: []string{api.Listener.Addr().String()}, Prefix: "Bearer ", AllowHTTP: true},
			},
			Connections: map[string]egress.Connection{
				"shop":  {Driver: "sqlite", Path: filepath.Join(root, "shop.db")},
				"sales": {Driver: "postgres", DSNEnv: "SELMEM_PROFILE_UNSET_DSN"},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	})
	customers := writeFile(t, e.root, "customers.csv", customersCSV())
	orders := writeFile(t, e.root, "orders.csv", ordersCSV(2000))
	outside := writeFile(t, t.TempDir(), "secret.csv", "a,b\n1,2\n")
	// Credentials in the data: the profile masks them, so the write gate,
	// which would refuse a profile holding them, lets it be stored.
	creds := writeFile(t, e.root, "creds.csv", "id,note,dsn\n"+
		"1,shipped,postgres://app:Tr0ub4dor-77@10.0.0.5:5432/prod\n"+
		"2,password=Tr0ub4dor-88,postgres://app:Tr0ub4dor-99@10.0.0.6:5432/prod\n"+
		"3,api_key=Zq81xWv0Lm2Pq,mysql://ro@10.0.0.7/shop\n"+
		"4,shipped,https://ghp_0123456789abcdefghijklmnopqrstuvwxyz@github.com/acme/app\n")
	if err := os.Mkdir(filepath.Join(e.root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(e.root, "shop.db")
	sdb, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdb.Exec(`CREATE TABLE p(id INTEGER PRIMARY KEY, kind TEXT); INSERT INTO p(kind) VALUES ('a'),('b'),('a')`); err != nil {
		t.Fatal(err)
	}
	sdb.Close()
	elsewhere := t.TempDir() // where SQLite attacks try to write
	index := filepath.Join(t.TempDir(), "index.db")
	if err := os.WriteFile(index, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sqlite := func(q string) map[string]any { return map[string]any{"kind": "sql", "path": db, "query": q} }
	rest := func(url string) map[string]any { return map[string]any{"kind": "rest", "url": url} }

	args := func(ws, name string, src map[string]any) map[string]any {
		return map[string]any{"workspace": ws, "name": name, "source": src}
	}
	for _, tc := range []struct {
		name    string
		args    map[string]any
		isError bool
		want    []string // substrings of the text
		not     []string // must not appear in the text
		commits int
	}{
		{name: "customers", args: args("sales", "customers", fileSource(customers)),
			want: []string{"Profile stored at /memories/workspaces/sales/schemas/customers.md (300 rows, 3 columns; 0 relationships", "# customers\n300 rows × 3 columns"}, commits: 1},
		{name: "orders", args: args("sales", "orders", fileSource(orders)),
			want: []string{"(2000 rows, 3 columns; 1 relationships in the workspace)"}, commits: 1},
		{name: "same data again", args: args("sales", "orders", fileSource(orders)),
			want: []string{"already up to date", "nothing was written"}},
		{name: "budget", args: map[string]any{"workspace": "sales", "name": "c2", "source": fileSource(customers), "budget_tokens": 40},
			want: []string{"# c2"}, commits: 1},
		{name: "credentials in the data", args: args("sales", "creds", fileSource(creds)),
			want: []string{"(4 rows, 3 columns", "<secret>"}, not: []string{"Tr0ub4dor", "Zq81xWv0Lm2Pq", "ghp_", "ro@"}, commits: 1},
		{name: "sqlite via connection", args: args("shop", "products", map[string]any{"kind": "sql", "connection": "shop", "query": "SELECT * FROM p"}),
			want: []string{"(3 rows, 2 columns"}, not: []string{db}, commits: 1},
		{name: "sqlite via path", args: args("shop", "products2", sqlite("SELECT kind FROM p")),
			want: []string{"(3 rows, 1 columns"}, commits: 1},
		{name: "rest", args: args("shop", "items", map[string]any{"kind": "rest", "url": api.URL + "/v1/items", "records_path": "data.items", "credential": "api"}),
			want: []string{"(2 rows, 2 columns"}, not: []string{secret}, commits: 1},

		{name: "outside data roots", args: args("sales", "x", fileSource(outside)), isError: true,
			want: []string{"is outside the data roots", "Only files under " + e.root}},
		{name: "dotdot", args: args("sales", "x", fileSource(e.root+"/sub/../../secret.csv")), isError: true,
			want: []string{"contains a .. element"}},
		{name: "relative path", args: args("sales", "x", fileSource("orders.csv")), isError: true,
			want: []string{"is not absolute"}},
		{name: "missing file", args: args("sales", "x", fileSource(filepath.Join(e.root, "nope.csv"))), isError: true,
			want: []string{"does not exist"}},
		{name: "unknown kind", args: args("sales", "x", map[string]any{"kind": "ftp"}), isError: true,
			want: []string{`kind "ftp" is not known`, "file, sql or rest"}},
		{name: "source without kind", args: args("sales", "x", map[string]any{"path": orders}), isError: true,
			want: []string{`source is missing the required field(s) "kind"`}},
		{name: "unknown source field", args: args("sales", "x", map[string]any{"kind": "file", "path": orders, "password": "x"}), isError: true,
			want: []string{`source does not take the field(s) "password"`}},
		{name: "wrong field type", args: args("sales", "x", map[string]any{"kind": "rest", "url": api.URL, "timeout_seconds": "5"}), isError: true,
			want: []string{"source.timeout_seconds must be an integer, not a string."}},
		{name: "missing name", args: map[string]any{"workspace": "sales", "source": fileSource(orders)}, isError: true,
			want: []string{`missing required argument(s) "name"`}},
		{name: "bad workspace", args: args("../etc", "x", fileSource(orders)), isError: true,
			want: []string{`workspace "../etc" must be a single name`}},
		{name: "reserved name", args: args("sales", "relationships", fileSource(orders)), isError: true,
			want: []string{"reserved"}},
		{name: "sqlite outside roots", args: args("shop", "x", map[string]any{"kind": "sql", "path": filepath.Join(t.TempDir(), "x.db"), "query": "SELECT 1"}), isError: true,
			want: []string{"outside the data roots"}},
		{name: "rest timeout", args: args("shop", "x", map[string]any{"kind": "rest", "url": slow.URL + "/slow", "timeout_seconds": 1}), isError: true,
			want: []string{"did not answer within 1s", "nothing was written"}},
		{name: "rest unauthorized", args: args("shop", "x", rest(api.URL+"/v1/items")), isError: true,
			want: []string{"HTTP 401"}},
		{name: "unknown credential", args: args("shop", "x", map[string]any{"kind": "rest", "url": api.URL, "credential": "aws"}), isError: true,
			want: []string{`credential "aws" is not configured (configured: api)`, "profile.credentials"}},
		{name: "connection without its DSN", args: args("shop", "x", map[string]any{"kind": "sql", "connection": "sales", "query": "SELECT 1"}), isError: true,
			want: []string{"SELMEM_PROFILE_UNSET_DSN is not set"}},

		// Each attack below worked before package egress; now none of them
		// reaches its target (checked after the table).
		{name: "rest loopback", args: args("shop", "x", rest(attacker.URL+"/")), isError: true,
			want: []string{"refused: 127.0.0.1 is a loopback address; allow it with profile.allowed_hosts"}},
		{name: "rest localhost", args: args("shop", "x", rest("http://localhost:"+attacker.Port()+"/")), isError: true,
			want: []string{"refused: localhost resolves to a loopback address"}},
		{name: "rest ipv6 loopback", args: args("shop", "x", rest("http://[::1]:"+attacker.Port()+"/")), isError: true,
			want: []string{"refused: ::1 is a loopback address"}},
		{name: "rest hex loopback", args: args("shop", "x", rest("http://0x7f.1:"+attacker.Port()+"/")), isError: true,
			want: []string{"refused: 0x7f.1 is a loopback address"}},
		{name: "rest metadata", args: args("shop", "x", rest("http://169.254.169.254/latest/meta-data/")), isError: true,
			want: []string{"cloud metadata address"}},
		{name: "rest redirect to loopback", args: args("shop", "x", map[string]any{"kind": "rest", "url": api.URL + "/redirect", "credential": "api"}), isError: true,
			want: []string{"refused: the redirect to 127.0.0.1 is a loopback address"}},
		{name: "credential not sent to another host", args: args("shop", "leak", map[string]any{"kind": "rest", "url": open.URL + "/items", "credential": "api"}),
			commits: 1, want: []string{"(1 rows"}},
		{name: "credential dropped on redirect", args: args("shop", "leak2", map[string]any{"kind": "rest", "url": api.URL + "/redirect-open", "credential": "api"}),
			commits: 1, want: []string{"(1 rows"}},
		{name: "header env leak", args: args("shop", "x", map[string]any{"kind": "rest", "url": attacker.URL, "headers": map[string]any{"X-Leak": "SELMEM_PROFILE_SALES_DSN"}}), isError: true,
			want: []string{`source does not take the field(s) "headers"`}},
		{name: "model dsn", args: args("shop", "x", map[string]any{"kind": "sql", "dsn": "host=127.0.0.1 port=" + fakePG.Port() + " user=postgres dbname=postgres", "query": "SELECT 1"}), isError: true,
			want: []string{`source does not take the field(s) "dsn"`}},
		{name: "model dsn_env", args: args("shop", "x", map[string]any{"kind": "sql", "dsn_env": "SELMEM_PROFILE_SALES_DSN", "query": "SELECT 1"}), isError: true,
			want: []string{`source does not take the field(s) "dsn_env"`}, not: []string{"hunter2", "db.internal"}},
		{name: "sqlite attach read", args: args("shop", "x", sqlite("ATTACH DATABASE '"+index+"' AS x; SELECT * FROM x.sqlite_master")), isError: true,
			want: []string{"more than one statement"}},
		{name: "sqlite attach create", args: args("shop", "x", sqlite("ATTACH DATABASE '"+filepath.Join(elsewhere, "new.db")+"' AS x")), isError: true,
			want: []string{"ATTACH is not allowed"}},
		{name: "sqlite vacuum into", args: args("shop", "x", sqlite("VACUUM INTO '"+filepath.Join(elsewhere, "copy.db")+"'")), isError: true,
			want: []string{"VACUUM is not allowed"}},
		{name: "sqlite delete", args: args("shop", "x", sqlite("DELETE FROM p; SELECT 1")), isError: true,
			want: []string{"more than one statement"}},
		{name: "sqlite load_extension", args: args("shop", "x", sqlite("SELECT load_extension('"+filepath.Join(elsewhere, "x.so")+"')")), isError: true,
			want: []string{"not authorized"}},
		{name: "sqlite pragma write", args: args("shop", "x", sqlite("PRAGMA journal_mode = delete")), isError: true,
			want: []string{"PRAGMA is not allowed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.commits(t)
			text, _, isErr := e.call(t, tc.args, nil)
			if isErr != tc.isError {
				t.Errorf("isError = %v, want %v; text:\n%s", isErr, tc.isError, text)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("text lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(text, w) {
					t.Errorf("text contains %q:\n%s", w, text)
				}
			}
			if got := e.commits(t) - before; got != tc.commits {
				t.Errorf("%d commits, want %d", got, tc.commits)
			}
		})
	}

	if n := len(attacker.Requests()); n != 0 {
		t.Errorf("the attacker's listener received %d requests, want none", n)
	}
	if n := len(fakePG.Requests()); n != 0 {
		t.Errorf("the fake Postgres received %d connections, want none", n)
	}
	for _, h := range open.Requests() {
		if strings.Contains(fmt.Sprint(h), secret) {
			t.Errorf("the credential reached a host it is not bound to: %v", h)
		}
	}
	if len(open.Requests()) != 2 {
		t.Errorf("the open endpoint got %d requests, want 2", len(open.Requests()))
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("SQLite attacks created %v", entries)
	}
	sdb, err = sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	var rows int
	if err := sdb.QueryRow("SELECT count(*) FROM p").Scan(&rows); err != nil || rows != 3 {
		t.Errorf("the source table has %d rows (%v), want 3", rows, err)
	}

	md := e.show(t, "workspaces/sales/schemas/customers.md")
	if !strings.HasPrefix(md, "---\ntype: schema\nsource: trusted_tool_result\nconfidence: 1\nconnector: \"file:customers.csv\"\nrows: 300\n") {
		t.Errorf("customers.md:\n%s", md)
	}
	if rel := e.show(t, "workspaces/sales/schemas/relationships.md"); !strings.Contains(rel, "- orders.customer_id → customers.id: many-to-one") {
		t.Errorf("relationships.md:\n%s", rel)
	}
	if md := e.show(t, "workspaces/shop/schemas/items.md"); !strings.Contains(md, "connector: \"rest:http://127.0.0.1:") || strings.Contains(md, "t0ken") {
		t.Errorf("items.md:\n%s", md)
	}
	out, err := exec.Command("git", "-C", filepath.Join(e.home, "memory"), "log", "-1", "--format=%an%n%B", "HEAD", "--", "workspaces/sales/schemas/orders.md").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"tester", "Tool: profile_source", "Source: trusted_tool_result"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("commit of orders.md %q lacks %q", out, w)
		}
	}
	e.mu.Lock()
	changed := strings.Join(e.changed, " ")
	e.mu.Unlock()
	for _, w := range []string{"/memories/workspaces/sales/schemas/orders.md", "/memories/workspaces/sales/schemas/relationships.md"} {
		if !strings.Contains(changed, w) {
			t.Errorf("Changed was not told about %s: %s", w, changed)
		}
	}
}

func TestProfileSource_Structured(t *testing.T) {
	e := newProfileEnv(t, nil)
	writeFile(t, e.root, "customers.csv", customersCSV())
	orders := writeFile(t, e.root, "orders.csv", ordersCSV(500))
	if _, _, isErr := e.call(t, map[string]any{"workspace": "w", "name": "customers", "source": fileSource(filepath.Join(e.root, "customers.csv"))}, nil); isErr {
		t.Fatal("customers failed")
	}
	_, sc, isErr := e.call(t, map[string]any{"workspace": "w", "name": "orders", "source": fileSource(orders)}, nil)
	if isErr {
		t.Fatal("orders failed")
	}
	if got, want := fmt.Sprint(sc["path"], " ", sc["rows"], " ", sc["columns"]), "/memories/workspaces/w/schemas/orders.md 500 3"; got != want {
		t.Errorf("path rows columns = %s, want %s", got, want)
	}
	if c, _ := sc["commit"].(string); len(c) != 40 {
		t.Errorf("commit %v", sc["commit"])
	}
	if got, want := fmt.Sprint(sc["relationships"]), "[map[cardinality:many-to-one containment:1 from:orders.customer_id to:customers.id]]"; got != want {
		t.Errorf("relationships %s, want %s", got, want)
	}
	if got := fmt.Sprint(sc["changed"]); !strings.Contains(got, "/memories/workspaces/w/schemas/relationships.md") {
		t.Errorf("changed %s", got)
	}
	// The same data again: no commit, nothing changed.
	_, sc, _ = e.call(t, map[string]any{"workspace": "w", "name": "orders", "source": fileSource(orders)}, nil)
	if got := fmt.Sprint(sc["commit"], sc["changed"]); got != "[]" {
		t.Errorf("unchanged: commit and changed %s, want none", got)
	}
}

func TestProfileSource_Progress(t *testing.T) {
	e := newProfileEnv(t, nil)
	big := writeFile(t, e.root, "big.csv", ordersCSV(300_000)) // ~7 MB
	text, _, isErr := e.call(t, map[string]any{"workspace": "w", "name": "big", "source": fileSource(big)}, &mcp.Meta{ProgressToken: "tok-1"})
	if isErr {
		t.Fatalf("profile failed: %s", text)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		e.mu.Lock()
		n := len(e.progress)
		e.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.progress) == 0 {
		t.Fatal("no progress notification")
	}
	p := e.progress[0]
	if p["progressToken"] != "tok-1" {
		t.Errorf("progress token %v, want tok-1", p["progressToken"])
	}
	if fmt.Sprint(p["progress"]) == "0" || p["progress"] == nil {
		t.Errorf("progress %v", p["progress"])
	}
	if _, ok := p["total"]; !ok {
		t.Errorf("no total in %v", p)
	}
	// No progress without a token.
	n := len(e.progress)
	e.mu.Unlock()
	_, _, _ = e.call(t, map[string]any{"workspace": "w", "name": "big2", "source": fileSource(big)}, nil)
	time.Sleep(100 * time.Millisecond)
	e.mu.Lock()
	if len(e.progress) != n {
		t.Errorf("progress notifications without a progress token")
	}
}

// TestProfileSource_TimeBound: a profile that runs past
// Options.ProfileTimeout stops, says so, and writes nothing.
func TestProfileSource_TimeBound(t *testing.T) {
	ctx := context.Background()
	home, root := t.TempDir(), t.TempDir()
	store, err := memstore.Open(ctx, home, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close(ctx) })
	call := serve(t, tools.Tools(store, &tools.Options{DataRoots: []string{root}, ProfileTimeout: time.Nanosecond}))
	p := writeFile(t, root, "orders.csv", ordersCSV(100))
	text, _, isErr := call(tools.NameProfileSource, map[string]any{"workspace": "sales", "name": "orders", "source": fileSource(p)})
	if !isErr || !strings.Contains(text, "took longer than 1ns and was stopped; nothing was written") {
		t.Fatalf("isError %v, text %q; want the time bound's error", isErr, text)
	}
	if _, err := os.Stat(filepath.Join(home, "memory", "workspaces", "sales")); !os.IsNotExist(err) {
		t.Errorf("workspace directory: %v, want none", err)
	}
}

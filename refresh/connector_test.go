package refresh

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/selmem/selmem/internal/egress"
	"github.com/selmem/selmem/internal/egress/egresstest"
	"github.com/selmem/selmem/internal/pgtest"
	"github.com/selmem/selmem/schemas"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// bindConnector binds artifact "dash" of workspace "sales" to the
// connector yaml given.
func (f *fixture) bindConnector(t *testing.T, connector string) {
	t.Helper()
	f.put(t, map[string]string{
		ConnectorPath("sales", "src"): connector,
		BindingPath("sales", "dash"):  "connector: src\n",
	})
}

// loadConnector parses a connector and loads its data. When wantErr is
// set it checks the error holds it and returns a nil table; otherwise a
// failure ends the test. The table is released when the test ends.
func loadConnector(t *testing.T, yaml string, params map[string]string, access schemas.Access, limit int64, wantErr string) (*Table, error) {
	t.Helper()
	c, err := ParseConnector("src", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	var tab *Table
	src, _, err := c.Source(params, access, nil)
	if err == nil {
		tab, err = Load(context.Background(), src, limit)
	}
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("err = %v, want %q", err, wantErr)
		}
		return nil, err
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tab.Release)
	return tab, nil
}

func TestConnector_File(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	old := f.writeData(t, "orders-2026-w47.csv", dataV1)
	newer := f.writeData(t, "orders-2026-w48.csv", dataV2)
	past := time.Now().Add(-time.Hour)
	os.Chtimes(old, past, past)
	f.writeData(t, "other.csv", dataV3)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "x.csv"), []byte(dataV1), 0o644)
	os.Symlink(outside, filepath.Join(f.data, "link"))

	tests := []struct {
		name, path string
		wantSource string // "" expects an error
		wantErr    string
	}{
		{"glob picks the newest", filepath.Join(f.data, "orders-*.csv"), "file:" + filepath.Base(newer), ""},
		{"plain path", old, "file:orders-2026-w47.csv", ""},
		{"no match", filepath.Join(f.data, "nothing-*.csv"), "", "no file matches"},
		{"glob outside the roots", filepath.Join(outside, "*.csv"), "", "outside the data roots"},
		{"glob through a symlink out of the roots", filepath.Join(f.data, "link", "*.csv"), "", "outside the data roots"},
		{"dotdot", f.data + "/../x/*.csv", "", ".."},
		{"glob in a directory", filepath.Join(f.data, "*", "x.csv"), "", "only the file name"},
		{"relative", "orders-*.csv", "", "absolute"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Connector{Kind: KindFile, Path: tc.path}
			src, ref, err := c.Source(nil, f.r.opts.Access, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ref != tc.wantSource {
				t.Errorf("source = %s, want %s", ref, tc.wantSource)
			}
			tab, err := Load(ctx, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			tab.Release()
		})
	}
}

func TestConnector_Kinds(t *testing.T) {
	tests := []struct {
		name, yaml, wantErr string
	}{
		{"not a connector", "kind: postgres\nendpoint: postgres://x\n", "not a connector"},
		{"no kind", "description: x\n", "not a connector"},
		{"bad yaml", "kind: [\n", "not valid YAML"},
		{"sql with a dsn field is ignored, needs a connection", "kind: sql\ndsn: postgres://u:p@h/db\nquery: select 1\n", "needs connection"},
		{"mcp without server", "kind: mcp\ntool: t\n", "needs server"},
		{"mcp not available", "kind: mcp\nserver: s\ntool: t\n", "not available"},
		{"bad timeout", "kind: rest\nurl: https://example.com\ntimeout: forever\n", "timeout"},
		{"parameters on sql", "kind: sql\nconnection: c\nquery: select 1\n", "parameters apply to rest and mcp"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConnector("src", []byte(tc.yaml))
			if err == nil {
				var params map[string]string
				if strings.Contains(tc.name, "parameters") {
					params = map[string]string{"a": "b"}
				}
				_, _, err = c.Source(params, schemas.Access{}, nil)
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestConnector_REST(t *testing.T) {
	const token = "s3cr3t-token-value-1234"
	t.Setenv("SALES_TOKEN", token)
	api := egresstest.NewRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			time.Sleep(3 * time.Second)
		case "/big":
			w.Write([]byte(`{"items":[`))
			for i := 0; i < 200000; i++ {
				fmt.Fprintf(w, `{"region":"EMEA","amount":%d,"pad":"%s"},`, i, strings.Repeat("x", 100))
			}
			w.Write([]byte(`{"region":"x","amount":1}]}`))
			return
		case "/redirect":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
			return
		case "/auth":
			if r.Header.Get("Authorization") != "Bearer "+token {
				http.Error(w, "unauthorized "+r.Header.Get("Authorization"), http.StatusUnauthorized)
				return
			}
		}
		fmt.Fprintf(w, `{"data":{"items":[{"region":"EMEA","amount":%q},{"region":"AMER","amount":"2"}]}}`, r.URL.Query().Get("week"))
	})
	policy, err := egress.New(egress.Config{Key: "profile", AllowedHosts: []string{api.Addr()},
		Credentials: map[string]egress.Credential{"sales": {Env: "SALES_TOKEN", Hosts: []string{api.Addr()}, Prefix: "Bearer ", AllowHTTP: true}}})
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + api.Addr()
	tests := []struct {
		name, yaml string
		params     map[string]string
		limit      int64
		wantRows   int64
		wantErr    string
	}{
		{"records path and parameters", "kind: rest\nurl: " + base + "/x\nrecords_path: data.items\n", map[string]string{"week": "48"}, 0, 2, ""},
		{"credential", "kind: rest\nurl: " + base + "/auth\nrecords_path: data.items\ncredential: sales\n", map[string]string{"week": "1"}, 0, 2, ""},
		{"unknown credential", "kind: rest\nurl: " + base + "/auth\ncredential: nope\n", nil, 0, 0, "nope"},
		{"timeout", "kind: rest\nurl: " + base + "/slow\ntimeout: 1s\n", nil, 0, 0, "1s"},
		{"oversize", "kind: rest\nurl: " + base + "/big\nrecords_path: items\n", nil, 1 << 20, 0, "larger"},
		{"redirect to a metadata address", "kind: rest\nurl: " + base + "/redirect\n", nil, 0, 0, "169.254.169.254"},
		{"loopback not allowed", "kind: rest\nurl: http://127.0.0.1:1/x\n", nil, 0, 0, "refused"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tab, err := loadConnector(t, tc.yaml, tc.params, schemas.Access{Policy: policy}, tc.limit, tc.wantErr)
			if err != nil && strings.Contains(err.Error(), token) {
				t.Fatalf("the error holds the credential: %v", err)
			}
			if tab == nil {
				return
			}
			if tab.Rows != tc.wantRows {
				t.Errorf("rows = %d, want %d", tab.Rows, tc.wantRows)
			}
		})
	}
}

// TestRefresh_CredentialNeverStored refreshes through a REST connector
// with a bound credential and checks the token is in no committed file,
// snapshot, status or log line.
func TestRefresh_CredentialNeverStored(t *testing.T) {
	ctx := context.Background()
	const token = "tok-9f8e7d6c5b4a39281706"
	t.Setenv("SALES_TOKEN", token)
	api := egresstest.NewRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != token {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `[{"region":"EMEA","amount":1.5},{"region":"AMER","amount":2}]`)
	})
	policy, err := egress.New(egress.Config{Key: "profile", AllowedHosts: []string{api.Addr()},
		Credentials: map[string]egress.Credential{"sales": {Env: "SALES_TOKEN", Hosts: []string{api.Addr()}, Header: "X-Api-Key", AllowHTTP: true}}})
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	f := newFixture(t, &Options{Logger: newTextLogger(&logs)})
	f.r.opts.Access.Policy = policy
	f.bindConnector(t, "kind: rest\nurl: http://"+api.Addr()+"/sales\ncredential: sales\n")
	if _, err := f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash"}); err != nil {
		t.Fatal(err)
	}
	// A failing run logs its error: make one.
	t.Setenv("SALES_TOKEN", token+"x")
	f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash"})
	if strings.Contains(logs.String(), token) {
		t.Error("a log line holds the credential")
	}
	filepath.WalkDir(f.home, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if b, _ := os.ReadFile(p); strings.Contains(string(b), token) {
			t.Errorf("%s holds the credential", p)
		}
		return nil
	})
}

func TestConnector_SQL(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `CREATE TABLE orders (region text, amount numeric, units int);
		INSERT INTO orders VALUES ('EMEA', 10.5, 3), ('AMER', 20, 4), ('APAC', NULL, 1)`); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SALES_DSN", dsn)
	policy, err := egress.New(egress.Config{Key: "profile", Connections: map[string]egress.Connection{"warehouse": {Driver: egress.DriverPostgres, DSNEnv: "SALES_DSN"}}})
	if err != nil {
		t.Fatal(err)
	}
	sqlitePath := filepath.Join(t.TempDir(), "local.db")
	db, err := sql.Open("sqlite", sqlitePath)
	if err != nil {
		t.Fatal(err)
	}
	db.Exec(`CREATE TABLE t (a INTEGER, b TEXT); INSERT INTO t VALUES (1, 'x'), (2, 'y')`)
	db.Close()
	tests := []struct {
		name, yaml string
		wantCols   []Column
		wantErr    string
	}{
		{"postgres", "kind: sql\nconnection: warehouse\nquery: SELECT region, amount, units FROM orders ORDER BY region\n",
			[]Column{{"region", TypeText}, {"amount", TypeNumber}, {"units", TypeInteger}}, ""},
		{"write refused", "kind: sql\nconnection: warehouse\nquery: DELETE FROM orders\n", nil, "SELECT"},
		{"write hidden in a CTE refused", "kind: sql\nconnection: warehouse\nquery: WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d\n", nil, "read-only"},
		{"unknown connection", "kind: sql\nconnection: nope\nquery: SELECT 1\n", nil, "nope"},
		{"sqlite file", "kind: sql\npath: " + sqlitePath + "\nquery: SELECT a, b FROM t\n", []Column{{"a", TypeInteger}, {"b", TypeText}}, ""},
		{"sqlite attach refused", "kind: sql\npath: " + sqlitePath + "\nquery: SELECT * FROM t; ATTACH DATABASE '/tmp/x.db' AS x\n", nil, "one statement"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tab, _ := loadConnector(t, tc.yaml, nil, schemas.Access{Policy: policy, Roots: []string{filepath.Dir(sqlitePath)}}, 0, tc.wantErr)
			if tab == nil {
				return
			}
			if fmt.Sprint(tab.Columns) != fmt.Sprint(tc.wantCols) {
				t.Errorf("columns = %v, want %v", tab.Columns, tc.wantCols)
			}
		})
	}
	var n int
	pool.QueryRow(ctx, "SELECT count(*) FROM orders").Scan(&n)
	if n != 3 {
		t.Errorf("orders has %d rows after the refused writes, want 3", n)
	}
}

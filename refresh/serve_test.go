package refresh

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/selmem/selmem/memstore"
)

func TestHandler(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	p := f.writeData(t, "orders.csv", dataV1)
	f.bindFile(t, p)
	f.put(t, map[string]string{
		ArtifactDir("sales", "dash") + "/app.js":     "console.log(1)\n",
		ArtifactDir("sales", "bare") + "/index.html": "<html><head><title>x</title></head></html>\n",
		BindingPath("sales", "bare"):                 "connector: other\n",
		ConnectorPath("sales", "other"):              "kind: file\npath: " + f.writeData(t, "other.csv", dataV2) + "\n",
	})
	srv := httptest.NewServer(f.r.Handler("/artifacts/"))
	defer srv.Close()
	get := func(path string) (int, string, http.Header) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	if code, body, _ := get("/artifacts/sales/dash/"); code != http.StatusConflict || !strings.Contains(body, "no data yet") {
		t.Errorf("before a refresh: %d %q", code, body)
	}
	res, err := f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "bare"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		code       int
		contains   string
	}{
		{"index with data injected", "/artifacts/sales/dash/", 200, `<script type="application/json" id="selmem-data">{"columns":[{"name":"region"`},
		{"data.json", "/artifacts/sales/dash/data.json", 200, `"rows":3}`},
		{"program file", "/artifacts/sales/dash/app.js", 200, "console.log"},
		{"no injection point: injected after head", "/artifacts/sales/bare/", 200, `<head><script type="application/json" id="selmem-data">`},
		{"binding not served", "/artifacts/sales/dash/binding.yaml", 404, ""},
		{"traversal", "/artifacts/sales/dash/../../tools/orders.yaml", 404, ""},
		{"encoded traversal", "/artifacts/sales/dash/..%2f..%2ftools%2forders.yaml", 404, ""},
		{"bad workspace", "/artifacts/..%2f/dash/", 404, ""},
		{"unknown artifact", "/artifacts/sales/nope/", 404, ""},
		{"redirect to the directory", "/artifacts/sales/dash", 200, "selmem-data"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body, h := get(tc.path)
			if code != tc.code || !strings.Contains(body, tc.contains) {
				t.Fatalf("%s: %d %.200q", tc.path, code, body)
			}
			if got := h.Get("Content-Security-Policy"); got != ContentSecurityPolicy {
				t.Errorf("CSP = %q", got)
			}
			if h.Get("X-Content-Type-Options") != "nosniff" {
				t.Error("no nosniff")
			}
		})
	}
	// Serving the snapshot a reverted binding names, and saying so once it
	// is gone.
	sha := res.Binding.Snapshot.SHA256
	for i := range 4 { // the fixture keeps 3
		f.writeData(t, "orders.csv", dataV1+"EMEA,1,"+strings.Repeat("9", i+1)+",2026-11-05\n")
		if _, err := f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash"}); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := f.r.ReadBinding(t.Context(), "sales", "dash")
	b.Snapshot.SHA256 = sha
	f.put(t, map[string]string{BindingPath("sales", "dash"): b.Marshal()})
	if code, body, _ := get("/artifacts/sales/dash/"); code != http.StatusGone || !strings.Contains(body, "no longer retained") {
		t.Errorf("pruned snapshot: %d %q", code, body)
	}
}

func TestInject(t *testing.T) {
	tests := []struct{ name, html, want string }{
		{"empty element", `<p><script type="application/json" id="selmem-data"></script></p>`, `<p><script type="application/json" id="selmem-data">{}</script></p>`},
		{"attributes reordered, stale content", `<script id='selmem-data' type="application/json">{"old":1}</script >x`, `<script type="application/json" id="selmem-data">{}</script>x`},
		{"no element, no head", `<p>x</p>`, `<script type="application/json" id="selmem-data">{}</script><p>x</p>`},
	}
	for _, tc := range tests {
		if got := string(Inject([]byte(tc.html), []byte("{}"))); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestQuery(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	p := f.writeData(t, "orders.csv", dataV1)
	f.bindFile(t, p)
	if _, err := f.r.Query(ctx, "sales", "dash", "SELECT 1", QueryLimits{}); err == nil || !strings.Contains(err.Error(), "no data yet") {
		t.Fatalf("query before a refresh: %v", err)
	}
	if _, err := f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, sql string
		lim       QueryLimits
		wantRows  int
		wantTrunc bool
		wantFirst string
		wantErr   string
	}{
		{"aggregate", "SELECT round(sum(amount), 2) AS total, sum(units) FROM data", QueryLimits{}, 1, false, "[35.75 8]", ""},
		{"group by", "SELECT region, amount FROM data ORDER BY amount DESC", QueryLimits{}, 3, false, "[AMER 20]", ""},
		{"row limit", "SELECT * FROM data", QueryLimits{MaxRows: 2}, 2, true, "", ""},
		{"cell limit", "SELECT * FROM data", QueryLimits{MaxCells: 4}, 1, true, "", ""},
		{"write refused", "DELETE FROM data", QueryLimits{}, 0, false, "", "SELECT"},
		{"two statements refused", "SELECT 1; DROP TABLE data", QueryLimits{}, 0, false, "", "one statement"},
		{"attach refused", "ATTACH DATABASE '/etc/passwd' AS p", QueryLimits{}, 0, false, "", "SELECT"},
		{"pragma write refused", "SELECT * FROM pragma_writable_schema", QueryLimits{}, 0, false, "", "failed"},
		{"unknown column", "SELECT nope FROM data", QueryLimits{}, 0, false, "", "nope"},
		{"time limit", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c", QueryLimits{Timeout: 200 * time.Millisecond}, 0, false, "", "longer than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := f.r.Query(ctx, "sales", "dash", tc.sql, tc.lim)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), f.home) {
					t.Errorf("the error names a host path: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Rows) != tc.wantRows || res.Truncated != tc.wantTrunc {
				t.Fatalf("rows = %d truncated = %v, want %d %v", len(res.Rows), res.Truncated, tc.wantRows, tc.wantTrunc)
			}
			if tc.wantFirst != "" {
				if got := strings.TrimSpace(fmtRow(res.Rows[0])); got != tc.wantFirst {
					t.Errorf("first row = %s, want %s", got, tc.wantFirst)
				}
			}
		})
	}
}

func fmtRow(r []any) string { return fmt.Sprint(r) }

// TestRefresh_ConcurrentSerialise runs two refreshes of one artifact at
// once with different data: both commit, one after the other, and the
// binding names the data of the one that finished last.
func TestRefresh_ConcurrentSerialise(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	a := f.writeData(t, "a.csv", dataV1)
	b := f.writeData(t, "b.csv", strings.Replace(dataV1, "10.5", "99", 1))
	f.put(t, map[string]string{
		ConnectorPath("sales", "a"):  "kind: file\npath: " + a + "\n",
		ConnectorPath("sales", "b"):  "kind: file\npath: " + b + "\n",
		BindingPath("sales", "dash"): "connector: a\n",
	})
	type out struct {
		res Result
		err error
		at  time.Time
	}
	results := make([]out, 2)
	var wg sync.WaitGroup
	for i, src := range []string{"a", "b"} {
		wg.Go(func() {
			res, err := f.r.Refresh(ctx, Request{Workspace: "sales", Artifact: "dash", Source: src})
			results[i] = out{res, err, time.Now()}
		})
	}
	wg.Wait()
	for _, r := range results {
		if r.err != nil || r.res.Commit == "" {
			t.Fatalf("refresh: %v (commit %q)", r.err, r.res.Commit)
		}
	}
	last := results[0]
	if results[1].at.After(last.at) {
		last = results[1]
	}
	got, _ := f.r.ReadBinding(t.Context(), "sales", "dash")
	if got.Snapshot.SHA256 != last.res.Binding.Snapshot.SHA256 {
		t.Errorf("binding names %s, the last acknowledged refresh stored %s", got.Snapshot.SHA256[:12], last.res.Binding.Snapshot.SHA256[:12])
	}
	hist, err := f.store.History(ctx, BindingPath("sales", "dash"), &memstore.HistoryOptions{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range hist {
		seen[c.Hash] = true
	}
	for _, r := range results {
		if !seen[r.res.Commit] {
			t.Errorf("commit %s is not in the binding's history", r.res.Commit)
		}
	}
}

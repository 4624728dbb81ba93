package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/selmem/selmem/internal/browsertest"
	"github.com/selmem/selmem/internal/egress/egresstest"
)

// EnvScreenshot names a file the browser test writes its screenshot of the
// view in the host to (for the README), when set.
const EnvScreenshot = "SELMEM_APPS_SCREENSHOT"

// appsHost serves the test host page and the ext-apps host bridge with its
// modules from the pinned node_modules.
func appsHost(t testing.TB) *httptest.Server {
	t.Helper()
	dir := nodeTools(t)
	mods := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(mods, "@modelcontextprotocol", "ext-apps", "dist", "src", "app-bridge.js")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("@modelcontextprotocol/ext-apps is not installed: %v", err)
		}
		t.Skip("@modelcontextprotocol/ext-apps is not installed; run scripts/install-conformance.sh (needs npm)")
	}
	page, err := os.ReadFile(filepath.Join("testdata", "appshost", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/node_modules/", http.StripPrefix("/node_modules/", http.FileServer(http.Dir(mods))))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// readView reads a view resource as the host page takes it.
func readView(t testing.TB, cs *mcp.ClientSession, uri string) string {
	t.Helper()
	rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil || len(rr.Contents) != 1 {
		t.Fatalf("read %s: %v", uri, err)
	}
	c := rr.Contents[0]
	return toJSON(map[string]any{"text": c.Text, "_meta": c.Meta})
}

// TestBrowser_AppsView is an artifact in the conversation, in headless
// Chromium: a page playing an MCP Apps host (the official host bridge)
// renders the view refresh_artifact names in a sandboxed frame and hands
// it the tool's result; the dashboard shows the snapshot's totals; after
// a refresh with new data the numbers change; the artifact's own view
// shows the same; and a program that tries to reach the network is
// stopped by the policy built from the view's (empty) declared domains.
func TestBrowser_AppsView(t *testing.T) {
	browsertest.Require(t)
	host := appsHost(t)
	v1 := salesV1()
	v2 := salesV2(v1)
	a := newAppsHome(t, v1)
	other := egresstest.NewRecorder(t, nil)
	probe := fmt.Sprintf(`(function () {
  var el = document.documentElement;
  el.setAttribute("data-net", "pending");
  try {
    fetch(%q).then(function () { el.setAttribute("data-net", "reached"); }, function (e) { el.setAttribute("data-net", "blocked: " + e.name); });
  } catch (e) {
    el.setAttribute("data-net", "blocked: " + e.name);
  }
})();
`, other.URL+"/steal")
	a.cli(probe, "create", "/memories/workspaces/demo/artifacts/dash/probe.js")
	a.cli("", "replace", "/memories/workspaces/demo/artifacts/dash/index.html", `<script src="app.js"></script>`, `<script src="app.js"></script>
<script src="probe.js"></script>`)
	h := startHTTP(t, a.home, a.envs...)
	cs := connectApps(t, h.url, eras[0], true)

	var viewer string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name == "refresh_artifact" {
			viewer, _ = tool.Meta["ui"].(map[string]any)["resourceUri"].(string)
		}
	}
	if viewer != appsViewer {
		t.Fatalf("refresh_artifact names view %q", viewer)
	}

	page := browsertest.NewFramesInProcess(t).NewPage(t)
	page.SetViewport(800, 760)
	page.Navigate(host.URL + "/")
	page.WaitFor(`document.body.getAttribute("data-host") === "ready"`)
	mount := func(uri string) {
		t.Helper()
		if !browsertest.Eval[bool](page, "host.mount("+readView(t, cs, uri)+")") {
			t.Fatalf("mount %s", uri)
		}
	}
	args := map[string]any{"workspace": "demo", "artifact": "dash"}
	refresh := func(version string) {
		t.Helper()
		res, err := callRaw(t, cs, "refresh_artifact", args)
		if err != nil || res.IsError {
			t.Fatalf("refresh_artifact (%s): %v %v", version, err, res)
		}
		var sc struct {
			Outcome string `json:"outcome"`
			Rows    int    `json:"rows"`
		}
		raw, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(raw, &sc)
		caption := fmt.Sprintf("Called <code>refresh_artifact</code>: %s, %d rows, no model call.", sc.Outcome, sc.Rows)
		if !browsertest.Eval[bool](page, fmt.Sprintf("host.deliver(%s, %s, %s)", toJSON(args), toJSON(res), toJSON(caption))) {
			t.Fatalf("deliver (%s)", version)
		}
	}
	check := func(version string, rows []saleRow, snapshot string) {
		t.Helper()
		wantRows, wantTotal, wantInsight := expectDashboard(rows)
		page.WaitInFrame("view", `document.body.getAttribute("data-selmem-snapshot") === `+toJSON(snapshot))
		page.WaitInFrame("selmem-view", `document.body && document.body.getAttribute("data-state") === "ready"`)
		got, err := browsertest.EvalInFrame[map[string]string](page, "selmem-view",
			`({rows: document.getElementById("rows").textContent.trim(), total: document.getElementById("total").textContent.trim(), insight: document.getElementById("insight").textContent.trim()})`)
		if err != nil {
			t.Fatalf("%s: read the view: %v", version, err)
		}
		if got["rows"] != wantRows || got["total"] != wantTotal || got["insight"] != wantInsight {
			t.Errorf("%s: the view shows rows %q total %q insight %q; want %q %q %q", version, got["rows"], got["total"], got["insight"], wantRows, wantTotal, wantInsight)
		}
	}
	snapshotOf := func() string {
		t.Helper()
		res, err := callRaw(t, cs, "show_artifact", args)
		if err != nil || res.IsError {
			t.Fatalf("show_artifact: %v %v", err, res)
		}
		_, s := resultView(t, res)
		return s.Snapshot
	}

	// As a host does: the view the tool names, then the tool's result.
	mount(viewer)
	refresh("version 1")
	snap1 := snapshotOf()
	check("version 1", v1, snap1)

	a.write("sales-w2.csv", salesCSV(v2, true), 2*time.Hour)
	refresh("version 2")
	snap2 := snapshotOf()
	if snap2 == snap1 {
		t.Fatal("the second refresh did not change the snapshot")
	}
	check("version 2", v2, snap2)
	if _, total1, _ := expectDashboard(v1); total1 == func() string { _, t2, _ := expectDashboard(v2); return t2 }() {
		t.Fatal("the two versions have the same total; the test data does not tell them apart")
	}
	if hs := browsertest.Eval[[]float64](page, "host.state.heights"); len(hs) == 0 || hs[len(hs)-1] < 300 {
		t.Errorf("the view told the host its height: %v; want the whole dashboard's", hs)
	}
	if p := os.Getenv(EnvScreenshot); p != "" {
		if err := os.WriteFile(p, page.Screenshot(), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The view opened no connection: the program's attempt was refused
	// by the policy the host built from the view's empty domains.
	page.WaitInFrame("selmem-view", `document.documentElement.getAttribute("data-net") !== "pending"`)
	if net, err := browsertest.EvalInFrame[string](page, "selmem-view", `document.documentElement.getAttribute("data-net")`); err != nil || !strings.HasPrefix(net, "blocked") {
		t.Errorf("the view's fetch to another origin: %q, %v", net, err)
	}
	if n := len(other.Requests()); n != 0 {
		t.Errorf("the other origin received %d requests", n)
	}
	if policy := browsertest.Eval[string](page, "host.state.policy"); !strings.Contains(policy, "connect-src 'none'") {
		t.Errorf("the host's policy for the view: %s", policy)
	}

	// The artifact's own view renders the current data by itself.
	mount(appsDashView)
	check("the artifact's own view", v2, snap2)

	// A page that does not render new data in place is loaded again with
	// the new data.
	a.cli("", "artifact", "init", "demo", "plain", "--source", "weekly", "--title", "Weekly sales")
	a.cli("", "replace", "/memories/workspaces/demo/artifacts/plain/app.js", "e.preventDefault();\n    show(e.detail);", "return;")
	args = map[string]any{"workspace": "demo", "artifact": "plain"}
	mount(viewer)
	refresh("plain, version 2")
	check("plain, version 2", v2, snapshotOf())
	if _, err := browsertest.EvalInFrame[bool](page, "selmem-view", `document.documentElement.setAttribute("data-old", "yes"), true`); err != nil {
		t.Fatal(err)
	}
	v3 := salesV2(v2)
	a.write("sales-w3.csv", salesCSV(v3, true), time.Hour)
	refresh("plain, version 3")
	check("plain, version 3", v3, snapshotOf())
	if old, err := browsertest.EvalInFrame[bool](page, "selmem-view", `document.documentElement.hasAttribute("data-old")`); err != nil || old {
		t.Errorf("the page that does not render in place was not loaded again (%v)", err)
	}
}

package server_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP Apps identifiers, as the extension specifies them.
const (
	appsExtension = "io.modelcontextprotocol/ui"
	appsMIME      = "text/html;profile=mcp-app"
	appsViewer    = "ui://selmem/artifact"
	appsDashView  = "ui://selmem/workspaces/demo/artifacts/dash"
)

// appsHome is a memory with the scaffolded dashboard demo/dash bound to
// the file connector weekly (root/sales-*.csv), refreshed once with rows.
type appsHome struct {
	home, root string
	envs       []string
}

func newAppsHome(tb testing.TB, rows []saleRow, extraEnv ...string) *appsHome {
	tb.Helper()
	return newAppsHomeCSV(tb, salesCSV(rows, false), extraEnv...)
}

// newAppsHomeCSV is newAppsHome with the data given as CSV.
func newAppsHomeCSV(tb testing.TB, csv string, extraEnv ...string) *appsHome {
	tb.Helper()
	a := &appsHome{home: tb.TempDir(), root: tb.TempDir()}
	a.envs = append([]string{"SELMEM_PROFILE_DATA_ROOTS=" + a.root, "SELMEM_REFRESH_WATCH=false"}, extraEnv...)
	a.write("sales-w1.csv", csv, 3*time.Hour)
	a.cli("kind: file\npath: "+a.root+"/sales-*.csv\n", "create", "/memories/workspaces/demo/tools/weekly.yaml")
	a.cli("", "artifact", "init", "demo", "dash", "--source", "weekly", "--title", "Weekly sales")
	return a
}

// write writes a data file aged age, so that the newest file is the last
// one written.
func (a *appsHome) write(name, content string, age time.Duration) {
	p := filepath.Join(a.root, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		panic(err)
	}
	at := time.Now().Add(-age)
	os.Chtimes(p, at, at)
}

func (a *appsHome) cli(stdin string, args ...string) string {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(env(a.home), a.envs...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		panic("selmem " + strings.Join(args, " ") + ": " + err.Error() + "\n" + string(out))
	}
	return string(out)
}

// connectApps connects over HTTP in protocol version, declaring the MCP
// Apps extension when ui is true.
func connectApps(t testing.TB, url, version string, ui bool) *mcp.ClientSession {
	t.Helper()
	caps := &mcp.ClientCapabilities{}
	if ui {
		caps.AddExtension(appsExtension, map[string]any{"mimeTypes": []any{appsMIME}})
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "selmem-apps-e2e", Version: "v0"}, &mcp.ClientOptions{Capabilities: caps})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect http: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// callRaw runs a tool and returns its whole result.
func callRaw(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

// shown is the part of a result's _meta a view renders.
type shown struct {
	URI        string `json:"uri"`
	Snapshot   string `json:"snapshot"`
	Rows       int64  `json:"rows"`
	Program    string `json:"program"`
	ProgramKey string `json:"program_key"`
	Data       string `json:"data"`
	Numbers    string `json:"numbers"`
	Aggregate  bool   `json:"aggregate"`
	Note       string `json:"note"`
	TooLarge   bool   `json:"too_large"`
	URL        string `json:"url"`
}

func resultView(t *testing.T, res *mcp.CallToolResult) (uri string, s shown) {
	t.Helper()
	raw, _ := json.Marshal(res.Meta)
	var m struct {
		UI struct {
			ResourceURI string `json:"resourceUri"`
		} `json:"ui"`
		View shown `json:"selmem/view"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("result _meta: %v: %s", err, raw)
	}
	return m.UI.ResourceURI, m.View
}

func toolsOf(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	out := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out[tool.Name] = tool
	}
	return out
}

// TestApps_Negotiation checks, in each protocol era, that a client that
// declares MCP Apps gets the views (show_artifact, _meta.ui on the
// artifact tools, view resources, results naming the artifact's view and
// carrying its data) and that a client that does not gets exactly the
// behaviour without them: no show_artifact, and no ui:// anywhere.
func TestApps_Negotiation(t *testing.T) {
	rows := salesV1()
	a := newAppsHome(t, rows)
	h := startHTTP(t, a.home, a.envs...)
	ctx := context.Background()
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			t.Run("with", func(t *testing.T) {
				cs := connectApps(t, h.url, era, true)
				if ir := cs.InitializeResult(); ir != nil && ir.Capabilities != nil {
					if _, ok := ir.Capabilities.Extensions[appsExtension]; !ok {
						t.Errorf("server capabilities %v do not declare %s", ir.Capabilities.Extensions, appsExtension)
					}
				}
				tools := toolsOf(t, cs)
				for _, name := range []string{"refresh_artifact", "show_artifact"} {
					tool, ok := tools[name]
					if !ok {
						t.Fatalf("%s is not listed", name)
					}
					if got := toJSON(tool.Meta["ui"]); got != `{"resourceUri":"`+appsViewer+`"}` {
						t.Errorf("%s _meta.ui = %s", name, got)
					}
				}
				if m := tools["query_artifact_data"].Meta; m["ui"] != nil {
					t.Errorf("query_artifact_data names a view: %v", m)
				}

				res, err := callRaw(t, cs, "refresh_artifact", map[string]any{"workspace": "demo", "artifact": "dash"})
				if err != nil || res.IsError {
					t.Fatalf("refresh_artifact: %v %v", err, res)
				}
				uri, s := resultView(t, res)
				if uri != appsDashView || s.URI != appsDashView || s.Rows != int64(len(rows)) || s.TooLarge || len(s.Data) == 0 {
					t.Errorf("refresh_artifact _meta: view %q, %+v", uri, s)
				}
				// The data goes once, by column, in the _meta only.
				var data struct {
					Columns []struct{ Name, Type string } `json:"columns"`
					Rows    int                           `json:"rows"`
					Values  []json.RawMessage             `json:"values"`
				}
				if err := json.Unmarshal([]byte(s.Data), &data); err != nil || data.Rows != len(rows) || len(data.Values) != len(data.Columns) || len(data.Columns) != 4 {
					t.Errorf("result data: %v, rows %d, %d columns, %d value lists", err, data.Rows, len(data.Columns), len(data.Values))
				}
				if strings.Contains(toJSON(res.Content)+toJSON(res.StructuredContent), `"values"`) {
					t.Error("the data is also in the content or the structured content")
				}
				if !strings.Contains(s.Program, `<script type="application/json" id="selmem-data"></script>`) || strings.Contains(s.Program, `src="app.js"`) {
					t.Errorf("the program is not self-contained with an empty injection point:\n%.600s", s.Program)
				}
				show, err := callRaw(t, cs, "show_artifact", map[string]any{"workspace": "demo", "artifact": "dash"})
				if err != nil || show.IsError {
					t.Fatalf("show_artifact: %v %v", err, show)
				}
				if _, s2 := resultView(t, show); s2.Snapshot != s.Snapshot || s2.Data != s.Data {
					t.Errorf("show_artifact shows snapshot %s, refresh_artifact %s", s2.Snapshot, s.Snapshot)
				}

				rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: appsDashView})
				if err != nil || len(rr.Contents) != 1 {
					t.Fatalf("read %s: %v", appsDashView, err)
				}
				c := rr.Contents[0]
				if c.MIMEType != appsMIME || !strings.HasPrefix(c.Text, "<!doctype html>") {
					t.Errorf("view: mime %q, text %.80q", c.MIMEType, c.Text)
				}
				if got := toJSON(c.Meta["ui"]); got != `{"csp":{"connectDomains":[],"resourceDomains":[]},"prefersBorder":true}` {
					t.Errorf("view _meta.ui = %s", got)
				}
				// The view holds the data and nothing of the connector.
				for _, secret := range []string{a.root, "weekly.yaml", "sales-w1.csv", "binding"} {
					if strings.Contains(c.Text, secret) || strings.Contains(toJSON(res.Meta), secret) {
						t.Errorf("the view or the result holds %q", secret)
					}
				}
				if v, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: appsViewer}); err != nil || v.Contents[0].MIMEType != appsMIME {
					t.Errorf("read %s: %v", appsViewer, err)
				}
				lr, _ := cs.ListResources(ctx, nil)
				lt, _ := cs.ListResourceTemplates(ctx, nil)
				if !strings.Contains(toJSON(lr), appsViewer) || !strings.Contains(toJSON(lt), "ui://selmem/workspaces/{workspace}/artifacts/{artifact}") {
					t.Errorf("views not listed: %s %s", toJSON(lr), toJSON(lt))
				}
			})
			t.Run("without", func(t *testing.T) {
				cs := connectApps(t, h.url, era, false)
				tools := toolsOf(t, cs)
				if _, ok := tools["show_artifact"]; ok {
					t.Error("show_artifact is listed")
				}
				if _, ok := tools["refresh_artifact"]; !ok {
					t.Error("refresh_artifact is not listed")
				}
				if got := toJSON(tools); strings.Contains(got, "ui://") {
					t.Errorf("the tool list holds a ui:// link")
				}
				res, err := callRaw(t, cs, "refresh_artifact", map[string]any{"workspace": "demo", "artifact": "dash"})
				if err != nil || res.IsError {
					t.Fatalf("refresh_artifact: %v %v", err, res)
				}
				if got := toJSON(res); strings.Contains(got, "ui://") || strings.Contains(got, "selmem/view") {
					t.Errorf("the result holds a view: %.300s", got)
				}
				if res, err := callRaw(t, cs, "show_artifact", map[string]any{"workspace": "demo", "artifact": "dash"}); err == nil && !res.IsError {
					t.Error("show_artifact answered a client without the extension")
				}
				lr, _ := cs.ListResources(ctx, nil)
				lt, _ := cs.ListResourceTemplates(ctx, nil)
				if strings.Contains(toJSON(lr)+toJSON(lt), "ui://") {
					t.Errorf("resources list ui:// links: %s %s", toJSON(lr), toJSON(lt))
				}
				for _, uri := range []string{appsViewer, appsDashView} {
					if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
						t.Errorf("read %s succeeded", uri)
					}
				}
			})
		})
	}
}

// TestApps_TooLarge: beyond refresh.max_view_bytes the view carries no
// data, says so, and links to the artifact served over HTTP.
func TestApps_TooLarge(t *testing.T) {
	a := newAppsHome(t, salesV1(), "SELMEM_REFRESH_MAX_VIEW_BYTES=4096")
	h := startHTTP(t, a.home, a.envs...)
	cs := connectApps(t, h.url, eras[0], true)
	res, err := callRaw(t, cs, "refresh_artifact", map[string]any{"workspace": "demo", "artifact": "dash"})
	if err != nil || res.IsError {
		t.Fatalf("refresh_artifact: %v %v", err, res)
	}
	_, s := resultView(t, res)
	if !s.TooLarge || s.Aggregate || len(s.Data) != 0 || !strings.Contains(s.Program, "larger than this view") {
		t.Errorf("too-large view: %+v", s)
	}
	if want := h.base + "/artifacts/demo/dash/"; s.URL != want || !strings.Contains(s.Program, `href="`+want+`"`) {
		t.Errorf("link %q, want %q; program %.400s", s.URL, want, s.Program)
	}
	rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: appsDashView})
	if err != nil || strings.Contains(rr.Contents[0].Text, "LATAM") || len(rr.Contents[0].Text) > 4096*4 {
		t.Errorf("read: %v, %d bytes (the view holds the data)", err, len(rr.Contents[0].Text))
	}
}

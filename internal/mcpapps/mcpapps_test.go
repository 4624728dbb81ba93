package mcpapps

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/selmem/selmem/refresh"
)

func TestParseViewURI(t *testing.T) {
	tests := []struct {
		uri, ws, artifact string
		ok                bool
	}{
		{ViewURI("sales", "dash"), "sales", "dash", true},
		{"ui://selmem/workspaces/sales/artifacts/dash/x", "", "", false},
		{"ui://selmem/workspaces//artifacts/dash", "", "", false},
		{"ui://selmem/workspaces/sales/tools/dash", "", "", false},
		{ViewerURI, "", "", false},
		{"memory://workspaces/sales/artifacts", "", "", false},
	}
	for _, tt := range tests {
		ws, a, ok := ParseViewURI(tt.uri)
		if ws != tt.ws || a != tt.artifact || ok != tt.ok {
			t.Errorf("ParseViewURI(%q) = %q, %q, %v; want %q, %q, %v", tt.uri, ws, a, ok, tt.ws, tt.artifact, tt.ok)
		}
	}
}

func TestSupports(t *testing.T) {
	tests := []struct {
		name string
		caps *mcp.ClientCapabilities
		want bool
	}{
		{"nil", nil, false},
		{"no extensions", &mcp.ClientCapabilities{}, false},
		{"declared", &mcp.ClientCapabilities{Extensions: map[string]any{ExtensionID: map[string]any{"mimeTypes": []any{"text/plain", MIMEType}}}}, true},
		{"no HTML views", &mcp.ClientCapabilities{Extensions: map[string]any{ExtensionID: map[string]any{"mimeTypes": []any{"text/plain"}}}}, false},
		{"no settings", &mcp.ClientCapabilities{Extensions: map[string]any{ExtensionID: map[string]any{}}}, false},
		{"another extension", &mcp.ClientCapabilities{Extensions: map[string]any{"io.modelcontextprotocol/tasks": map[string]any{"mimeTypes": []any{MIMEType}}}}, false},
	}
	for _, tt := range tests {
		if got := Supports(tt.caps); got != tt.want {
			t.Errorf("%s: Supports = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestStrip(t *testing.T) {
	tool := mcp.NewTool("x")
	tool.Meta = mcp.NewMetaFromMap(map[string]any{"ui": ToolMeta()["ui"], "other": 1})
	got := Strip(tool)
	if got.Meta.AdditionalFields["ui"] != nil || got.Meta.AdditionalFields["other"] != 1 {
		t.Errorf("Strip kept %v", got.Meta.AdditionalFields)
	}
	if tool.Meta.AdditionalFields["ui"] == nil {
		t.Error("Strip changed the registered tool")
	}
	only := mcp.NewTool("y")
	only.Meta = mcp.NewMetaFromMap(ToolMeta())
	if Strip(only).Meta != nil {
		t.Error("Strip left an empty _meta")
	}
}

func TestArtifact(t *testing.T) {
	snap := &refresh.SnapshotRef{SHA256: strings.Repeat("a", 64), Rows: 2}
	program := []byte(`<html><body><h1>"Sales" & more</h1>` + refresh.InjectionPoint + `</body></html>`)
	data := []byte(`{"columns":[{"name":"region","type":"text"},{"name":"amount","type":"number"}],"records":[{"region":"EMEA","amount":1.5},{"region":"EMEA","amount":2}],"rows":2}`)
	v := &refresh.View{Workspace: "sales", Artifact: "dash", Program: program, ProgramKey: "k1", Data: data, Snapshot: snap, Bytes: 100, MaxBytes: 1000}

	shown, err := Result(v)
	if err != nil {
		t.Fatal(err)
	}
	wantData := `{"columns":[{"name":"region","type":"text"},{"name":"amount","type":"number"}],"rows":2,"values":[{"dict":["EMEA"]},null]}`
	wantNumbers := `[[0,0],[1.5,2]]`
	if shown.URI != ViewURI("sales", "dash") || shown.Data != wantData || shown.Numbers != wantNumbers || shown.Rows != 2 || shown.TooLarge || shown.ProgramKey != "k1" || shown.Note != "" {
		t.Errorf("shown: %+v\ndata %s\nnumbers %s", shown, shown.Data, shown.Numbers)
	}
	if i, j := strings.Index(shown.Program, "selmemView"), strings.LastIndex(shown.Program, "</body>"); i < 0 || i > j {
		t.Error("the program does not talk to the view before </body>")
	}
	doc, err := Artifact(v)
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	for _, want := range []string{
		`data-selmem-snapshot="` + snap.SHA256 + `"`,
		`<p id="selmem-note" hidden></p>`,
		`sandbox="allow-scripts" srcdoc="&lt;html&gt;&lt;body&gt;&lt;h1&gt;&#34;Sales&#34; &amp; more`,
		`id=&#34;selmem-data&#34;&gt;{&#34;columns&#34;`,
		`protocolVersion: "` + ProtocolVersion + `"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the view lacks %s", want)
		}
	}

	large := &refresh.View{Workspace: "sales", Artifact: "dash", Program: program, Snapshot: snap, TooLarge: true,
		Bytes: 3 << 20, MaxBytes: 2 << 20, URL: "http://localhost:8080/artifacts/sales/dash/"}
	shown, err = Result(large)
	if err != nil || !shown.TooLarge || shown.Data != "" || !strings.Contains(shown.Program, "larger than this view&#39;s limit of 2.0 MiB") ||
		!strings.Contains(shown.Program, `data-selmem-open href="http://localhost:8080/artifacts/sales/dash/"`) {
		t.Errorf("too large: %+v, %v", shown, err)
	}
	if doc, _ := Artifact(large); strings.Contains(string(doc), "Sales") {
		t.Error("the too-large view holds the program")
	}

	agg := *v
	agg.Aggregate = &refresh.AggregateInfo{Aggregate: refresh.Aggregate{GroupBy: []string{"region"}, Measures: []refresh.Measure{{Col: "amount", Fn: "sum"}}, Limit: 1}, OfRows: 10000, Groups: 4}
	agg.Bytes = 3 << 20
	shown, err = Result(&agg)
	if want := "Showing an aggregate of the 10000 rows (sum of amount by region; the first 1 of 4 groups)"; err != nil || !shown.Aggregate || !strings.HasPrefix(shown.Note, want) {
		t.Errorf("aggregate: %+v, %v; want the note %q", shown, err, want)
	}
	if doc, _ := Artifact(&agg); !strings.Contains(string(doc), `<p id="selmem-note">Showing an aggregate`) {
		t.Error("the aggregate's view does not say it shows an aggregate")
	}

	shown, _ = Result(&refresh.View{Workspace: "sales", Artifact: "dash", Program: program})
	if !strings.Contains(shown.Program, "no data yet") {
		t.Errorf("no data: %s", shown.Program)
	}
}

func TestDocuments_Cache(t *testing.T) {
	snap := &refresh.SnapshotRef{SHA256: strings.Repeat("b", 64), Rows: 0}
	v := &refresh.View{Workspace: "sales", Artifact: "dash", Program: []byte("<html><body>" + refresh.InjectionPoint + "</body></html>"), ProgramKey: "k1",
		Data: []byte(`{"columns":[],"records":[],"rows":0}`), Snapshot: snap, MaxBytes: 1000}
	var d Documents
	first, _ := d.Artifact(v)
	if again, _ := d.Artifact(v); &again[0] != &first[0] {
		t.Error("the same view was rendered again")
	}
	v2 := *v
	v2.ProgramKey = "k2"
	if other, _ := d.Artifact(&v2); &other[0] == &first[0] {
		t.Error("a changed program was served from the cache")
	}
}

// TestWithFrameScript: the frame's page gets columnar.js before its
// injection point, where the view's expanding script runs when it loads
// the page with data, and frame.js at the end of its body; a page without
// an injection point gets both at the end.
func TestWithFrameScript(t *testing.T) {
	columnar := "<script>\n" + columnarJS + "</script>\n"
	frame := "<script>\n" + frameJS + "</script>\n"
	tests := []struct {
		name, page, want string
	}{
		{"injection point", "<html><body><h1>x</h1>" + refresh.InjectionPoint + "<script src=app.js></script></body></html>",
			"<html><body><h1>x</h1>" + columnar + refresh.InjectionPoint + "<script src=app.js></script>" + frame + "</body></html>"},
		{"no injection point", "<html><body><p>notice</p></BODY></html>",
			"<html><body><p>notice</p>" + columnar + frame + "</BODY></html>"},
		{"no body end", "<p>bare",
			"<p>bare" + columnar + frame},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(withFrameScript([]byte(tt.page))); got != tt.want {
				t.Errorf("withFrameScript:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestBridge_ExpandScript: the script the view places after the injection
// point travels in the bridge as a string that cannot end the bridge's
// own script element.
func TestBridge_ExpandScript(t *testing.T) {
	i := strings.Index(bridge, "var EXPAND = ")
	if i < 0 {
		t.Fatal("the bridge does not define EXPAND")
	}
	line := bridge[i:]
	line = line[:strings.IndexByte(line, '\n')]
	if strings.Contains(line, "<") {
		t.Errorf("EXPAND holds a raw <: %.80s", line)
	}
	if !strings.Contains(line, "selmemExpand") || !strings.Contains(line, "selmem-columns") {
		t.Errorf("EXPAND is not the expanding script: %.120s", line)
	}
}

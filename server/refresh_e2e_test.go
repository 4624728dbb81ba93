package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// artifactFiles are the memory files of a minimal bound artifact: a file
// connector over root/sales-*.csv and a page with an injection point.
func artifactFiles(root string) map[string]string {
	return map[string]string{
		"/memories/workspaces/demo/tools/weekly.yaml":              "kind: file\npath: " + root + "/sales-*.csv\n",
		"/memories/workspaces/demo/artifacts/dash/binding.yaml":    "connector: weekly\n",
		"/memories/workspaces/demo/artifacts/dash/index.html":      "<!doctype html><html><head><title>Sales</title></head><body><script type=\"application/json\" id=\"selmem-data\"></script></body></html>\n",
		"/memories/workspaces/demo/artifacts/dash/notes-about.css": "body { font-family: sans-serif; }\n",
	}
}

// TestServe_RefreshArtifact drives an artifact's life over HTTP with the
// official SDK client: bind, refresh, serve with data, query, a refused
// refresh, the regenerate prompt, and the artifacts resource.
func TestServe_RefreshArtifact(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sales-w48.csv", "region,amount\nEMEA,100\nAMER,250.5\n")
	h := startHTTP(t, home, "SELMEM_PROFILE_DATA_ROOTS="+root)
	cs := connectHTTP(t, h.url, eras[1])
	for p, text := range artifactFiles(root) {
		if msg, _, isErr := call(t, cs, "memory_create", map[string]any{"path": p, "file_text": text}); isErr {
			t.Fatalf("create %s: %s", p, msg)
		}
	}
	text, sc, isErr := call(t, cs, "refresh_artifact", map[string]any{"workspace": "demo", "artifact": "dash"})
	if isErr || sc["outcome"] != "refreshed" || !strings.Contains(text, "No model was called") {
		t.Fatalf("refresh: %v %s %v", isErr, text, sc)
	}
	get := func(path string) (int, string, http.Header) {
		t.Helper()
		resp, err := http.Get(h.base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	code, body, hdr := get("/artifacts/demo/dash/")
	if code != 200 || !strings.Contains(body, `"amount":250.5`) || !strings.Contains(hdr.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("GET artifact: %d %s %v", code, body, hdr)
	}
	text, sc, isErr = call(t, cs, "query_artifact_data", map[string]any{"workspace": "demo", "artifact": "dash", "sql": "SELECT sum(amount) AS total FROM data"})
	if isErr || !strings.Contains(toJSON(sc), "350.5") {
		t.Fatalf("query: %v %s %v", isErr, text, sc)
	}

	// New data without the amount column: refused, nothing changes.
	before := commits(t, home)
	write("sales-w49.csv", "region,units\nEMEA,3\n")
	future := time.Now().Add(time.Minute)
	os.Chtimes(filepath.Join(root, "sales-w49.csv"), future, future)
	text, sc, _ = call(t, cs, "refresh_artifact", map[string]any{"workspace": "demo", "artifact": "dash"})
	if sc["outcome"] != "incompatible" || !strings.Contains(toJSON(sc["missing_columns"]), "amount") || !strings.Contains(text, "regenerate_artifact") {
		t.Fatalf("incompatible refresh: %s %v", text, sc)
	}
	if got := commits(t, home); got != before {
		t.Errorf("an incompatible refresh made %d commits", got-before)
	}
	if _, body, _ := get("/artifacts/demo/dash/data.json"); !strings.Contains(body, "250.5") {
		t.Errorf("the served data changed after a refused refresh: %s", body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "regenerate_artifact", Arguments: map[string]string{"workspace": "demo", "artifact": "dash"}})
	if err != nil {
		t.Fatal(err)
	}
	prompt := pr.Messages[0].Content.(*mcp.TextContent).Text
	for _, want := range []string{"Missing columns: amount", "- amount (number)", "units", `id="selmem-data"`, "rebind"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the regenerate prompt lacks %q:\n%s", want, prompt)
		}
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory://workspaces/demo/artifacts"})
	if err != nil {
		t.Fatal(err)
	}
	if listing := res.Contents[0].Text; !strings.Contains(listing, "## dash") || !strings.Contains(listing, "last run: incompatible") {
		t.Errorf("artifacts resource:\n%s", listing)
	}
}

// TestServe_RefreshNotifies subscribes to a workspace's artifacts resource
// over stdio and refreshes: the update arrives.
func TestServe_RefreshNotifies(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "sales-1.csv"), []byte("region,amount\nEMEA,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	updated := make(chan string, 32)
	client := mcp.NewClient(&mcp.Implementation{Name: "selmem-e2e", Version: "v0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	})
	cmd := command(home)
	cmd.Env = append(cmd.Env, "SELMEM_PROFILE_DATA_ROOTS="+root, "SELMEM_REFRESH_WATCH=false")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for p, text := range artifactFiles(root) {
		if msg, _, isErr := call(t, cs, "memory_create", map[string]any{"path": p, "file_text": text}); isErr {
			t.Fatalf("create %s: %s", p, msg)
		}
	}
	const uri = "memory://workspaces/demo/artifacts"
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	drain(updated, 200*time.Millisecond)
	if text, _, isErr := call(t, cs, "refresh_artifact", map[string]any{"workspace": "demo", "artifact": "dash"}); isErr {
		t.Fatal(text)
	}
	waitURI(t, updated, uri)
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestServe_RefreshFromMCP refreshes an artifact from another MCP server
// named in refresh.mcp_servers: a second selmem over stdio (its
// memory_history tool answers records) and over streamable HTTP. A
// connector naming a server that is not configured is refused.
func TestServe_RefreshFromMCP(t *testing.T) {
	other := t.TempDir() // the memory the other server serves
	peer := startHTTP(t, other)
	home := t.TempDir()
	cfg := "refresh:\n  mcp_servers:\n" +
		"    peer-stdio:\n      command: [" + peerScript(t, other) + "]\n" +
		"    peer-http:\n      url: " + peer.url + "\n" +
		"profile:\n  allowed_hosts: [" + strings.TrimPrefix(peer.base, "http://") + "]\n"
	if err := os.WriteFile(filepath.Join(home, "selmem.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	h := startHTTP(t, home, "SELMEM_OTHER_HOME="+other)
	cs := connectHTTP(t, h.url, eras[1])
	for _, tc := range []struct{ name, server, want string }{
		{"stdio", "peer-stdio", "refreshed"},
		{"http", "peer-http", "refreshed"},
		{"not configured", "nope", `no MCP server "nope" is configured`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			art := "hist-" + strings.ReplaceAll(tc.name, " ", "-")
			files := map[string]string{
				"/memories/workspaces/ops/tools/" + art + ".yaml":             "kind: mcp\nserver: " + tc.server + "\ntool: memory_history\narguments: {limit: 5}\nrecords_path: commits\n",
				"/memories/workspaces/ops/artifacts/" + art + "/binding.yaml": "connector: " + art + "\n",
			}
			for p, text := range files {
				if msg, _, isErr := call(t, cs, "memory_create", map[string]any{"path": p, "file_text": text}); isErr {
					t.Fatalf("create %s: %s", p, msg)
				}
			}
			text, sc, _ := call(t, cs, "refresh_artifact", map[string]any{"workspace": "ops", "artifact": art})
			if got := toJSON(sc["outcome"]) + text; !strings.Contains(got, tc.want) {
				t.Fatalf("refresh: %s %v\n%s", text, sc, h.stderr)
			}
			if tc.want == "refreshed" && !strings.Contains(toJSON(sc["columns"]), `"commit"`) {
				t.Errorf("columns %v lack commit", sc["columns"])
			}
		})
	}
}

// peerScript is an executable that serves the memory at home over stdio:
// an MCP server command as a user would configure one.
func peerScript(t *testing.T, home string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "peer.sh")
	script := "#!/bin/sh\nexec env SELMEM_HOME=" + home + " SELMEM_DURABILITY=os " + bin + " serve\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

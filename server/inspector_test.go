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
)

// inspector returns the MCP Inspector CLI installed by
// scripts/install-inspector.sh. Under CI=true it runs the script (and fails
// when it cannot); otherwise it skips when the CLI is not installed.
func inspector(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cli := filepath.Join(root, ".cache", "inspector", "node_modules", ".bin", "mcp-inspector")
	if os.Getenv("CI") == "true" {
		out, err := exec.Command(filepath.Join(root, "scripts", "install-inspector.sh")).Output()
		if err != nil {
			t.Fatalf("scripts/install-inspector.sh: %v", err)
		}
		return strings.TrimSpace(string(out))
	}
	if _, err := os.Stat(cli); err != nil {
		t.Skip("MCP Inspector CLI not installed; run scripts/install-inspector.sh (needs npm)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not found; the MCP Inspector CLI needs it")
	}
	return cli
}

// runInspector runs one Inspector CLI method against `selmem serve` over
// stdio and decodes its JSON answer.
func runInspector(t *testing.T, cli, home string, args ...string) map[string]any {
	t.Helper()
	v, _ := runInspectorStderr(t, cli, home, args...)
	return v
}

// runInspectorStderr is runInspector that also returns the CLI's stderr,
// where it reports tool-schema portability findings.
func runInspectorStderr(t *testing.T, cli, home string, args ...string) (map[string]any, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	argv := append([]string{"--cli", "-e", "SELMEM_HOME=" + home, "-e", "SELMEM_AUTHOR=inspector", bin, "serve"}, args...)
	cmd := exec.CommandContext(ctx, cli, argv...)
	cmd.Env = append(os.Environ(), "SELMEM_HOME="+home)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// The CLI exits non-zero when a tool result has isError; its JSON is
	// still on stdout.
	if err != nil && !json.Valid(out) {
		t.Fatalf("inspector %v: %v\nstdout: %s\nstderr: %s", args, err, out, stderr.String())
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("inspector %v: not JSON: %v\n%s", args, err, out)
	}
	return v, stderr.String()
}

func TestServe_Inspector(t *testing.T) {
	cli := inspector(t)
	home := t.TempDir()

	// --strict reports every tool-schema portability finding (type
	// unions, bare boolean schemas, …) on stderr; there must be none.
	list, stderr := runInspectorStderr(t, cli, home, "--method", "tools/list", "--strict")
	if strings.Contains(stderr, "Warning:") || strings.Contains(stderr, "Error:") || strings.Contains(stderr, "portability") {
		t.Errorf("the Inspector reports schema portability findings:\n%s", stderr)
	}
	tools, _ := list["tools"].([]any)
	names := map[string]bool{}
	for _, x := range tools {
		names[x.(map[string]any)["name"].(string)] = true
	}
	for _, n := range []string{"memory_view", "memory_create", "memory_str_replace", "memory_insert", "memory_delete", "memory_rename", "memory_search", "memory_history", "memory_revert"} {
		if !names[n] {
			t.Errorf("tools/list lacks %s: %v", n, names)
		}
	}

	res := runInspector(t, cli, home, "--method", "tools/call", "--tool-name", "memory_create",
		"--tool-arg", "path=/memories/workspaces/demo/task.md", "--tool-arg", "file_text=# Rules\n- Amounts in EUR.\n")
	if b, _ := json.Marshal(res); !strings.Contains(string(b), "File created successfully at: /memories/workspaces/demo/task.md") || res["isError"] == true {
		t.Errorf("tools/call memory_create: %s", b)
	}
	res = runInspector(t, cli, home, "--method", "tools/call", "--tool-name", "memory_view", "--tool-arg", "path=/memories/nope.md")
	if res["isError"] != true {
		t.Errorf("memory_view of a missing file is not isError: %v", res)
	}

	rl := runInspector(t, cli, home, "--method", "resources/list")
	b, _ := json.Marshal(rl)
	if !strings.Contains(string(b), "memory://workspaces") {
		t.Logf("no resources registered (resources/list: %s); skipping resources/read", b)
		return
	}
	rr := runInspector(t, cli, home, "--method", "resources/read", "--uri", "memory://workspaces/demo/context")
	if b, _ := json.Marshal(rr); !strings.Contains(string(b), "Amounts in EUR") {
		t.Errorf("resources/read context: %s", b)
	}
}

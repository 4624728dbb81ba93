package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLI_MCPConfig: the snippet names this binary by its absolute path and
// the current SELMEM_HOME made absolute, in the host's own shape.
func TestCLI_MCPConfig(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	code, stdout, stderr := cli(t, "rel-home", "", "mcp-config", "vscode")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var cfg struct {
		Servers map[string]struct {
			Type    string            `json:"type"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(stdout), &cfg); err != nil {
		t.Fatalf("stdout is not the JSON to merge: %v\n%s", err, stdout)
	}
	s := cfg.Servers["selmem"]
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	if s.Type != "stdio" || s.Command != exe || len(s.Args) != 1 || s.Args[0] != "serve" {
		t.Errorf("server = %+v, want stdio %s serve", s, exe)
	}
	wantHome, _ := filepath.Abs("rel-home")
	if got := s.Env["SELMEM_HOME"]; got != wantHome {
		t.Errorf("SELMEM_HOME = %q, want %q", got, wantHome)
	}
	if !strings.Contains(stderr, ".vscode/mcp.json") {
		t.Errorf("stderr does not say where the snippet goes: %q", stderr)
	}
}

func TestCLI_MCPConfigHTTP(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{args: []string{"mcp-config", "gemini", "--http", "127.0.0.1:8080"}, code: exitOK, stdout: `"httpUrl": "http://127.0.0.1:8080/mcp"`},
		{args: []string{"mcp-config", "windsurf", "--http", ":9000"}, code: exitOK, stdout: `"serverUrl": "http://127.0.0.1:9000/mcp"`},
		{args: []string{"mcp-config", "codex", "--http", "https://mem.example.org"}, code: exitOK, stdout: `url = "https://mem.example.org/mcp"`},
		{args: []string{"mcp-config", "claude-code", "--http", "127.0.0.1:8080"}, code: exitOK,
			stdout: "claude mcp add --transport http --scope user selmem http://127.0.0.1:8080/mcp\n"},
		{args: []string{"mcp-config", "claude-desktop", "--http", "127.0.0.1:8080"}, code: exitUsage, stderr: "Connectors"},
		{args: []string{"mcp-config", "cursor", "--http", "nonsense"}, code: exitUsage, stderr: "want ADDR"},
		{args: []string{"mcp-config", "vs-code"}, code: exitUsage, stderr: "vscode"},
		{args: []string{"mcp-config"}, code: exitOK, stdout: "https://zed.dev/docs/ai/mcp"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args[1:], " "), func(t *testing.T) {
			code, stdout, stderr := cli(t, home, "", tt.args...)
			if code != tt.code || !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, %q, %q", code, stdout, stderr, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}

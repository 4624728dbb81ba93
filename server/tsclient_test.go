package server_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServe_TSClient drives `selmem serve` with the TypeScript SDK client
// (testdata/tsclient/client.mjs: lists, calls, protocol errors,
// completions, log messages, a subscription to two resources, a cancelled
// call) over stdio and streamable HTTP.
func TestServe_TSClient(t *testing.T) {
	dir := nodeTools(t)
	script, err := filepath.Abs(filepath.Join("testdata", "tsclient", "client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	const allowLoopback = "SELMEM_PROFILE_ALLOWED_HOSTS=127.0.0.1"
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			home := t.TempDir()
			vars := append(env(home), "NODE_TOOLS="+dir, "MCP_TRANSPORT="+transport, allowLoopback)
			if transport == "http" {
				vars = append(vars, "MCP_URL="+startHTTP(t, home, allowLoopback).url)
			} else {
				vars = append(vars, "SELMEM_BIN="+bin)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(dir, "bin", "node"), script)
			cmd.Env = vars
			out, err := cmd.CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "ok" {
				t.Errorf("TypeScript SDK client over %s: %v\n%s", transport, err, out)
			}
		})
	}
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLI_LogFormat: log.format json (flag, environment or selmem.yaml)
// writes one JSON object a line to stderr, text writes slog's key=value
// lines, stdout carries no log in either, and another format is refused.
func TestCLI_LogFormat(t *testing.T) {
	jsonLines := func(t *testing.T, stderr string) {
		t.Helper()
		var msgs []string
		for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
			var rec struct {
				Time, Level, Msg string
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Time == "" || rec.Level == "" {
				t.Fatalf("stderr line is not a JSON log record: %q (%v)", line, err)
			}
			msgs = append(msgs, rec.Msg)
		}
		if !strings.Contains(strings.Join(msgs, "\n"), "serving MCP") {
			t.Errorf("no \"serving MCP\" record in %q", stderr)
		}
	}
	t.Run("flag", func(t *testing.T) {
		code, stdout, stderr := cli(t, t.TempDir(), "", "--log-format", "json", "serve")
		if code != exitOK || stdout != "" {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		jsonLines(t, stderr)
	})
	t.Run("environment", func(t *testing.T) {
		t.Setenv("SELMEM_LOG_FORMAT", "json")
		code, stdout, stderr := cli(t, t.TempDir(), "", "serve")
		if code != exitOK || stdout != "" {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		jsonLines(t, stderr)
	})
	t.Run("file", func(t *testing.T) {
		home := t.TempDir()
		if err := os.WriteFile(filepath.Join(home, "selmem.yaml"), []byte("log:\n  format: json\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := cli(t, home, "", "serve")
		if code != exitOK || stdout != "" {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		jsonLines(t, stderr)
	})
	t.Run("text by default", func(t *testing.T) {
		code, stdout, stderr := cli(t, t.TempDir(), "", "serve")
		if code != exitOK || stdout != "" || !strings.Contains(stderr, `level=INFO msg="serving MCP"`) {
			t.Fatalf("exit %d, stdout %q, stderr %q; want text records", code, stdout, stderr)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		code, _, stderr := cli(t, t.TempDir(), "", "--log-format", "xml", "config")
		if code != exitFailed || !strings.Contains(stderr, "log.format") {
			t.Errorf("exit %d, stderr %q; want exit 1 naming log.format", code, stderr)
		}
	})
}

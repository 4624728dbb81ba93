package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCLI_Artifact scaffolds an artifact from a connector, refreshes it,
// lists the runs, refuses data that no longer fits with exit code 3, and
// lints.
func TestCLI_Artifact(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	t.Setenv("SELMEM_PROFILE_DATA_ROOTS", root)
	t.Setenv("SELMEM_DURABILITY", "os")
	write := func(name, content string, age time.Duration) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		os.Chtimes(p, at, at)
	}
	write("sales-1.csv", "region,amount\nEMEA,10\nAMER,20.5\n", time.Hour)
	steps := []struct {
		name   string
		stdin  string
		args   []string
		before func()
		code   int
		stdout string
		stderr string
	}{
		{name: "init", args: []string{"init", "--demo"}, code: exitOK},
		{name: "connector", stdin: "kind: file\npath: " + root + "/sales-*.csv\n", args: []string{"create", "/memories/workspaces/demo/tools/weekly.yaml"}, code: exitOK},
		{name: "no source", args: []string{"artifact", "init", "demo", "dash"}, code: exitUsage, stderr: "--source"},
		{name: "unknown connector", args: []string{"artifact", "init", "demo", "dash", "--source", "nope"}, code: exitFailed, stderr: "no connector nope"},
		{name: "artifact init", args: []string{"artifact", "init", "demo", "dash", "--source", "weekly", "--schedule", "0 6 * * 1"}, code: exitOK, stdout: "2 rows, 2 columns"},
		{name: "artifact init again", args: []string{"artifact", "init", "demo", "dash", "--source", "weekly"}, code: exitFailed, stderr: "already exists"},
		{name: "contract in output.md once", args: []string{"view", "/memories/workspaces/demo/output.md"}, code: exitOK, stdout: "injection point"},
		{name: "unchanged", args: []string{"refresh", "demo", "dash"}, code: exitOK, stdout: "already shows this data"},
		{name: "new data", before: func() { write("sales-2.csv", "region,amount,units\nEMEA,11,1\nAPAC,3,2\n", 0) },
			args: []string{"refresh", "demo", "dash"}, code: exitOK, stdout: "No model was called"},
		{name: "status", args: []string{"refresh", "--status"}, code: exitOK, stdout: "refreshed"},
		{name: "status with arguments", args: []string{"refresh", "--status", "demo"}, code: exitUsage},
		{name: "lint clean", args: []string{"artifact", "lint", "demo", "dash"}, code: exitOK, stdout: "no values"},
		{name: "hardcoded total", stdin: "document.title = 'EMEA: 14';\n", args: []string{"create", "/memories/workspaces/demo/artifacts/dash/extra.js"}, code: exitOK},
		{name: "lint finds it", args: []string{"artifact", "lint", "demo", "dash"}, code: exitFailed, stdout: "extra.js:1"},
		{name: "incompatible", before: func() { write("sales-3.csv", "region,units\nEMEA,1\n", -time.Hour) },
			args: []string{"refresh", "demo", "dash"}, code: exitIncompatible, stderr: "missing columns amount"},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		code, stdout, stderr := cli(t, home, s.stdin, s.args...)
		if code != s.code || !strings.Contains(stdout, s.stdout) || !strings.Contains(stderr, s.stderr) {
			t.Fatalf("%s: selmem %v: exit %d\nstdout: %s\nstderr: %s", s.name, s.args, code, stdout, stderr)
		}
	}
	_, out, _ := cli(t, home, "", "view", "/memories/workspaces/demo/output.md")
	if n := strings.Count(strings.ToLower(out), "injection contract"); n != 1 {
		t.Errorf("output.md holds %d injection contracts, want 1:\n%s", n, out)
	}
	_, out, _ = cli(t, home, "", "refresh", "--status", "--json")
	var status []map[string]any
	if err := json.Unmarshal([]byte(out), &status); err != nil || len(status) != 1 || status[0]["outcome"] != "incompatible" || status[0]["next_run"] == nil {
		t.Errorf("refresh --status --json = %s (%v)", out, err)
	}
}

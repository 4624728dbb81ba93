package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cli runs one command line against home and returns its exit code and
// output streams.
func cli(t *testing.T, home, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("SELMEM_HOME", home)
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestCLI(t *testing.T) {
	home := t.TempDir()
	if code, _, stderr := cli(t, home, "", "init", "--demo"); code != exitOK {
		t.Fatalf("init --demo: exit %d: %s", code, stderr)
	}
	tests := []struct {
		name     string
		stdin    string
		args     []string
		code     int
		stdout   string // substring expected on stdout
		stderr   string // substring expected on stderr
		noStdout bool
	}{
		{name: "view file", args: []string{"view", "workspaces/demo/task.md", "--range", "9:10"}, code: exitOK,
			stdout: "     9\t## Domain rules\n    10\t- Revenue is"},
		{name: "view dir", args: []string{"view", "/memories/workspaces/demo"}, code: exitOK,
			stdout: "/memories/workspaces/demo/tools/warehouse.yaml"},
		{name: "view missing", args: []string{"view", "nope.md"}, code: exitFailed, noStdout: true,
			stderr: "The path /memories/nope.md does not exist. Please provide a valid path."},
		{name: "view bad range", args: []string{"view", "notes/x.md", "--range", "a:b"}, code: exitUsage,
			stderr: "START is not a number"},
		{name: "create", stdin: "# Rules\n\n- Fiscal year starts in April.\n", args: []string{"create", "workspaces/fin/task.md"},
			code: exitOK, stdout: "File created successfully at: /memories/workspaces/fin/task.md"},
		{name: "create exists", stdin: "x", args: []string{"create", "workspaces/fin/task.md"}, code: exitFailed,
			stderr: "already exists"},
		{name: "create secret refused", stdin: "token: ghp_" + "R8xTq2LmZ7vK4pW9sYb3NcH6jD1fG5aE0uQw\n", args: []string{"create", "workspaces/fin/tools/gh.yaml"},
			code: exitFailed, stderr: "GitHub"},
		{name: "replace", args: []string{"replace", "workspaces/fin/task.md", "April", "July"}, code: exitOK,
			stdout: "The memory file has been edited."},
		{name: "insert", args: []string{"insert", "workspaces/fin/task.md", "3", "--", "- Budgets close in March."}, code: exitOK,
			stdout: "has been edited."},
		{name: "insert bad line", args: []string{"insert", "workspaces/fin/task.md", "x", "y"}, code: exitUsage},
		{name: "search", args: []string{"search", "fiscal year july", "--workspace", "fin"}, code: exitOK,
			stdout: "1. /memories/workspaces/fin/task.md:1-4"},
		{name: "search json", args: []string{"search", "fiscal", "--json", "--limit", "1"}, code: exitOK,
			stdout: `"path": "/memories/workspaces/fin/task.md"`},
		{name: "log", args: []string{"log", "workspaces/fin/task.md"}, code: exitOK, stdout: "Tool: cli insert, Source: user_confirmed"},
		{name: "log by author", args: []string{"log", "--author", "selmem", "workspaces/fin/task.md"}, code: exitOK, stdout: "selmem insert workspaces/fin/task.md"},
		{name: "log by another author", args: []string{"log", "--author", "nobody"}, code: exitOK, noStdout: true},
		{name: "rename", args: []string{"rename", "workspaces/fin", "workspaces/finance"}, code: exitOK,
			stdout: "Successfully renamed /memories/workspaces/fin to /memories/workspaces/finance"},
		{name: "delete", args: []string{"delete", "workspaces/finance/task.md"}, code: exitOK, stdout: "Successfully deleted"},
		{name: "delete root", args: []string{"delete", "/memories"}, code: exitFailed, stderr: "Cannot delete"},
		{name: "reindex", args: []string{"reindex"}, code: exitOK, stdout: "Reindexed 6 files"},
		{name: "config", args: []string{"config"}, code: exitOK, stdout: "backend: sqlite"},
		{name: "version", args: []string{"version"}, code: exitOK, stdout: "selmem "},
		{name: "unknown command", args: []string{"frobnicate"}, code: exitUsage, stderr: "unknown command"},
		{name: "missing args", args: []string{"replace", "a"}, code: exitUsage, stderr: "accepts 3 arg(s)"},
		{name: "unknown flag", args: []string{"view", "--bogus", "x"}, code: exitUsage, stderr: "unknown flag"},
		{name: "traversal", args: []string{"view", "/memories/../../etc/passwd"}, code: exitFailed, stderr: ".."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, home, tt.stdin, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout %q lacks %q", stdout, tt.stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q lacks %q", stderr, tt.stderr)
			}
			if tt.noStdout && stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
		})
	}
	// Every accepted write above is one commit.
	out, err := exec.Command("git", "-C", filepath.Join(home, "memory"), "rev-list", "--count", "main").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(out)), "12"; got != want {
		t.Errorf("%s commits, want %s (initial + 6 demo files + create, replace, insert, rename, delete)", got, want)
	}
}

func TestCLI_ConfigSources(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "selmem.yaml"), []byte("author: carol\nindex:\n  backend: postgres\n  dsn: postgres://app:hunter2@db/selmem\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SELMEM_LOG_LEVEL", "debug")
	code, stdout, stderr := cli(t, home, "", "config")
	if code != exitOK {
		t.Fatalf("config: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"author: carol", "backend: postgres", "level: debug", "postgres://app:REDACTED@db/selmem"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("config output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "hunter2") {
		t.Errorf("config printed the password:\n%s", stdout)
	}
	t.Setenv("SELMEM_PROFILE_DATA_ROOTS", "/srv/data,/mnt/exports")
	if code, stdout, stderr := cli(t, home, "", "config"); code != exitOK ||
		!strings.Contains(stdout, "profile:\n  data_roots:\n    - /srv/data\n    - /mnt/exports\n") {
		t.Errorf("data roots from the environment: exit %d, stderr %q:\n%s", code, stderr, stdout)
	}
	t.Setenv("SELMEM_PROFILE_DATA_ROOTS", "relative/dir")
	if code, _, stderr := cli(t, home, "", "config"); code != exitFailed || !strings.Contains(stderr, "profile.data_roots") {
		t.Errorf("relative data root: exit %d, stderr %q; want exit 1 naming profile.data_roots", code, stderr)
	}
	t.Setenv("SELMEM_PROFILE_DATA_ROOTS", "")
	code, _, stderr = cli(t, home, "", "--log-level", "loud", "config")
	if code != exitFailed || !strings.Contains(stderr, "log.level") {
		t.Errorf("bad log level: exit %d, stderr %q; want exit 1 naming log.level", code, stderr)
	}
}

// TestCLI_ConfigProfileEgress: the outbound policy settings come from the
// config file or, as JSON and comma lists, from the environment; selmem
// config prints them (they hold only the names of environment variables),
// and a wrong one is reported by its key.
func TestCLI_ConfigProfileEgress(t *testing.T) {
	home := t.TempDir()
	yml := `profile:
  allowed_hosts: [db.internal, "127.0.0.1:8080", 10.0.0.0/8]
  credentials:
    sales-api:
      env: SELMEM_PROFILE_SALES_TOKEN
      hosts: [api.example.com]
      prefix: "Bearer "
  connections:
    warehouse:
      driver: postgres
      dsn_env: SELMEM_PROFILE_WAREHOUSE_DSN
    shop:
      driver: sqlite
      path: /srv/data/shop.db
`
	if err := os.WriteFile(filepath.Join(home, "selmem.yaml"), []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SELMEM_PROFILE_SALES_TOKEN", "s3cret-token")
	code, stdout, stderr := cli(t, home, "", "config")
	if code != exitOK {
		t.Fatalf("config: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"allowed_hosts:\n    - db.internal\n    - 127.0.0.1:8080\n    - 10.0.0.0/8\n",
		"sales-api:\n      env: SELMEM_PROFILE_SALES_TOKEN\n      hosts:\n        - api.example.com\n      prefix: 'Bearer '\n",
		"warehouse:\n      driver: postgres\n      dsn_env: SELMEM_PROFILE_WAREHOUSE_DSN\n", "path: /srv/data/shop.db"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("config output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "s3cret") {
		t.Errorf("config printed a secret:\n%s", stdout)
	}

	env := t.TempDir()
	t.Setenv("SELMEM_PROFILE_ALLOWED_HOSTS", "localhost:9000,[::1]")
	t.Setenv("SELMEM_PROFILE_CREDENTIALS", `{"gh": {"env": "GH_TOKEN", "hosts": ["api.github.com"], "header": "Authorization", "prefix": "token "}}`)
	t.Setenv("SELMEM_PROFILE_CONNECTIONS", `{"wh": {"driver": "postgres", "dsn_env": "WH_DSN"}}`)
	code, stdout, stderr = cli(t, env, "", "config")
	if code != exitOK {
		t.Fatalf("config from env: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"- localhost:9000\n    - '[::1]'", "gh:\n      env: GH_TOKEN", "wh:\n      driver: postgres\n      dsn_env: WH_DSN"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("config from env lacks %q:\n%s", want, stdout)
		}
	}
	for _, tc := range []struct{ key, value, want string }{
		{"SELMEM_PROFILE_CREDENTIALS", `{"gh": {"env": "GH_TOKEN"}}`, "profile.credentials.gh.hosts"},
		{"SELMEM_PROFILE_CREDENTIALS", `not json`, "not a JSON object"},
		{"SELMEM_PROFILE_CONNECTIONS", `{"wh": {"driver": "mysql"}}`, "profile.connections.wh.driver"},
		{"SELMEM_PROFILE_ALLOWED_HOSTS", "10.0.0.0/99", "profile.allowed_hosts[0]"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			t.Setenv(tc.key, tc.value)
			if code, _, stderr := cli(t, env, "", "config"); code != exitFailed || !strings.Contains(stderr, tc.want) {
				t.Errorf("%s=%s: exit %d, stderr %q; want exit 1 naming %s", tc.key, tc.value, code, stderr, tc.want)
			}
		})
	}
}

// TestCLI_InitRefusesExistingMemory checks init never starts an existing
// memory over: it fails, says why, and changes nothing.
func TestCLI_InitRefusesExistingMemory(t *testing.T) {
	home := t.TempDir()
	if code, _, stderr := cli(t, home, "", "init"); code != exitOK {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	if code, _, stderr := cli(t, home, "- kept\n", "create", "notes/kept.md"); code != exitOK {
		t.Fatalf("create: exit %d: %s", code, stderr)
	}
	head := func() string {
		out, err := exec.Command("git", "-C", filepath.Join(home, "memory"), "rev-parse", "HEAD").Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	before := head()
	for _, args := range [][]string{{"init"}, {"init", "--demo"}} {
		code, _, stderr := cli(t, home, "", args...)
		if code != exitFailed || !strings.Contains(stderr, "already holds a memory") {
			t.Errorf("%v on an existing memory: exit %d, stderr %q; want a refusal", args, code, stderr)
		}
	}
	if after := head(); after != before {
		t.Errorf("HEAD moved from %s to %s", before, after)
	}
	if code, stdout, _ := cli(t, home, "", "view", "notes/kept.md"); code != exitOK || !strings.Contains(stdout, "- kept") {
		t.Errorf("view after the refused init: exit %d, %q", code, stdout)
	}
}

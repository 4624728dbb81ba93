package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLI_WorkspaceTemplates publishes the demo workspace, exports it,
// checks the bundle with git and imports it into a second home.
func TestCLI_WorkspaceTemplates(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	for _, home := range []string{src, dst} {
		if code, _, stderr := cli(t, home, "", "init", "--demo"); code != exitOK {
			t.Fatalf("init --demo: exit %d: %s", code, stderr)
		}
	}
	bundle := filepath.Join(t.TempDir(), "demo.bundle")
	garbage := filepath.Join(t.TempDir(), "garbage.bundle")
	if err := os.WriteFile(garbage, []byte("# v2 git bundle\nnot a ref\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		home   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"publish", src, []string{"workspace", "publish", "demo", "1.0.0"}, exitOK, "Published template demo@1.0.0", ""},
		{"publish again", src, []string{"workspace", "publish", "demo", "1.0.0"}, exitFailed, "", "already exists"},
		{"templates", src, []string{"workspace", "templates"}, exitOK, "demo@1.0.0\t", ""},
		{"load", src, []string{"workspace", "load", "demo@1.0.0", "mine"}, exitOK, "Created workspace mine from template demo@1.0.0", ""},
		{"export", src, []string{"workspace", "export", "demo", "-o", bundle}, exitOK, "refs/tags/templates/demo/1.0.0", ""},
		{"export a missing template", src, []string{"workspace", "export", "demo", "--template", "9", "-o", bundle + ".x"}, exitFailed, "", "no template demo@9"},
		{"import", dst, []string{"workspace", "import", bundle, "--as", "theirs"}, exitOK, "Created workspace theirs from template demo", ""},
		{"import again", dst, []string{"workspace", "import", bundle, "--as", "theirs"}, exitFailed, "", "already exists"},
		{"import onto an existing workspace", dst, []string{"workspace", "import", bundle}, exitFailed, "", "workspace demo already exists"},
		{"import garbage", dst, []string{"workspace", "import", garbage}, exitFailed, "", "not a workspace bundle"},
		{"imported templates", dst, []string{"workspace", "templates"}, exitOK, "theirs@1.0.0\t", ""},
		{"provenance", dst, []string{"view", "workspaces/theirs/workspace.yaml"}, exitOK, "bundle: demo.bundle", ""},
		{"no subcommand", dst, []string{"workspace"}, exitUsage, "", "name a subcommand"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, tt.home, "", tt.args...)
			if code != tt.code || !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout: %s (want %q)\nstderr: %s (want %q)", code, tt.code, stdout, tt.stdout, stderr, tt.stderr)
			}
		})
	}
	repo := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"bundle", "verify", bundle}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

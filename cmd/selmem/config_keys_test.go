package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLI_UnknownSettings checks that a misspelt setting in selmem.yaml is
// refused, naming the closest known one, instead of being ignored.
func TestCLI_UnknownSettings(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string // substrings of stderr; none: accepted
	}{
		{"known settings", "index:\n  backend: sqlite\nhttp:\n  max_sessions: 3\nprofile:\n  credentials:\n    sales: {env: TOKEN, hosts: [api.example.com]}\n", nil},
		{"misspelt section", "indx:\n  backend: sqlite\n", []string{"unknown setting indx", "did you mean index?"}},
		{"misspelt key", "http:\n  max_sesions: 3\n", []string{"unknown setting http.max_sesions", "did you mean http.max_sessions?"}},
		{"nothing near", "zzzzzzzzzzzz: 1\n", []string{"unknown setting zzzzzzzzzzzz in"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, "selmem.yaml"), []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := cli(t, home, "", "config")
			if tc.want == nil {
				if code != exitOK {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				return
			}
			if code == exitOK {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if tc.name == "nothing near" && strings.Contains(stderr, "did you mean") {
				t.Errorf("a suggestion for a key near nothing: %s", stderr)
			}
		})
	}
}

// TestCLI_Version checks --version and the version command agree.
func TestCLI_Version(t *testing.T) {
	home := t.TempDir()
	code1, flag, _ := cli(t, home, "", "--version")
	code2, cmd, _ := cli(t, home, "", "version")
	if code1 != exitOK || code2 != exitOK || flag != cmd || !strings.HasPrefix(flag, "selmem ") {
		t.Errorf("--version %q (exit %d), version %q (exit %d)", flag, code1, cmd, code2)
	}
}

// TestCLI_DashValues: a text argument that starts with "-" reads as a flag;
// the refusal says to put -- before the arguments, and with it the value
// is taken as written.
func TestCLI_DashValues(t *testing.T) {
	home := t.TempDir()
	const file = "workspaces/demo/rules.md"
	if code, _, stderr := cli(t, home, "- one rule\n", "create", file, "-f", "-"); code != exitOK {
		t.Fatalf("create: exit %d: %s", code, stderr)
	}
	code, _, stderr := cli(t, home, "", "replace", file, "- ", "* ")
	if code != exitUsage || !strings.Contains(stderr, "put -- before the arguments: selmem replace -- PATH OLD NEW") {
		t.Fatalf("replace without --: exit %d, %q", code, stderr)
	}
	if code, _, stderr := cli(t, home, "", "replace", file, "--", "- ", "* "); code != exitOK {
		t.Fatalf("replace with --: exit %d: %s", code, stderr)
	}
	if _, out, _ := cli(t, home, "", "view", file); !strings.Contains(out, "* one rule") {
		t.Errorf("view after replace: %q", out)
	}
}

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

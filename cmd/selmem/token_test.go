package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/selmem/selmem/server"
)

// TestCLI_TokenCreate creates tokens, adds the printed entries to
// selmem.yaml and checks that the config loads them, by hash only.
func TestCLI_TokenCreate(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		name   string
		args   []string
		entry  string // name under http.auth.tokens
		want   server.StaticToken
		code   int
		stderr string
	}{
		{name: "person with groups", args: []string{"--user", "alice", "--group", "finance", "--group", "eng"},
			want: server.StaticToken{User: "alice", Groups: []string{"finance", "eng"}, Kind: "person"}},
		{name: "service with a name", args: []string{"--user", "ci-bot", "--service", "--name", "ci"}, entry: "ci",
			want: server.StaticToken{User: "ci-bot", Kind: "service"}},
		{name: "no user", args: []string{"--group", "x"}, code: exitUsage, stderr: "--user: must be set"},
		{name: "user naming a path", args: []string{"--user", "../bob"}, code: exitUsage, stderr: "cannot name a directory"},
		{name: "group with prefix", args: []string{"--user", "a", "--group", "group:ops"}, code: exitUsage, stderr: "--group \"group:ops\""},
		{name: "bad name", args: []string{"--user", "a", "--name", "A.B"}, code: exitUsage, stderr: "--name"},
	}
	var entries []string
	tokens := map[string]string{} // entry name → token
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, home, "", append([]string{"token", "create"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s", code, tt.code, stderr)
			}
			if tt.code != exitOK {
				if !strings.Contains(stderr, tt.stderr) {
					t.Errorf("stderr %q lacks %q", stderr, tt.stderr)
				}
				return
			}
			token, snippet, _ := strings.Cut(stdout, "\n")
			if !strings.HasPrefix(token, server.TokenPrefix) || len(token) < 40 {
				t.Fatalf("token %q", token)
			}
			if strings.Count(stdout, token) != 1 || strings.Contains(snippet, token) {
				t.Error("the token is printed more than once")
			}
			var doc struct {
				HTTP struct {
					Auth struct {
						Tokens map[string]server.StaticToken `yaml:"tokens"`
					} `yaml:"auth"`
				} `yaml:"http"`
			}
			if err := yaml.Unmarshal([]byte(snippet), &doc); err != nil {
				t.Fatalf("snippet is not YAML: %v\n%s", err, snippet)
			}
			if len(doc.HTTP.Auth.Tokens) != 1 {
				t.Fatalf("snippet: %s", snippet)
			}
			for name, got := range doc.HTTP.Auth.Tokens {
				if tt.entry != "" && name != tt.entry {
					t.Errorf("entry %q, want %q", name, tt.entry)
				}
				want := tt.want
				want.SHA256 = server.HashToken(token)
				if mustYAML(t, got) != mustYAML(t, want) {
					t.Errorf("entry %s, want %s", mustYAML(t, got), mustYAML(t, want))
				}
				tokens[name] = token
				entries = append(entries, strings.TrimPrefix(mustYAML(t, map[string]server.StaticToken{name: got}), ""))
			}
		})
	}
	// Two tokens for the same user differ.
	_, a, _ := cli(t, home, "", "token", "create", "--user", "alice")
	_, b, _ := cli(t, home, "", "token", "create", "--user", "alice")
	if strings.SplitN(a, "\n", 2)[0] == strings.SplitN(b, "\n", 2)[0] {
		t.Error("two tokens are the same")
	}
	// The entries load, and selmem config shows no hash.
	var conf strings.Builder
	conf.WriteString("http:\n  auth:\n    tokens:\n")
	for _, e := range entries {
		for _, line := range strings.Split(strings.TrimSpace(e), "\n") {
			conf.WriteString("      " + line + "\n")
		}
	}
	if err := os.WriteFile(filepath.Join(home, "selmem.yaml"), []byte(conf.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cli(t, home, "", "config")
	if code != exitOK {
		t.Fatalf("config: exit %d: %s\n%s", code, stderr, conf.String())
	}
	if !strings.Contains(stdout, "sha256: REDACTED") || !strings.Contains(stdout, "user: ci-bot") {
		t.Errorf("config:\n%s", stdout)
	}
	for name, tok := range tokens {
		if strings.Contains(stdout, server.HashToken(tok)) {
			t.Errorf("config shows the hash of %s", name)
		}
	}
}

func mustYAML(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCLI_ServeRefusesOpenAddress: without auth, serve refuses an address
// that is not loopback and names the ways out.
func TestCLI_ServeRefusesOpenAddress(t *testing.T) {
	home := t.TempDir()
	code, _, stderr := cli(t, home, "", "serve", "--http", "0.0.0.0:0")
	if code == exitOK {
		t.Fatal("serve started")
	}
	for _, want := range []string{"not a loopback address", "http.auth.tokens", "--insecure-no-auth"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	t.Setenv("SELMEM_HTTP_AUTH_TOKENS", `{"ci": {"sha256": "`+server.HashToken("smm_x")+`", "user": "ci-bot", "kind": "service"}}`)
	t.Setenv("SELMEM_HTTP_AUTH_OIDC_ISSUER", "https://idp.example.com")
	t.Setenv("SELMEM_HTTP_AUTH_OIDC_AUDIENCE", "selmem")
	t.Setenv("SELMEM_HTTP_AUTH_ADMINS", "alice,group:ops")
	code, stdout, stderr := cli(t, home, "", "config")
	if code != exitOK {
		t.Fatalf("config from the environment: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"ci:\n        sha256: REDACTED\n        user: ci-bot\n        kind: service", "issuer: https://idp.example.com", "- group:ops"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("config lacks %q:\n%s", want, stdout)
		}
	}
}

package main

import (
	"strings"
	"testing"
)

// TestCLI_HTTPConfig checks that the HTTP limits come from the defaults,
// the environment and selmem.yaml, and that a bad one is named.
func TestCLI_HTTPConfig(t *testing.T) {
	home := t.TempDir()
	code, stdout, stderr := cli(t, home, "", "config")
	if code != exitOK {
		t.Fatalf("config: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"max_body_bytes: 4194304", "max_sessions: 256", "max_sessions_per_principal: 64", "max_requests: 128", "max_requests_per_principal: 32", "session_idle_ttl: 30m0s",
		"read_timeout: 30s", "write_timeout: 30s", "idle_timeout: 2m0s", "- http://localhost:*", "- https://[::1]:*"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("default config lacks %q:\n%s", want, stdout)
		}
	}
	t.Setenv("SELMEM_HTTP_MAX_BODY_BYTES", "65536")
	t.Setenv("SELMEM_HTTP_SESSION_IDLE_TTL", "5m")
	t.Setenv("SELMEM_HTTP_MAX_REQUESTS_PER_PRINCIPAL", "4")
	t.Setenv("SELMEM_HTTP_ALLOWED_ORIGINS", "https://app.example.com,http://localhost:8080")
	code, stdout, stderr = cli(t, home, "", "config")
	if code != exitOK {
		t.Fatalf("config: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"max_body_bytes: 65536", "session_idle_ttl: 5m0s", "max_requests_per_principal: 4",
		"allowed_origins:\n    - https://app.example.com\n    - http://localhost:8080\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("config from the environment lacks %q:\n%s", want, stdout)
		}
	}
	tests := []struct{ env, value, key string }{
		{"SELMEM_HTTP_MAX_SESSIONS", "0", "http.max_sessions"},
		{"SELMEM_HTTP_MAX_REQUESTS", "0", "http.max_requests"},
		{"SELMEM_HTTP_READ_TIMEOUT", "0s", "http.read_timeout"},
		{"SELMEM_HTTP_ALLOWED_ORIGINS", "example.com", "http.allowed_origins"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			t.Setenv(tt.env, tt.value)
			if code, _, stderr := cli(t, home, "", "config"); code != exitFailed || !strings.Contains(stderr, tt.key) {
				t.Errorf("%s=%s: exit %d, stderr %q; want exit 1 naming %s", tt.env, tt.value, code, stderr, tt.key)
			}
		})
	}
}

package mcpsource

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/selmem/selmem/internal/egress"
)

func TestServer_Validate(t *testing.T) {
	pki := newPKI(t)
	missing := filepath.Join(t.TempDir(), "missing.pem")
	tests := []struct {
		name     string
		server   Server
		wantKeys []string // the keys of the errors, in order
	}{
		{name: "command", server: Server{Command: []string{"reports-mcp", "--stdio"}, Env: []string{"REPORTS_TOKEN"}}},
		{name: "https with mTLS", server: Server{URL: "https://mcp.example.com/mcp", ClientCert: pki.certFile, ClientKey: pki.keyFile, CA: pki.caFile, Credential: "reports", Timeout: time.Minute}},
		{name: "neither", server: Server{}, wantKeys: []string{"k"}},
		{name: "both", server: Server{Command: []string{"x"}, URL: "https://h/"}, wantKeys: []string{"k"}},
		{name: "empty argument", server: Server{Command: []string{"x", ""}}, wantKeys: []string{"k.command[1]"}},
		{name: "bad env name", server: Server{Command: []string{"x"}, Env: []string{"A-B", "PATH"}}, wantKeys: []string{"k.env[0]", "k.env[1]"}},
		{name: "url settings on a command", server: Server{Command: []string{"x"}, CA: pki.caFile, Credential: "c"}, wantKeys: []string{"k.ca", "k.credential"}},
		{name: "env on a url", server: Server{URL: "https://h/", Env: []string{"A"}}, wantKeys: []string{"k.env"}},
		{name: "not a URL", server: Server{URL: "mcp.example.com"}, wantKeys: []string{"k.url"}},
		{name: "other scheme", server: Server{URL: "ftp://h/"}, wantKeys: []string{"k.url"}},
		{name: "user in URL", server: Server{URL: "https://u:p@h/"}, wantKeys: []string{"k.url"}},
		{name: "TLS over http", server: Server{URL: "http://h/", CA: pki.caFile}, wantKeys: []string{"k.url"}},
		{name: "cert without key", server: Server{URL: "https://h/", ClientCert: pki.certFile}, wantKeys: []string{"k.client_key"}},
		{name: "cert and key mismatched", server: Server{URL: "https://h/", ClientCert: pki.certFile, ClientKey: pki.caFile}, wantKeys: []string{"k.client_cert"}},
		{name: "missing CA", server: Server{URL: "https://h/", CA: missing}, wantKeys: []string{"k.ca"}},
		{name: "CA not PEM", server: Server{URL: "https://h/", CA: pki.keyFile}, wantKeys: []string{"k.ca"}},
		{name: "negative timeout", server: Server{URL: "https://h/", Timeout: -time.Second}, wantKeys: []string{"k.timeout"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.server.Validate("k")
			var keys []string
			if err != nil {
				for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
					var ce *egress.ConfigError
					if !errors.As(e, &ce) {
						t.Fatalf("%v is not a *egress.ConfigError", e)
					}
					keys = append(keys, ce.Key)
				}
				if strings.Contains(err.Error(), missing) || strings.Contains(err.Error(), "BEGIN") {
					t.Errorf("Validate: %q shows a path or a file's content", err)
				}
			}
			if strings.Join(keys, " ") != strings.Join(tt.wantKeys, " ") {
				t.Errorf("Validate: %v; want errors for %q", err, tt.wantKeys)
			}
		})
	}
}

package server

import (
	"strings"
	"testing"

	"github.com/selmem/selmem/internal/egress"
)

func TestConfig_Validate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		want   string // substring of the error; "" for valid
	}{
		{"default", func(*Config) {}, ""},
		{"no home", func(c *Config) { c.Home = "" }, "home:"},
		{"log level", func(c *Config) { c.Log.Level = "loud" }, "log.level:"},
		{"durability", func(c *Config) { c.Durability = "eventually" }, "durability:"},
		{"durability os", func(c *Config) { c.Durability = "os" }, ""},
		{"file cap", func(c *Config) { c.Limits.MaxFileBytes = 0 }, "limits.max_file_bytes:"},
		{"workspace cap", func(c *Config) { c.Limits.MaxWorkspaceBytes = 10 }, "limits.max_workspace_bytes:"},
		{"backend", func(c *Config) { c.Index.Backend = "mysql" }, "index.backend:"},
		{"postgres dsn", func(c *Config) { c.Index.Backend = "postgres" }, "index.dsn:"},
		{"postgres ok", func(c *Config) { c.Index.Backend = "postgres"; c.Index.DSNEnv = "DATABASE_URL" }, ""},
		{"build memory", func(c *Config) {
			c.Index = IndexConfig{Backend: "postgres", DSNEnv: "DATABASE_URL", PoolSize: 4, EfSearch: 100, BuildMemory: "lots"}
		}, "index.build_memory:"},
		{"build memory ok", func(c *Config) {
			c.Index = IndexConfig{Backend: "postgres", DSNEnv: "DATABASE_URL", PoolSize: 4, EfSearch: 100, BuildMemory: "512MB"}
		}, ""},
		{"embedder kind", func(c *Config) { c.Embedder.Kind = "magic" }, "embedder.kind:"},
		{"openai fields", func(c *Config) { c.Embedder.Kind = "openai" }, "embedder.base_url:"},
		{"openai dim", func(c *Config) {
			c.Embedder = EmbedderConfig{Kind: "openai", BaseURL: "http://localhost:11434", Model: "m"}
		}, "embedder.dim:"},
		{"data roots relative", func(c *Config) { c.Profile.DataRoots = []string{"/srv/data", "data"} }, "profile.data_roots:"},
		{"data roots ok", func(c *Config) { c.Profile.DataRoots = []string{"/srv/data"} }, ""},
		{"allowed hosts", func(c *Config) { c.Profile.AllowedHosts = []string{"10.0.0.0/8", "http://x/"} }, "profile.allowed_hosts[1]:"},
		{"credential hosts", func(c *Config) {
			c.Profile.Credentials = map[string]egress.Credential{"sales": {Env: "SALES_TOKEN"}}
		}, "profile.credentials.sales.hosts:"},
		{"connection driver", func(c *Config) {
			c.Profile.Connections = map[string]egress.Connection{"wh": {Driver: "oracle"}}
		}, "profile.connections.wh.driver:"},
		{"egress ok", func(c *Config) {
			c.Profile.AllowedHosts = []string{"db.internal:5432"}
			c.Profile.Credentials = map[string]egress.Credential{"sales": {Env: "SALES_TOKEN", Hosts: []string{"api.example.com"}}}
			c.Profile.Connections = map[string]egress.Connection{"wh": {Driver: "postgres", DSNEnv: "WH_DSN"}}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			c.Home = "/tmp/selmem"
			tt.change(&c)
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate: %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate: %v, want an error naming %q", err, tt.want)
			}
		})
	}
}

func TestRedactDSN(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"postgres://app:s3cret@db:5432/selmem?sslmode=disable", "postgres://app:REDACTED@db:5432/selmem?sslmode=disable"},
		{"postgres://app@db/selmem", "postgres://app@db/selmem"},
		{"host=db user=app password=s3cret dbname=selmem", "host=db user=app password=REDACTED dbname=selmem"},
		{"host=db password='s3 cret' dbname=selmem", "host=db password=REDACTED dbname=selmem"},
		{"password=s3cret", "password=REDACTED"},
	}
	for _, tt := range tests {
		if got := RedactDSN(tt.in); got != tt.want {
			t.Errorf("RedactDSN(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

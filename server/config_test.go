package server

import (
	"strings"
	"testing"
	"time"

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
		{"log format", func(c *Config) { c.Log.Format = "xml" }, "log.format:"},
		{"log format json", func(c *Config) { c.Log.Format = LogFormatJSON }, ""},
		{"tools subset", func(c *Config) { c.Tools.Subset = "few" }, "tools.subset:"},
		{"tools subset memory", func(c *Config) { c.Tools.Subset = "memory" }, ""},
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
		{"schema", func(c *Config) {
			c.Index = IndexConfig{Backend: "postgres", DSNEnv: "DATABASE_URL", PoolSize: 4, EfSearch: 100, Schema: "Team-A"}
		}, "index.schema:"},
		{"schema injection", func(c *Config) {
			c.Index = IndexConfig{Backend: "postgres", DSNEnv: "DATABASE_URL", PoolSize: 4, EfSearch: 100, Schema: `a"; drop schema public; --`}
		}, "index.schema:"},
		{"schema ok", func(c *Config) {
			c.Index = IndexConfig{Backend: "postgres", DSNEnv: "DATABASE_URL", PoolSize: 4, EfSearch: 100, Schema: "team_analytics"}
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
		{"body cap", func(c *Config) { c.HTTP.MaxBodyBytes = 0 }, "http.max_body_bytes:"},
		{"header timeout", func(c *Config) { c.HTTP.ReadHeaderTimeout = 0 }, "http.read_header_timeout:"},
		{"read timeout", func(c *Config) { c.HTTP.ReadTimeout = -time.Second }, "http.read_timeout:"},
		{"write timeout", func(c *Config) { c.HTTP.WriteTimeout = 0 }, "http.write_timeout:"},
		{"idle timeout", func(c *Config) { c.HTTP.IdleTimeout = 0 }, "http.idle_timeout:"},
		{"session cap", func(c *Config) { c.HTTP.MaxSessions = 0 }, "http.max_sessions:"},
		{"principal session cap", func(c *Config) { c.HTTP.MaxSessionsPerPrincipal = 0 }, "http.max_sessions_per_principal:"},
		{"request cap", func(c *Config) { c.HTTP.MaxRequests = 0 }, "http.max_requests:"},
		{"principal request cap", func(c *Config) { c.HTTP.MaxRequestsPerPrincipal = -1 }, "http.max_requests_per_principal:"},
		{"session ttl", func(c *Config) { c.HTTP.SessionIdleTTL = -time.Minute }, "http.session_idle_ttl:"},
		{"session ttl off", func(c *Config) { c.HTTP.SessionIdleTTL = 0 }, ""},
		{"origin path", func(c *Config) { c.HTTP.AllowedOrigins = []string{"https://example.com/app"} }, "http.allowed_origins:"},
		{"origin no scheme", func(c *Config) { c.HTTP.AllowedOrigins = []string{"example.com"} }, "http.allowed_origins:"},
		{"origins ok", func(c *Config) {
			c.HTTP.AllowedOrigins = []string{"*", "https://example.com", "http://[::1]:*", "http://localhost:8080"}
		}, ""},
		{"no origins", func(c *Config) { c.HTTP.AllowedOrigins = nil }, ""},
		{"token ok", func(c *Config) {
			c.HTTP.Auth.Tokens = map[string]StaticToken{"a": {SHA256: HashToken("x"), User: "alice", Groups: []string{"g"}, Kind: "service"}}
			c.HTTP.Auth.Admins = []string{"alice", "group:ops"}
		}, ""},
		{"token hash", func(c *Config) {
			c.HTTP.Auth.Tokens = map[string]StaticToken{"a": {SHA256: "smm_plaintext", User: "alice"}}
		}, "http.auth.tokens.a.sha256:"},
		{"token hash upper case", func(c *Config) {
			c.HTTP.Auth.Tokens = map[string]StaticToken{"a": {SHA256: strings.ToUpper(HashToken("x")), User: "alice"}}
		}, "http.auth.tokens.a.sha256:"},
		{"token twice", func(c *Config) {
			c.HTTP.Auth.Tokens = map[string]StaticToken{"a": {SHA256: HashToken("x"), User: "alice"}, "b": {SHA256: HashToken("x"), User: "bob"}}
		}, "http.auth.tokens.b.sha256: is the same token as http.auth.tokens.a"},
		{"token user", func(c *Config) {
			c.HTTP.Auth.Tokens = map[string]StaticToken{"a": {SHA256: HashToken("x"), User: "../bob"}}
		}, "http.auth.tokens.a.user:"},
		{"token kind", func(c *Config) {
			c.HTTP.Auth.Tokens = map[string]StaticToken{"a": {SHA256: HashToken("x"), User: "a", Kind: "robot"}}
		}, "http.auth.tokens.a.kind:"},
		{"token group", func(c *Config) {
			c.HTTP.Auth.Tokens = map[string]StaticToken{"a": {SHA256: HashToken("x"), User: "a", Groups: []string{"group:ops"}}}
		}, "http.auth.tokens.a.groups:"},
		{"admins", func(c *Config) { c.HTTP.Auth.Admins = []string{"group:"} }, "http.auth.admins:"},
		{"resource", func(c *Config) { c.HTTP.Auth.Resource = "/mcp" }, "http.auth.resource:"},
		{"oidc ok", func(c *Config) {
			c.HTTP.Auth.OIDC.Issuer = "https://idp.example.com"
			c.HTTP.Auth.OIDC.Audience = "selmem"
		}, ""},
		{"oidc http on loopback", func(c *Config) {
			c.HTTP.Auth.OIDC.Issuer = "http://127.0.0.1:5556/dex"
			c.HTTP.Auth.OIDC.Audience = "selmem"
		}, ""},
		{"oidc http", func(c *Config) {
			c.HTTP.Auth.OIDC.Issuer = "http://idp.example.com"
			c.HTTP.Auth.OIDC.Audience = "selmem"
		}, "http.auth.oidc.issuer:"},
		{"oidc audience", func(c *Config) { c.HTTP.Auth.OIDC.Issuer = "https://idp.example.com" }, "http.auth.oidc.audience:"},
		{"oidc skew", func(c *Config) {
			c.HTTP.Auth.OIDC = OIDCConfig{Issuer: "https://idp.example.com", Audience: "a", ClockSkew: -time.Second, UserClaim: "sub", GroupsClaim: "groups", Timeout: time.Second}
		}, "http.auth.oidc.clock_skew:"},
		{"oidc user claim", func(c *Config) {
			c.HTTP.Auth.OIDC = OIDCConfig{Issuer: "https://idp.example.com", Audience: "a", GroupsClaim: "groups", Timeout: time.Second}
		}, "http.auth.oidc.user_claim:"},
		{"oidc timeout", func(c *Config) {
			c.HTTP.Auth.OIDC = OIDCConfig{Issuer: "https://idp.example.com", Audience: "a", UserClaim: "sub", GroupsClaim: "groups"}
		}, "http.auth.oidc.timeout:"},
		{"insecure with auth", func(c *Config) {
			c.HTTP.InsecureNoAuth = true
			c.HTTP.Auth.Tokens = map[string]StaticToken{"a": {SHA256: HashToken("x"), User: "alice"}}
		}, "http.insecure_no_auth:"},
		{"insecure alone", func(c *Config) { c.HTTP.InsecureNoAuth = true }, ""},
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

func TestOriginPolicy(t *testing.T) {
	tests := []struct {
		patterns []string
		origin   string
		want     bool
	}{
		{DefaultAllowedOrigins, "", true},
		{DefaultAllowedOrigins, "http://localhost:3000", true},
		{DefaultAllowedOrigins, "https://localhost", true},
		{DefaultAllowedOrigins, "http://127.0.0.1:1", true},
		{DefaultAllowedOrigins, "http://[::1]:8080", true},
		{DefaultAllowedOrigins, "http://[0:0:0:0:0:0:0:1]:8080", false}, // browsers send the short form
		{DefaultAllowedOrigins, "http://127.0.0.2", false},
		{DefaultAllowedOrigins, "file://localhost", false},
		{DefaultAllowedOrigins, "null", false},
		{DefaultAllowedOrigins, "http://localhost@evil.example", false},
		{DefaultAllowedOrigins, "https://evil.example", false},
		{nil, "", true},
		{nil, "http://localhost:3000", false},
		{[]string{"*"}, "https://anything.example", true},
		{[]string{"https://app.example.com"}, "https://app.example.com", true},
		{[]string{"https://app.example.com"}, "https://app.example.com:443", false},
		{[]string{"https://app.example.com"}, "http://app.example.com", false},
		{[]string{"https://App.Example.com/"}, "https://app.example.COM", true},
	}
	for _, tt := range tests {
		pol, err := newOriginPolicy(tt.patterns)
		if err != nil {
			t.Fatal(err)
		}
		if got := pol.allowed(tt.origin); got != tt.want {
			t.Errorf("%v allows %q: %v, want %v", tt.patterns, tt.origin, got, tt.want)
		}
	}
}

// TestConfig_RedactedTokens: the effective config never shows token
// hashes, and redacting does not change the config it was made from.
func TestConfig_RedactedTokens(t *testing.T) {
	c := DefaultConfig()
	c.HTTP.Auth.Tokens = map[string]StaticToken{"a": {SHA256: HashToken("smm_x"), User: "alice"}}
	r := c.Redacted()
	if got := r.HTTP.Auth.Tokens["a"]; got.SHA256 != "REDACTED" || got.User != "alice" {
		t.Errorf("redacted entry %+v", got)
	}
	if c.HTTP.Auth.Tokens["a"].SHA256 != HashToken("smm_x") {
		t.Error("Redacted changed the original")
	}
}

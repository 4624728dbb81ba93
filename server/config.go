package server

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/selmem/selmem/internal/egress"
	"github.com/selmem/selmem/internal/mcpsource"
	"github.com/selmem/selmem/memstore/pgindex"
	"github.com/selmem/selmem/tools"
)

// Config is selmem's effective configuration. cmd fills it from the config
// file, SELMEM_* environment variables and flags; everything below cmd takes
// plain values from it.
type Config struct {
	Home   string `mapstructure:"home" yaml:"home"`     // $SELMEM_HOME; default $XDG_DATA_HOME/selmem
	Author string `mapstructure:"author" yaml:"author"` // default commit author for local writes
	// Durability is how far a write reaches before it is acknowledged:
	// fsync (default: flushed to stable storage, survives a power cut) or
	// os (handed to the operating system: survives the process being
	// killed, not a power cut; for tests and throwaway homes).
	Durability string `mapstructure:"durability" yaml:"durability"`
	// ProposalThreshold is the confidence below which a write by someone
	// who is not an owner of the workspace becomes a proposal for an owner
	// to approve; 0 turns the confidence rule off (viewers' and inferred
	// writes still become proposals).
	ProposalThreshold float64        `mapstructure:"proposal_threshold" yaml:"proposal_threshold"`
	Log               LogConfig      `mapstructure:"log" yaml:"log"`
	Limits            LimitsConfig   `mapstructure:"limits" yaml:"limits"`
	Index             IndexConfig    `mapstructure:"index" yaml:"index"`
	Embedder          EmbedderConfig `mapstructure:"embedder" yaml:"embedder"`
	HTTP              HTTPConfig     `mapstructure:"http" yaml:"http"`
	Profile           ProfileConfig  `mapstructure:"profile" yaml:"profile"`
	Refresh           RefreshConfig  `mapstructure:"refresh" yaml:"refresh"`
	Tools             ToolsConfig    `mapstructure:"tools" yaml:"tools"`
	Remote            RemoteConfig   `mapstructure:"remote" yaml:"remote"`
	Health            HealthConfig   `mapstructure:"health" yaml:"health"`
}

// RemoteConfig makes a bare git repository on a git server the authority
// over the memory, so that several selmem replicas serve one memory: each
// write is pushed with compare-and-swap before it is acknowledged, and
// replicas fetch on start, on a change notification (Postgres NOTIFY with
// index.backend postgres) and every Poll.
type RemoteConfig struct {
	URL    string        `mapstructure:"url" yaml:"url"`       // http(s)://, git:// or file:// URL of the bare repository; "" for none
	Branch string        `mapstructure:"branch" yaml:"branch"` // the branch replicas share
	Poll   time.Duration `mapstructure:"poll" yaml:"poll"`     // fetch interval without notifications
}

// HealthConfig sets when /healthz reports the server unhealthy.
type HealthConfig struct {
	// MaxLag is how far behind the remote (time since it was last
	// reached) or an index (age of the oldest commit it lacks) may be
	// before /healthz answers 503.
	MaxLag time.Duration `mapstructure:"max_lag" yaml:"max_lag"`
}

// ToolsConfig selects the MCP tools served.
type ToolsConfig struct {
	// Subset is all (default) or memory: only the six file commands of
	// Anthropic's memory tool, for hosts that want few tools.
	Subset string `mapstructure:"subset" yaml:"subset"`
}

// RefreshConfig configures artifact refreshes. Connectors read what the
// profile settings allow: profile.data_roots, allowed_hosts, credentials
// and connections.
type RefreshConfig struct {
	// KeepSnapshots is how many data snapshots are kept per artifact
	// (under $SELMEM_HOME/data); a binding reverted to an older one is
	// served while it is kept.
	KeepSnapshots int `mapstructure:"keep_snapshots" yaml:"keep_snapshots"`
	// MaxSnapshotBytes caps the data one refresh loads.
	MaxSnapshotBytes int64 `mapstructure:"max_snapshot_bytes" yaml:"max_snapshot_bytes"`
	// MaxViewBytes caps an artifact's MCP Apps view, its page with its
	// data; beyond it the view shows the aggregate the artifact's binding
	// declares (view.aggregate), or says the data is too large and links
	// to the artifact served over HTTP.
	MaxViewBytes int64 `mapstructure:"max_view_bytes" yaml:"max_view_bytes"`
	// ArtifactsURL is where users open artifacts over HTTP, e.g.
	// https://selmem.example.com/artifacts/; "" derives it from http.addr.
	ArtifactsURL string `mapstructure:"artifacts_url" yaml:"artifacts_url"`
	// Schedule runs each binding's cron schedule while selmem serve runs.
	Schedule bool `mapstructure:"schedule" yaml:"schedule"`
	// Watch refreshes artifacts bound to a file connector when the file
	// changes, once it has been quiet for WatchDebounce.
	Watch         bool          `mapstructure:"watch" yaml:"watch"`
	WatchDebounce time.Duration `mapstructure:"watch_debounce" yaml:"watch_debounce"`
	// MCPServers are the MCP servers an mcp connector may name, each
	// started by command or reached by URL (through the profile's
	// outbound policy); env SELMEM_REFRESH_MCP_SERVERS, JSON. A
	// connector in memory names one; it never chooses a command or URL.
	MCPServers map[string]mcpsource.Server `mapstructure:"mcp_servers" yaml:"mcp_servers"`
}

// ProfileConfig configures the profile_source tool.
type ProfileConfig struct {
	// DataRoots are the directories whose files (and SQLite databases)
	// profile_source may read, as absolute paths; env
	// SELMEM_PROFILE_DATA_ROOTS, comma-separated. Empty: no file can be
	// profiled through MCP. The command line reads any file its user names.
	DataRoots []string `mapstructure:"data_roots" yaml:"data_roots"`
	// AllowedHosts lifts the outbound address check (loopback, private,
	// link-local, metadata, … are refused) for the targets it names:
	// "host", "host:port", an IP address (with or without a port) or a
	// CIDR prefix; env SELMEM_PROFILE_ALLOWED_HOSTS, comma-separated.
	AllowedHosts []string `mapstructure:"allowed_hosts" yaml:"allowed_hosts"`
	// Credentials are the secrets profile_source may send, by name, each
	// to the hosts it is bound to; env SELMEM_PROFILE_CREDENTIALS, JSON.
	Credentials map[string]egress.Credential `mapstructure:"credentials" yaml:"credentials"`
	// Connections are the databases profile_source may query, by name;
	// env SELMEM_PROFILE_CONNECTIONS, JSON.
	Connections map[string]egress.Connection `mapstructure:"connections" yaml:"connections"`
}

// Egress is the outbound policy configuration of the profile settings.
func (p ProfileConfig) Egress() egress.Config {
	return egress.Config{Key: "profile", AllowedHosts: p.AllowedHosts, Credentials: p.Credentials, Connections: p.Connections}
}

// HTTPConfig configures `selmem serve` over streamable HTTP.
type HTTPConfig struct {
	Addr            string        `mapstructure:"addr" yaml:"addr"`                         // listen address; "" serves stdio
	ShutdownTimeout time.Duration `mapstructure:"shutdown_timeout" yaml:"shutdown_timeout"` // grace period for in-flight requests
	// MaxBodyBytes caps a request body; a larger one is answered 413
	// before it is read.
	MaxBodyBytes int64 `mapstructure:"max_body_bytes" yaml:"max_body_bytes"`
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout time.Duration `mapstructure:"read_header_timeout" yaml:"read_header_timeout"`
	// ReadTimeout bounds reading a POST body once its headers are in; a
	// client that dribbles its body is disconnected. GET streams send no
	// body and are not affected.
	ReadTimeout time.Duration `mapstructure:"read_timeout" yaml:"read_timeout"`
	// WriteTimeout bounds each single write of a response (a JSON answer
	// or one event of a stream): a client that stops reading is
	// disconnected, while a long-lived event stream or a slow tool call
	// is not.
	WriteTimeout time.Duration `mapstructure:"write_timeout" yaml:"write_timeout"`
	// IdleTimeout closes a keep-alive connection idle between requests.
	IdleTimeout time.Duration `mapstructure:"idle_timeout" yaml:"idle_timeout"`
	// MaxSessions caps the open MCP sessions; initialize beyond it is
	// answered 503.
	MaxSessions int `mapstructure:"max_sessions" yaml:"max_sessions"`
	// MaxSessionsPerPrincipal caps, likewise, the sessions one principal
	// has open; it applies only with http.auth (without it every session
	// is the local owner's).
	MaxSessionsPerPrincipal int `mapstructure:"max_sessions_per_principal" yaml:"max_sessions_per_principal"`
	// MaxRequests caps the POST requests handled at once, from the
	// moment their body starts to be read until their answer is written;
	// one beyond it is answered 503.
	MaxRequests int `mapstructure:"max_requests" yaml:"max_requests"`
	// MaxRequestsPerPrincipal caps, likewise, one principal's requests;
	// it applies only with http.auth (without it every request is the
	// local owner's).
	MaxRequestsPerPrincipal int `mapstructure:"max_requests_per_principal" yaml:"max_requests_per_principal"`
	// SessionIdleTTL ends a session that has sent no request and holds no
	// open event stream for this long; 0 keeps idle sessions until the
	// client deletes them.
	SessionIdleTTL time.Duration `mapstructure:"session_idle_ttl" yaml:"session_idle_ttl"`
	// AllowedOrigins are the browser origins accepted in an Origin header
	// (scheme://host or scheme://host:port; a port of * matches any port;
	// "*" accepts every origin). A request without Origin is not from a
	// browser page and is accepted. Env SELMEM_HTTP_ALLOWED_ORIGINS,
	// comma-separated.
	AllowedOrigins []string `mapstructure:"allowed_origins" yaml:"allowed_origins"`
	// Auth authenticates every request but /healthz and /.well-known/*:
	// static bearer tokens, OIDC access tokens, or both. Without it, HTTP
	// serves only loopback addresses.
	Auth AuthConfig `mapstructure:"auth" yaml:"auth"`
	// InsecureNoAuth serves a non-loopback address without
	// authentication (flag --insecure-no-auth): anyone who reaches the port
	// acts as the local owner. Logged as a warning at every start.
	InsecureNoAuth bool `mapstructure:"insecure_no_auth" yaml:"insecure_no_auth"`
	// Metrics serves Prometheus metrics at /metrics (PathMetrics).
	Metrics bool `mapstructure:"metrics" yaml:"metrics"`
}

// DefaultAllowedOrigins are the origins of pages served from this machine.
var DefaultAllowedOrigins = []string{
	"http://localhost:*", "https://localhost:*",
	"http://127.0.0.1:*", "https://127.0.0.1:*",
	"http://[::1]:*", "https://[::1]:*",
}

// Log formats, for LogConfig.Format.
const (
	LogFormatText = "text" // slog's key=value lines
	LogFormatJSON = "json" // one JSON object a line, for log collectors
)

// LogConfig configures the slog logger (always stderr or a file, never stdout).
type LogConfig struct {
	Level  string `mapstructure:"level" yaml:"level"`   // debug, info, warn, error
	Format string `mapstructure:"format" yaml:"format"` // LogFormatText (default) or LogFormatJSON
	File   string `mapstructure:"file" yaml:"file"`     // "" for stderr
}

// LimitsConfig bounds what the write gate accepts.
type LimitsConfig struct {
	MaxFileBytes      int64 `mapstructure:"max_file_bytes" yaml:"max_file_bytes"`
	MaxWorkspaceBytes int64 `mapstructure:"max_workspace_bytes" yaml:"max_workspace_bytes"`
}

// IndexConfig selects and configures the search index backend.
type IndexConfig struct {
	Backend  string `mapstructure:"backend" yaml:"backend"`     // sqlite (default) or postgres
	DSN      string `mapstructure:"dsn" yaml:"dsn"`             // postgres connection string
	DSNEnv   string `mapstructure:"dsn_env" yaml:"dsn_env"`     // or the env var holding it
	PoolSize int    `mapstructure:"pool_size" yaml:"pool_size"` // postgres pool size
	EfSearch int    `mapstructure:"ef_search" yaml:"ef_search"` // pgvector hnsw.ef_search
	// BuildMemory is maintenance_work_mem while a full reindex builds the
	// GIN and HNSW indexes ("1GB"; "" keeps the server's setting).
	BuildMemory string `mapstructure:"build_memory" yaml:"build_memory"`
	// Schema is the Postgres schema holding this memory's index; "" means
	// selmem_ and 16 hex digits of the memory's identity, so that memories
	// sharing a database keep apart.
	Schema string `mapstructure:"schema" yaml:"schema"`
}

// EmbedderConfig selects the embedder.
type EmbedderConfig struct {
	Kind      string        `mapstructure:"kind" yaml:"kind"`               // builtin (default) or openai
	BaseURL   string        `mapstructure:"base_url" yaml:"base_url"`       // openai: e.g. http://localhost:11434
	Model     string        `mapstructure:"model" yaml:"model"`             // openai: model name
	Dim       int           `mapstructure:"dim" yaml:"dim"`                 // openai: vector length
	APIKeyEnv string        `mapstructure:"api_key_env" yaml:"api_key_env"` // openai: env var holding the API key
	BatchSize int           `mapstructure:"batch_size" yaml:"batch_size"`
	Timeout   time.Duration `mapstructure:"timeout" yaml:"timeout"`
}

// memorySize matches a Postgres memory setting with its unit.
var memorySize = regexp.MustCompile(`^[1-9][0-9]*(kB|MB|GB|TB)$`)

// validBranch matches the branch names remote.branch accepts: one plain
// path element, no ref syntax.
var validBranch = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// checkRemoteURL accepts the URL forms remote.url supports.
func checkRemoteURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("not a URL")
	}
	switch u.Scheme {
	case "http", "https", "git":
		if u.Host == "" {
			return fmt.Errorf("%s URL without a host", u.Scheme)
		}
	case "file":
		if u.Path == "" {
			return errors.New("file URL without a path")
		}
	default:
		return fmt.Errorf("scheme %q is not one of http, https, git, file", u.Scheme)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return errors.New("a query or fragment is not part of a repository URL")
	}
	return nil
}

// RedactURL returns raw with any password replaced, for logs and status.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	return u.Redacted()
}

// DefaultConfig returns the configuration used when nothing is set: the
// embedded SQLite index and the built-in embedder, no database to set up.
func DefaultConfig() Config {
	return Config{
		Author:            "selmem",
		Durability:        "fsync",
		ProposalThreshold: 0.5,
		Log:               LogConfig{Level: "info", Format: LogFormatText},
		Limits:            LimitsConfig{MaxFileBytes: 256 << 10, MaxWorkspaceBytes: 8 << 20},
		Index:             IndexConfig{Backend: "sqlite", PoolSize: 8, EfSearch: 100, BuildMemory: "1GB"},
		Embedder:          EmbedderConfig{Kind: "builtin", BatchSize: 64, Timeout: 30 * time.Second},
		HTTP: HTTPConfig{
			ShutdownTimeout:         10 * time.Second,
			MaxBodyBytes:            4 << 20,
			ReadHeaderTimeout:       10 * time.Second,
			ReadTimeout:             30 * time.Second,
			WriteTimeout:            30 * time.Second,
			IdleTimeout:             2 * time.Minute,
			MaxSessions:             256,
			MaxSessionsPerPrincipal: 64,
			MaxRequests:             128,
			MaxRequestsPerPrincipal: 32,
			SessionIdleTTL:          30 * time.Minute,
			AllowedOrigins:          slices.Clone(DefaultAllowedOrigins),
			Auth:                    defaultAuthConfig(),
			Metrics:                 true,
		},
		Tools:   ToolsConfig{Subset: tools.SubsetAll},
		Remote:  RemoteConfig{Branch: "main", Poll: 30 * time.Second},
		Health:  HealthConfig{MaxLag: 2 * time.Minute},
		Refresh: RefreshConfig{KeepSnapshots: 10, MaxSnapshotBytes: 512 << 20, MaxViewBytes: 2 << 20, Schedule: true, Watch: true, WatchDebounce: 500 * time.Millisecond},
	}
}

// Validate reports the first field that is wrong, by its config key.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if c.Home == "" {
		bad("home", "must be set (SELMEM_HOME or --home)")
	}
	switch c.Durability {
	case "fsync", "os":
	default:
		bad("durability", "%q is not one of fsync, os", c.Durability)
	}
	if c.ProposalThreshold < 0 || c.ProposalThreshold > 1 {
		bad("proposal_threshold", "%v is not between 0 and 1", c.ProposalThreshold)
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "%q is not one of debug, info, warn, error", c.Log.Level)
	}
	switch c.Tools.Subset {
	case tools.SubsetAll, tools.SubsetMemory:
	default:
		bad("tools.subset", "%q is not one of all, memory", c.Tools.Subset)
	}
	switch c.Log.Format {
	case LogFormatText, LogFormatJSON:
	default:
		bad("log.format", "%q is not one of text, json", c.Log.Format)
	}
	if c.Limits.MaxFileBytes <= 0 {
		bad("limits.max_file_bytes", "must be > 0")
	}
	if c.Limits.MaxWorkspaceBytes < c.Limits.MaxFileBytes {
		bad("limits.max_workspace_bytes", "must be >= limits.max_file_bytes")
	}
	switch c.Index.Backend {
	case "sqlite":
	case "postgres":
		if c.Index.DSN == "" && c.Index.DSNEnv == "" {
			bad("index.dsn", "postgres needs index.dsn or index.dsn_env")
		}
		if c.Index.PoolSize <= 0 {
			bad("index.pool_size", "must be > 0")
		}
		if c.Index.EfSearch <= 0 {
			bad("index.ef_search", "must be > 0")
		}
		if m := c.Index.BuildMemory; m != "" && !memorySize.MatchString(m) {
			bad("index.build_memory", "%q is not a size like 512MB or 2GB", m)
		}
		if sc := c.Index.Schema; sc != "" {
			if err := pgindex.CheckSchema(sc); err != nil {
				bad("index.schema", "%v", err)
			}
		}
	default:
		bad("index.backend", "%q is not one of sqlite, postgres", c.Index.Backend)
	}
	if c.Remote.URL != "" {
		if err := checkRemoteURL(c.Remote.URL); err != nil {
			bad("remote.url", "%v", err)
		}
		if !validBranch.MatchString(c.Remote.Branch) {
			bad("remote.branch", "%q is not a plain branch name", c.Remote.Branch)
		}
		if c.Remote.Poll < time.Second {
			bad("remote.poll", "must be at least 1s")
		}
	}
	if c.Health.MaxLag <= 0 {
		bad("health.max_lag", "must be > 0")
	}
	switch c.Embedder.Kind {
	case "builtin":
	case "openai":
		if c.Embedder.BaseURL == "" {
			bad("embedder.base_url", "must be set for the openai embedder")
		}
		if c.Embedder.Model == "" {
			bad("embedder.model", "must be set for the openai embedder")
		}
		if c.Embedder.Dim <= 0 {
			bad("embedder.dim", "must be > 0 for the openai embedder")
		}
	default:
		bad("embedder.kind", "%q is not one of builtin, openai", c.Embedder.Kind)
	}
	if c.HTTP.ShutdownTimeout <= 0 {
		bad("http.shutdown_timeout", "must be > 0")
	}
	if c.HTTP.MaxBodyBytes <= 0 {
		bad("http.max_body_bytes", "must be > 0")
	}
	for _, f := range []struct {
		key string
		d   time.Duration
	}{
		{"http.read_header_timeout", c.HTTP.ReadHeaderTimeout},
		{"http.read_timeout", c.HTTP.ReadTimeout},
		{"http.write_timeout", c.HTTP.WriteTimeout},
		{"http.idle_timeout", c.HTTP.IdleTimeout},
	} {
		if f.d <= 0 {
			bad(f.key, "must be > 0")
		}
	}
	for _, f := range []struct {
		key string
		n   int
	}{
		{"http.max_sessions", c.HTTP.MaxSessions},
		{"http.max_sessions_per_principal", c.HTTP.MaxSessionsPerPrincipal},
		{"http.max_requests", c.HTTP.MaxRequests},
		{"http.max_requests_per_principal", c.HTTP.MaxRequestsPerPrincipal},
	} {
		if f.n <= 0 {
			bad(f.key, "must be > 0")
		}
	}
	if c.HTTP.SessionIdleTTL < 0 {
		bad("http.session_idle_ttl", "must be >= 0 (0 keeps idle sessions)")
	}
	for _, o := range c.HTTP.AllowedOrigins {
		if _, err := parseOriginPattern(o); err != nil {
			bad("http.allowed_origins", "%v", err)
		}
	}
	c.HTTP.Auth.validate(bad)
	if c.HTTP.InsecureNoAuth && c.HTTP.Auth.Enabled() {
		bad("http.insecure_no_auth", "must be false when http.auth is configured")
	}
	for _, r := range c.Profile.DataRoots {
		if !filepath.IsAbs(r) {
			bad("profile.data_roots", "%q is not an absolute path", r)
		}
	}
	if err := c.Profile.Egress().Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Refresh.KeepSnapshots <= 0 {
		bad("refresh.keep_snapshots", "must be > 0")
	}
	if c.Refresh.MaxViewBytes <= 0 {
		bad("refresh.max_view_bytes", "must be > 0")
	}
	if c.Refresh.MaxSnapshotBytes <= 0 {
		bad("refresh.max_snapshot_bytes", "must be > 0")
	}
	if c.Refresh.WatchDebounce <= 0 {
		bad("refresh.watch_debounce", "must be > 0")
	}
	for _, name := range slices.Sorted(maps.Keys(c.Refresh.MCPServers)) {
		if err := c.Refresh.MCPServers[name].Validate("refresh.mcp_servers." + name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Redacted returns a copy safe to print: the password in a DSN and the
// token hashes are replaced. API keys are never in the config, only the
// names of env vars holding them.
func (c Config) Redacted() Config {
	c.Index.DSN = RedactDSN(c.Index.DSN)
	c.HTTP.Auth = c.HTTP.Auth.redacted()
	return c
}

// RedactDSN hides the password of a postgres URL or key=value DSN.
func RedactDSN(dsn string) string {
	if dsn == "" {
		return ""
	}
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "REDACTED")
		}
		return u.String()
	}
	return redactKV(dsn)
}

// redactKV replaces password=... in a libpq key/value string.
func redactKV(dsn string) string {
	out := []byte{}
	i := 0
	for i < len(dsn) {
		j := i
		for j < len(dsn) && dsn[j] == ' ' {
			j++
		}
		k := j
		for k < len(dsn) && dsn[k] != '=' && dsn[k] != ' ' {
			k++
		}
		key := dsn[j:k]
		end := k
		if k < len(dsn) && dsn[k] == '=' {
			end = k + 1
			if end < len(dsn) && dsn[end] == '\'' {
				end++
				for end < len(dsn) && dsn[end] != '\'' {
					if dsn[end] == '\\' {
						end++
					}
					end++
				}
				end++
			} else {
				for end < len(dsn) && dsn[end] != ' ' {
					end++
				}
			}
		}
		end = min(end, len(dsn))
		if key == "password" {
			out = append(out, dsn[i:k]...)
			out = append(out, "=REDACTED"...)
		} else {
			out = append(out, dsn[i:end]...)
		}
		if end == i {
			end++
			out = append(out, dsn[i:end]...)
		}
		i = end
	}
	return string(out)
}

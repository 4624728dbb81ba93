package egress

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Config is the outbound policy as configured. The zero Config denies every
// non-public address and defines no credential and no connection.
type Config struct {
	// AllowedHosts lifts the address check for the targets it names. An
	// entry is a host name ("db.internal": any of its addresses, any
	// port), a host name with a port ("localhost:8080"), an IP address
	// ("10.0.0.5", "::1"), an IP address with a port ("127.0.0.1:9000",
	// "[::1]:9000") or a CIDR prefix ("10.0.0.0/8"). Public addresses need
	// no entry: the list does not restrict them.
	AllowedHosts []string
	// Credentials are the secrets a caller may name, each bound to hosts.
	Credentials map[string]Credential
	// Connections are the databases a caller may name.
	Connections map[string]Connection
	// Key is the configuration key the settings live under (e.g.
	// "profile"); errors and hints name settings as Key.allowed_hosts.
	Key string
	// LookupEnv reads the environment variables credentials and
	// connections name; nil is os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// Credential is a secret, held in an environment variable, that is sent as
// a request header to the hosts it is bound to and to no other.
type Credential struct {
	// Env is the environment variable holding the secret.
	Env string `mapstructure:"env" yaml:"env" json:"env"`
	// Hosts are the hosts the credential is sent to: "api.example.com"
	// (any port) or "api.example.com:8443". A request or redirect to any
	// other host goes without it.
	Hosts []string `mapstructure:"hosts" yaml:"hosts" json:"hosts"`
	// Header is the request header carrying it; default Authorization.
	Header string `mapstructure:"header" yaml:"header,omitempty" json:"header,omitempty"`
	// Prefix is put before the secret, e.g. "Bearer ".
	Prefix string `mapstructure:"prefix" yaml:"prefix,omitempty" json:"prefix,omitempty"`
	// AllowHTTP also sends the credential over plain http; by default it
	// is sent over https only.
	AllowHTTP bool `mapstructure:"allow_http" yaml:"allow_http,omitempty" json:"allow_http,omitempty"`
}

// Connection is a database a caller names instead of giving its address.
type Connection struct {
	// Driver is postgres or sqlite.
	Driver string `mapstructure:"driver" yaml:"driver" json:"driver"`
	// DSNEnv (postgres) is the environment variable holding the
	// connection string. The connection uses that string alone: PG*
	// environment variables, ~/.pgpass and service files are not read.
	DSNEnv string `mapstructure:"dsn_env" yaml:"dsn_env,omitempty" json:"dsn_env,omitempty"`
	// Path (sqlite) is the absolute path of the database file; callers
	// check it against their data roots.
	Path string `mapstructure:"path" yaml:"path,omitempty" json:"path,omitempty"`
}

// Drivers of a Connection.
const (
	DriverPostgres = "postgres"
	DriverSQLite   = "sqlite"
)

// DefaultHeader is the header a Credential without Header is sent in.
const DefaultHeader = "Authorization"

// namePattern is what a credential or connection name looks like: the
// configuration loader lower-cases keys and splits them at dots.
var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// headerToken matches an HTTP header field name (RFC 9110 token).
var headerToken = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// ConfigError is a setting of Config that is wrong, named by its key.
type ConfigError struct {
	Key string // e.g. profile.credentials.sales.hosts
	Msg string
}

func (e *ConfigError) Error() string { return e.Key + ": " + e.Msg }

func (c Config) key(k string) string {
	if c.Key == "" {
		return k
	}
	return c.Key + "." + k
}

// Validate reports every setting that is wrong, each a *ConfigError naming
// its key, joined.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &ConfigError{Key: c.key(key), Msg: fmt.Sprintf(format, args...)})
	}
	for i, h := range c.AllowedHosts {
		if _, err := parseAllowed(h); err != nil {
			bad(fmt.Sprintf("allowed_hosts[%d]", i), "%v", err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Credentials)) {
		cr := c.Credentials[name]
		k := "credentials." + name
		if !namePattern.MatchString(name) {
			bad(k, "the name must be lower-case letters, digits, _ or -")
		}
		if !IsEnvName(cr.Env) {
			bad(k+".env", "%q is not an environment variable name", cr.Env)
		}
		if len(cr.Hosts) == 0 {
			bad(k+".hosts", "must name at least one host the credential is sent to")
		}
		for i, h := range cr.Hosts {
			if _, _, err := parseHostPort(h); err != nil {
				bad(fmt.Sprintf("%s.hosts[%d]", k, i), "%v", err)
			}
		}
		if cr.Header != "" && !headerToken.MatchString(cr.Header) {
			bad(k+".header", "%q is not a header name", cr.Header)
		}
		if strings.ContainsAny(cr.Prefix, "\r\n") {
			bad(k+".prefix", "must not contain a line break")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Connections)) {
		cn := c.Connections[name]
		k := "connections." + name
		if !namePattern.MatchString(name) {
			bad(k, "the name must be lower-case letters, digits, _ or -")
		}
		switch cn.Driver {
		case DriverPostgres:
			if !IsEnvName(cn.DSNEnv) {
				bad(k+".dsn_env", "postgres needs dsn_env, the environment variable holding the connection string")
			}
			if cn.Path != "" {
				bad(k+".path", "applies to sqlite only")
			}
		case DriverSQLite:
			if !filepath.IsAbs(cn.Path) {
				bad(k+".path", "sqlite needs path, the database file's absolute path")
			}
			if cn.DSNEnv != "" {
				bad(k+".dsn_env", "applies to postgres only")
			}
		default:
			bad(k+".driver", "%q is not one of postgres, sqlite", cn.Driver)
		}
	}
	return errors.Join(errs...)
}

// IsEnvName reports whether v looks like an environment variable name.
func IsEnvName(v string) bool {
	if v == "" {
		return false
	}
	for i, c := range v {
		if !(c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

func (c Config) lookupEnv(name string) (string, bool) {
	if c.LookupEnv != nil {
		return c.LookupEnv(name)
	}
	return os.LookupEnv(name)
}

// allowed is one parsed AllowedHosts entry.
type allowed struct {
	name   string       // lower-case host name, or ""
	prefix netip.Prefix // address or CIDR when name is ""
	port   int          // 0: any port
}

// parseAllowed parses an AllowedHosts entry.
func parseAllowed(s string) (allowed, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return allowed{}, fmt.Errorf("%q is not a CIDR prefix like 10.0.0.0/8", s)
		}
		return allowed{prefix: p.Masked()}, nil
	}
	host, port, err := parseHostPort(s)
	if err != nil {
		return allowed{}, err
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return allowed{prefix: netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), port: port}, nil
	}
	return allowed{name: host, port: port}, nil
}

// parseHostPort parses "host", "host:port", "1.2.3.4", "::1", "[::1]" or
// "[::1]:port" into a lower-case host without brackets and a port (0: any).
func parseHostPort(s string) (string, int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", 0, errors.New("empty host")
	}
	host, port := s, 0
	if h, p, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", 0, fmt.Errorf("%q: the port must be a number from 1 to 65535", s)
		}
		host, port = h, n
	} else if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		host = s[1 : len(s)-1]
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if _, err := netip.ParseAddr(host); err == nil {
		return host, port, nil
	}
	if host == "" || strings.ContainsAny(host, " /?#@[]:*") {
		return "", 0, fmt.Errorf("%q is not a host, host:port, IP address or CIDR prefix", s)
	}
	return host, port, nil
}

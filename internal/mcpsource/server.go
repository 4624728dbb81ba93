package mcpsource

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/selmem/selmem/internal/egress"
)

// Server is an MCP server as configured (refresh.mcp_servers.<name>): a
// command run over stdio or a streamable HTTP URL, exactly one of them.
type Server struct {
	// Command is the program and its arguments, started without a shell
	// and with an empty environment except PATH, HOME and Env.
	Command []string `mapstructure:"command" yaml:"command,omitempty" json:"command,omitempty"`
	// Env names the environment variables passed through to Command
	// (names, never values).
	Env []string `mapstructure:"env" yaml:"env,omitempty" json:"env,omitempty"`
	// URL is the streamable HTTP endpoint, http or https.
	URL string `mapstructure:"url" yaml:"url,omitempty" json:"url,omitempty"`
	// ClientCert and ClientKey are PEM files of the client certificate
	// presented over https (mTLS); both or neither.
	ClientCert string `mapstructure:"client_cert" yaml:"client_cert,omitempty" json:"client_cert,omitempty"`
	ClientKey  string `mapstructure:"client_key" yaml:"client_key,omitempty" json:"client_key,omitempty"`
	// CA is a PEM file of the certificate authorities trusted for the
	// server's certificate instead of the system's.
	CA string `mapstructure:"ca" yaml:"ca,omitempty" json:"ca,omitempty"`
	// Credential names an outbound credential (an egress credential) sent
	// as a header to the URL's host, if the credential is bound to it.
	Credential string `mapstructure:"credential" yaml:"credential,omitempty" json:"credential,omitempty"`
	// Timeout bounds a whole call: start, handshake, tool call and result.
	// Zero is DefaultTimeout; a Source's own Timeout wins.
	Timeout time.Duration `mapstructure:"timeout" yaml:"timeout,omitempty" json:"timeout,omitempty"`
}

// DefaultTimeout bounds a call when neither the Source nor the Server sets
// a timeout.
const DefaultTimeout = 60 * time.Second

// Validate reports every setting of s that is wrong, each an
// *egress.ConfigError naming its key under key (e.g.
// refresh.mcp_servers.reports), joined. It reads the certificate files.
func (s Server) Validate(key string) error {
	var errs []error
	bad := func(k, format string, args ...any) {
		errs = append(errs, &egress.ConfigError{Key: key + "." + k, Msg: fmt.Sprintf(format, args...)})
	}
	switch {
	case len(s.Command) == 0 && s.URL == "":
		errs = append(errs, &egress.ConfigError{Key: key, Msg: "set either command (a program run over stdio) or url (a streamable HTTP endpoint)"})
	case len(s.Command) > 0 && s.URL != "":
		errs = append(errs, &egress.ConfigError{Key: key, Msg: "set command or url, not both"})
	}
	for i, a := range s.Command {
		if a == "" {
			bad(fmt.Sprintf("command[%d]", i), "must not be empty")
		}
	}
	for i, e := range s.Env {
		if !egress.IsEnvName(e) {
			bad(fmt.Sprintf("env[%d]", i), "%q is not an environment variable name", e)
		}
		if e == "PATH" || e == "HOME" {
			bad(fmt.Sprintf("env[%d]", i), "%s is always passed; remove it", e)
		}
	}
	https := false
	if s.URL != "" {
		u, err := url.Parse(s.URL)
		switch {
		case err != nil || u.Host == "":
			bad("url", "is not an absolute URL like https://mcp.example.com/mcp")
		case u.Scheme != "http" && u.Scheme != "https":
			bad("url", "must be http or https, not %s", u.Scheme)
		case u.User != nil:
			bad("url", "must not hold a user or password; configure a credential instead")
		}
		https = err == nil && u.Scheme == "https"
	}
	if len(s.Command) > 0 {
		for _, k := range []struct{ name, v string }{{"client_cert", s.ClientCert}, {"client_key", s.ClientKey}, {"ca", s.CA}, {"credential", s.Credential}} {
			if k.v != "" {
				bad(k.name, "applies to url servers only")
			}
		}
	} else {
		if len(s.Env) > 0 {
			bad("env", "applies to command servers only")
		}
		if (s.ClientCert != "" || s.ClientKey != "" || s.CA != "") && s.URL != "" && !https {
			bad("url", "must be https when client_cert, client_key or ca is set")
		}
		if (s.ClientCert == "") != (s.ClientKey == "") {
			bad("client_key", "client_cert and client_key go together; set both or neither")
		} else if _, err := s.tlsConfig(); err != nil {
			var ce *egress.ConfigError
			if errors.As(err, &ce) {
				ce.Key = key + "." + ce.Key
			}
			errs = append(errs, err)
		}
	}
	if s.Timeout < 0 {
		bad("timeout", "must not be negative")
	}
	return errors.Join(errs...)
}

// tlsConfig loads the client certificate and CA files; nil when none is
// set. Its errors are *egress.ConfigError with the setting's own key
// (client_cert, ca) and never hold a file's content.
func (s Server) tlsConfig() (*tls.Config, error) {
	if s.ClientCert == "" && s.CA == "" {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.ClientCert != "" {
		pair, err := tls.LoadX509KeyPair(s.ClientCert, s.ClientKey)
		if err != nil {
			return nil, &egress.ConfigError{Key: "client_cert", Msg: "the client certificate and key could not be loaded: " + fileProblem(err, "not a matching PEM certificate and private key")}
		}
		c.Certificates = []tls.Certificate{pair}
	}
	if s.CA != "" {
		pem, err := os.ReadFile(s.CA)
		if err != nil {
			return nil, &egress.ConfigError{Key: "ca", Msg: "the CA file could not be read: " + fileProblem(err, "unreadable")}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &egress.ConfigError{Key: "ca", Msg: "the CA file holds no PEM certificate"}
		}
		c.RootCAs = pool
	}
	return c, nil
}

// fileProblem says what was wrong with a file without its path or
// content; other is said when it is neither missing nor forbidden.
func fileProblem(err error, other string) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "the file does not exist"
	case errors.Is(err, os.ErrPermission):
		return "permission denied"
	}
	return other
}

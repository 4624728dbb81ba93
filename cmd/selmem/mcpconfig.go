package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/selmem/selmem/internal/hostconfig"
	"github.com/selmem/selmem/server"
)

func (a *app) mcpConfigCommand() *cobra.Command {
	var httpFlag string
	cmd := &cobra.Command{
		Use:   "mcp-config [HOST] [--http ADDR|URL]",
		Short: "Print the configuration that attaches selmem to an MCP host (claude-code, cursor, vscode, …)",
		Long: `Print the snippet that attaches selmem to an MCP host, in the shape that
host documents: claude-code, claude-desktop, cursor, vscode, windsurf, zed,
codex, gemini. Without HOST, list the hosts.

The snippet starts this very binary (its absolute path) with the current
SELMEM_HOME (absolute), over stdio. With --http it names selmem's
streamable HTTP endpoint instead: an address as given to serve --http
(127.0.0.1:8080, giving http://127.0.0.1:8080/mcp) or a full URL.

The snippet goes to stdout; where it goes (the file, or a command to run)
is printed on stderr. Merge it into the host's file: selmem writes no
host configuration itself.`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if len(argv) == 0 {
				return a.listHosts()
			}
			h, err := hostconfig.Lookup(argv[0])
			if err != nil {
				return usageError{err}
			}
			s := hostconfig.Server{Args: []string{"serve"}}
			if cmd.Flags().Changed("http") {
				if s.URL, err = endpointURL(httpFlag); err != nil {
					return usageError{err}
				}
			} else {
				if s.Command, err = a.executable(); err != nil {
					return err
				}
				home, err := filepath.Abs(a.cfg.Home)
				if err != nil {
					return err
				}
				s.Env = map[string]string{"SELMEM_HOME": home}
			}
			snips, err := h.Render(s)
			if err != nil {
				var he *hostconfig.Error
				if errors.As(err, &he) {
					return usageError{err}
				}
				return err
			}
			for i, sn := range snips {
				if i > 0 {
					fmt.Fprintln(a.stdout)
					fmt.Fprintln(a.stderr, "or:")
				}
				if sn.Format == hostconfig.FormatShell {
					fmt.Fprintf(a.stderr, "%s: run\n", h.Title)
				} else {
					fmt.Fprintf(a.stderr, "%s: merge into %s\n", h.Title, sn.Where)
				}
				fmt.Fprint(a.stdout, sn.Text)
			}
			return nil
		},
	}
	// The flag is named as serve's, which loadConfig binds to http.addr;
	// here only its own value matters.
	cmd.Flags().StringVar(&httpFlag, "http", "", "name selmem's HTTP endpoint (ADDR as for serve --http, or a URL) instead of starting it over stdio")
	return cmd
}

// listHosts prints every host with its documentation.
func (a *app) listHosts() error {
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tNAME\tDOCUMENTATION")
	for _, h := range hostconfig.Hosts() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", h.Name, h.Title, h.Doc)
	}
	return tw.Flush()
}

// executable is the absolute path of the running selmem, with symlinks
// resolved. A binary that go run built in a temporary directory is
// returned with a warning: it will be gone when the host starts it.
func (a *app) executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find the path of this selmem binary: %w", err)
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	if tmp, err := filepath.EvalSymlinks(os.TempDir()); err == nil && strings.HasPrefix(exe, tmp+string(filepath.Separator)) {
		fmt.Fprintf(a.stderr, "warning: %s is a temporary build (go run?); install selmem (make install, or go install) and run mcp-config from the installed binary\n", exe)
	}
	return exe, nil
}

// endpointURL turns serve's --http ADDR (or a URL) into the URL of the
// MCP endpoint.
func endpointURL(v string) (string, error) {
	if strings.Contains(v, "://") {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", fmt.Errorf("--http %q: want ADDR (127.0.0.1:8080) or an http(s) URL", v)
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = server.PathMCP
		}
		return u.String(), nil
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil || port == "" {
		return "", fmt.Errorf("--http %q: want ADDR (127.0.0.1:8080) or an http(s) URL", v)
	}
	// A server listening on every interface is reached on loopback.
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + server.PathMCP, nil
}

package refresh

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/selmem/selmem/profiler"
	"github.com/selmem/selmem/schemas"
)

// Connector kinds, the values of Connector.Kind.
const (
	KindFile = "file"
	KindSQL  = "sql"
	KindREST = "rest"
	KindMCP  = "mcp"
)

// Connector is a tool configuration, tools/<name>.yaml, that data can be
// loaded through. It names what the user configured (data roots,
// connections, credentials, MCP servers) and never holds a secret, a DSN
// or a command to run: a model may write this file, so everything it can
// reach is decided by configuration.
type Connector struct {
	Kind        string `yaml:"kind"`
	Description string `yaml:"description,omitempty"`
	// file: an absolute path or glob inside the data roots; the newest
	// matching file is read.
	Path   string `yaml:"path,omitempty"`
	Format string `yaml:"format,omitempty"` // file: csv, tsv, json, jsonl, parquet, arrow; default from the name
	// sql: a configured connection (or path, a SQLite file) and one
	// read-only query.
	Connection string `yaml:"connection,omitempty"`
	Query      string `yaml:"query,omitempty"`
	// rest: a URL answering JSON, the records' dot path, a configured
	// credential, and a timeout.
	URL         string `yaml:"url,omitempty"`
	RecordsPath string `yaml:"records_path,omitempty"`
	Credential  string `yaml:"credential,omitempty"`
	Timeout     string `yaml:"timeout,omitempty"`
	// mcp: a configured MCP server, one of its tools and the arguments
	// (records_path as for rest).
	Server    string         `yaml:"server,omitempty"`
	Tool      string         `yaml:"tool,omitempty"`
	Arguments map[string]any `yaml:"arguments,omitempty"`
}

// MCPCall is a tool call on a configured MCP server whose result holds
// records.
type MCPCall struct {
	Server      string
	Tool        string
	Arguments   map[string]any
	RecordsPath string
	Timeout     time.Duration
}

// MCPSources builds the source of an MCP call, or says why it cannot
// (a server that is not configured). The caller supplies it: this package
// does not speak MCP.
type MCPSources func(MCPCall) (profiler.Source, error)

// ParseConnector parses a tool configuration as a connector. Fields other
// than the connector's (notes, parameters, …) are allowed and ignored.
func ParseConnector(name string, data []byte) (*Connector, error) {
	var c Connector
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, invalid(fmt.Sprintf("tools/%s.yaml is not valid YAML: %s.", name, yamlMessage(err)), "")
	}
	switch c.Kind {
	case KindFile, KindSQL, KindREST, KindMCP:
		return &c, nil
	}
	return nil, invalid(fmt.Sprintf("tools/%s.yaml has kind %q, which is not a connector.", name, c.Kind),
		"A connector's kind is file (path), sql (connection, query), rest (url, records_path, credential) or mcp (server, tool, arguments).")
}

// connectorTimeout is the longest timeout a connector may set.
const connectorTimeout = 10 * time.Minute

// Source builds the profiler source of c with the binding's parameters:
// what it reads is checked against access (data roots, outbound policy,
// configured names) exactly as profile_source checks it. The string is
// where the data came from, without credentials.
func (c *Connector) Source(params map[string]string, access schemas.Access, mcp MCPSources) (profiler.Source, string, error) {
	var timeout time.Duration
	if c.Timeout != "" {
		d, err := time.ParseDuration(c.Timeout)
		if err != nil || d <= 0 || d > connectorTimeout {
			return nil, "", invalid(fmt.Sprintf("the connector's timeout %q is not a duration from 1s to 10m.", c.Timeout), "Write it like 30s or 2m.")
		}
		timeout = d
	}
	if len(params) > 0 && c.Kind != KindREST && c.Kind != KindMCP {
		return nil, "", invalid("binding parameters apply to rest and mcp connectors only.", "Remove parameters from binding.yaml, or put the values in the connector's query or path.")
	}
	switch c.Kind {
	case KindFile:
		p, err := newest(c.Path, access)
		if err != nil {
			return nil, "", err
		}
		src, ref, err := schemas.SourceSpec{Kind: schemas.KindFile, Path: p}.Source(access)
		if err != nil {
			return nil, "", err
		}
		if fs, ok := src.(profiler.FileSource); ok {
			fs.Format = c.Format
			src = fs
		}
		return src, ref, nil
	case KindSQL:
		return schemas.SourceSpec{Kind: schemas.KindSQL, Connection: c.Connection, Path: c.Path, Query: c.Query}.Source(access)
	case KindREST:
		u := c.URL
		if len(params) > 0 {
			pu, err := url.Parse(c.URL)
			if err != nil {
				return nil, "", invalid("the connector's url is not a URL.", "Give the full URL of the endpoint.")
			}
			q := pu.Query()
			for k, v := range params {
				q.Set(k, v)
			}
			pu.RawQuery = q.Encode()
			u = pu.String()
		}
		return schemas.SourceSpec{Kind: schemas.KindREST, URL: u, RecordsPath: c.RecordsPath, Credential: c.Credential, Timeout: timeout}.Source(access)
	}
	// KindMCP
	if c.Server == "" || c.Tool == "" {
		return nil, "", invalid("an mcp connector needs server (a configured MCP server's name) and tool.", "Ask the user to configure the server under refresh.mcp_servers.")
	}
	if mcp == nil {
		return nil, "", invalid("mcp connectors are not available here.", "Refresh from selmem serve or the selmem command line.")
	}
	args := map[string]any{}
	for k, v := range c.Arguments {
		args[k] = v
	}
	for k, v := range params {
		args[k] = v
	}
	src, err := mcp(MCPCall{Server: c.Server, Tool: c.Tool, Arguments: args, RecordsPath: c.RecordsPath, Timeout: timeout})
	if err != nil {
		return nil, "", err
	}
	return src, "mcp:" + c.Server + "/" + c.Tool, nil
}

// isGlob reports whether p holds a glob metacharacter.
func isGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// newest resolves a file connector's path: a plain path as it is, a glob
// to its newest matching regular file (the latest name on equal times).
// A glob must be absolute and its directory inside the data roots before
// anything is listed.
func newest(pattern string, access schemas.Access) (string, error) {
	if pattern == "" {
		return "", invalid("a file connector needs path, an absolute path or glob inside the data roots.", "e.g. path: /data/sales/orders-*.csv")
	}
	if !isGlob(pattern) {
		return pattern, nil
	}
	if slices.Contains(strings.Split(filepath.ToSlash(pattern), "/"), "..") {
		return "", invalid(fmt.Sprintf("the path %s contains a .. element.", pattern), "Give an absolute path inside the data roots.")
	}
	dir := filepath.Dir(pattern)
	if isGlob(dir) {
		return "", invalid("only the file name of a connector's path may hold * ? or [.", "Put the files in one directory, e.g. /data/sales/orders-*.csv.")
	}
	if _, err := filepath.Match(filepath.Base(pattern), ""); err != nil {
		return "", invalid(fmt.Sprintf("the glob %s is malformed.", pattern), "Check its brackets.")
	}
	// The directory is checked like a file would be, so that a glob
	// cannot list what lies outside the roots.
	if err := access.CheckDir(dir); err != nil {
		return "", err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", notFound(fmt.Sprintf("the directory of %s cannot be read.", pattern), "Check that it exists.")
	}
	type cand struct {
		name string
		mod  time.Time
	}
	var cands []cand
	for _, e := range entries {
		if ok, _ := filepath.Match(filepath.Base(pattern), e.Name()); !ok || !e.Type().IsRegular() && e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		st, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		cands = append(cands, cand{e.Name(), st.ModTime()})
	}
	if len(cands) == 0 {
		return "", notFound(fmt.Sprintf("no file matches %s.", pattern), "Check the connector's path and that the data was delivered.")
	}
	best := slices.MaxFunc(cands, func(a, b cand) int {
		if c := a.mod.Compare(b.mod); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return filepath.Join(dir, best.name), nil
}

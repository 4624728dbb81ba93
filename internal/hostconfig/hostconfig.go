package hostconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Server is what a host needs to reach selmem: a command to start (stdio)
// or, when URL is set, the streamable HTTP endpoint.
type Server struct {
	Name    string            // the server's name in the host; "" means "selmem"
	Command string            // absolute path of the selmem binary (stdio)
	Args    []string          // e.g. ["serve"]
	Env     map[string]string // e.g. SELMEM_HOME
	URL     string            // streamable HTTP endpoint, e.g. http://127.0.0.1:8080/mcp
}

// Format is the syntax of a snippet.
type Format string

// The formats of snippets.
const (
	FormatJSON  Format = "json"
	FormatTOML  Format = "toml"
	FormatShell Format = "sh"
)

// Snippet is one piece of configuration: what to run, or what to merge
// into a file.
type Snippet struct {
	Where  string // the file it goes in, or "shell" for a command line
	Format Format
	Text   string // ends with a newline
}

// Host is an MCP host selmem can be attached to.
type Host struct {
	Name  string // the name selmem mcp-config takes, e.g. "vscode"
	Title string // e.g. "VS Code"
	Doc   string // the host's documentation of its MCP configuration
	// render returns the host's snippets for s (s.Name set).
	render func(s Server) ([]Snippet, error)
}

// Error is a request this package cannot satisfy, with what to do instead.
type Error struct {
	Msg  string
	Hint string
}

func (e *Error) Error() string {
	if e.Hint == "" {
		return e.Msg
	}
	return e.Msg + " " + e.Hint
}

// Render returns h's snippets for s.
func (h Host) Render(s Server) ([]Snippet, error) {
	if s.Name == "" {
		s.Name = "selmem"
	}
	if s.URL == "" && s.Command == "" {
		return nil, errors.New("hostconfig: Server needs a Command or a URL")
	}
	return h.render(s)
}

// Hosts lists every host, in the order the README documents them.
func Hosts() []Host {
	return []Host{
		// https://code.claude.com/docs/en/mcp — claude mcp add [options]
		// <name> -- <command> [args...]; --transport http <name> <url>;
		// project scope in .mcp.json under mcpServers, "type" stdio or http.
		{Name: "claude-code", Title: "Claude Code", Doc: "https://code.claude.com/docs/en/mcp", render: claudeCode},
		// https://modelcontextprotocol.io/quickstart/user —
		// claude_desktop_config.json, mcpServers with command/args/env. Its
		// config file starts local servers only; remote servers are added
		// as connectors in the app's settings.
		{Name: "claude-desktop", Title: "Claude Desktop", Doc: "https://modelcontextprotocol.io/quickstart/user", render: claudeDesktop},
		// https://cursor.com/docs/mcp — .cursor/mcp.json or ~/.cursor/mcp.json,
		// mcpServers with command/args/env, or url for a remote server.
		{Name: "cursor", Title: "Cursor", Doc: "https://cursor.com/docs/mcp", render: mcpServersJSON(".cursor/mcp.json (project) or ~/.cursor/mcp.json", "url")},
		// https://code.visualstudio.com/docs/copilot/reference/mcp-configuration
		// — .vscode/mcp.json, top-level "servers"; "type" is required:
		// "stdio" with command/args/env, or "http" with url.
		{Name: "vscode", Title: "VS Code", Doc: "https://code.visualstudio.com/docs/copilot/reference/mcp-configuration", render: vscode},
		// https://docs.windsurf.com/windsurf/cascade/mcp —
		// ~/.codeium/windsurf/mcp_config.json, mcpServers (the Claude Desktop
		// schema); a remote server takes serverUrl.
		{Name: "windsurf", Title: "Windsurf", Doc: "https://docs.windsurf.com/windsurf/cascade/mcp", render: mcpServersJSON("~/.codeium/windsurf/mcp_config.json", "serverUrl")},
		// https://zed.dev/docs/ai/mcp — settings.json, context_servers with
		// command/args/env, or url (with optional headers) for a remote one.
		{Name: "zed", Title: "Zed", Doc: "https://zed.dev/docs/ai/mcp", render: zed},
		// https://developers.openai.com/codex/mcp — ~/.codex/config.toml,
		// [mcp_servers.<name>] with command, args and an env table, or url
		// for a streamable HTTP server.
		{Name: "codex", Title: "Codex CLI", Doc: "https://developers.openai.com/codex/mcp", render: codex},
		// https://geminicli.com/docs/tools/mcp-server/ — ~/.gemini/settings.json
		// (or .gemini/settings.json), mcpServers with command/args/env, or
		// httpUrl for streamable HTTP (url there means SSE).
		{Name: "gemini", Title: "Gemini CLI", Doc: "https://geminicli.com/docs/tools/mcp-server/", render: mcpServersJSON("~/.gemini/settings.json (or .gemini/settings.json in a project)", "httpUrl")},
	}
}

// Lookup returns the host called name.
func Lookup(name string) (Host, error) {
	var names []string
	for _, h := range Hosts() {
		if h.Name == name {
			return h, nil
		}
		names = append(names, h.Name)
	}
	return Host{}, &Error{Msg: fmt.Sprintf("unknown host %q.", name), Hint: "Name one of: " + strings.Join(names, ", ") + "."}
}

// stdioEntry is a local server in the mcpServers shape most hosts share.
type stdioEntry struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

func entry(s Server, typ string) stdioEntry {
	args := s.Args
	if args == nil {
		args = []string{}
	}
	return stdioEntry{Type: typ, Command: s.Command, Args: args, Env: s.Env}
}

// jsonSnippet renders {top: {name: v}} as indented JSON.
func jsonSnippet(where, top, name string, v any) ([]Snippet, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(map[string]map[string]any{top: {name: v}}); err != nil {
		return nil, err
	}
	return []Snippet{{Where: where, Format: FormatJSON, Text: b.String()}}, nil
}

// mcpServersJSON renders the mcpServers shape of Cursor, Windsurf and the
// Gemini CLI; urlKey is the key that names a remote server's URL.
func mcpServersJSON(where, urlKey string) func(Server) ([]Snippet, error) {
	return func(s Server) ([]Snippet, error) {
		if s.URL != "" {
			return jsonSnippet(where, "mcpServers", s.Name, map[string]string{urlKey: s.URL})
		}
		return jsonSnippet(where, "mcpServers", s.Name, entry(s, ""))
	}
}

func claudeCode(s Server) ([]Snippet, error) {
	var cmd []string
	var file []Snippet
	var err error
	if s.URL != "" {
		cmd = []string{"claude", "mcp", "add", "--transport", "http", "--scope", "user", s.Name, s.URL}
		file, err = jsonSnippet(".mcp.json (project scope)", "mcpServers", s.Name, map[string]string{"type": "http", "url": s.URL})
	} else {
		cmd = []string{"claude", "mcp", "add", "--transport", "stdio", "--scope", "user"}
		for _, k := range sortedKeys(s.Env) {
			cmd = append(cmd, "--env", k+"="+s.Env[k])
		}
		cmd = append(cmd, s.Name, "--", s.Command)
		cmd = append(cmd, s.Args...)
		file, err = jsonSnippet(".mcp.json (project scope)", "mcpServers", s.Name, entry(s, "stdio"))
	}
	if err != nil {
		return nil, err
	}
	return append([]Snippet{{Where: "shell", Format: FormatShell, Text: shellJoin(cmd) + "\n"}}, file...), nil
}

func claudeDesktop(s Server) ([]Snippet, error) {
	if s.URL != "" {
		return nil, &Error{Msg: "Claude Desktop's configuration file starts local servers only.",
			Hint: "Add the HTTP endpoint in Claude Desktop under Settings > Connectors, or drop --http to start selmem over stdio."}
	}
	return jsonSnippet("claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/, Windows: %APPDATA%\\Claude\\)",
		"mcpServers", s.Name, entry(s, ""))
}

func vscode(s Server) ([]Snippet, error) {
	const where = ".vscode/mcp.json (or the user mcp.json: MCP: Open User Configuration)"
	if s.URL != "" {
		return jsonSnippet(where, "servers", s.Name, map[string]string{"type": "http", "url": s.URL})
	}
	return jsonSnippet(where, "servers", s.Name, entry(s, "stdio"))
}

func zed(s Server) ([]Snippet, error) {
	const where = "Zed settings.json (zed: open settings)"
	if s.URL != "" {
		return jsonSnippet(where, "context_servers", s.Name, map[string]string{"url": s.URL})
	}
	return jsonSnippet(where, "context_servers", s.Name, entry(s, ""))
}

func codex(s Server) ([]Snippet, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "[mcp_servers.%s]\n", tomlKey(s.Name))
	if s.URL != "" {
		fmt.Fprintf(&b, "url = %s\n", tomlString(s.URL))
	} else {
		fmt.Fprintf(&b, "command = %s\n", tomlString(s.Command))
		quoted := make([]string, len(s.Args))
		for i, a := range s.Args {
			quoted[i] = tomlString(a)
		}
		fmt.Fprintf(&b, "args = [%s]\n", strings.Join(quoted, ", "))
		if len(s.Env) > 0 {
			fmt.Fprintf(&b, "\n[mcp_servers.%s.env]\n", tomlKey(s.Name))
			for _, k := range sortedKeys(s.Env) {
				fmt.Fprintf(&b, "%s = %s\n", tomlKey(k), tomlString(s.Env[k]))
			}
		}
	}
	return []Snippet{{Where: "~/.codex/config.toml (or .codex/config.toml in a trusted project)", Format: FormatTOML, Text: b.String()}}, nil
}

// tomlString quotes s as a TOML basic string. JSON's string escapes
// (\" \\ \n \t \uXXXX …) are all valid TOML escapes.
func tomlString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// tomlKey writes k bare when TOML allows it, else quoted.
func tomlKey(k string) string {
	if k != "" && strings.IndexFunc(k, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}) < 0 {
		return k
	}
	return tomlString(k)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// shellJoin quotes each word for a POSIX shell where it needs it.
func shellJoin(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = shellQuote(w)
	}
	return strings.Join(out, " ")
}

func shellQuote(w string) string {
	if w != "" && strings.IndexFunc(w, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) < 0 {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

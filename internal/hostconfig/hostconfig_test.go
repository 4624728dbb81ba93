package hostconfig_test

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"

	"github.com/selmem/selmem/internal/hostconfig"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// The server of the golden files: the paths a Linux user would have.
var golden = hostconfig.Server{
	Command: "/usr/local/bin/selmem",
	Args:    []string{"serve"},
	Env:     map[string]string{"SELMEM_HOME": "/home/me/.local/share/selmem"},
}

const goldenURL = "http://127.0.0.1:8080/mcp"

// want is what a host's documented schema requires of its snippet.
type want struct {
	top      string // the key that holds the servers
	stdioTyp string // the "type" a stdio entry must carry ("" none)
	urlKey   string // the key naming a remote server's URL
	httpTyp  string // the "type" an HTTP entry must carry ("" none)
	toml     bool
	shell    bool // a claude mcp add command line comes first
	noHTTP   bool // the host's file cannot name a remote server
}

var hosts = map[string]want{
	"claude-code":    {top: "mcpServers", stdioTyp: "stdio", urlKey: "url", httpTyp: "http", shell: true},
	"claude-desktop": {top: "mcpServers", noHTTP: true},
	"cursor":         {top: "mcpServers", urlKey: "url"},
	"vscode":         {top: "servers", stdioTyp: "stdio", urlKey: "url", httpTyp: "http"},
	"windsurf":       {top: "mcpServers", urlKey: "serverUrl"},
	"zed":            {top: "context_servers", urlKey: "url"},
	"codex":          {top: "mcp_servers", urlKey: "url", toml: true},
	"gemini":         {top: "mcpServers", urlKey: "httpUrl"},
}

func TestHosts_AllCovered(t *testing.T) {
	var names []string
	for _, h := range hostconfig.Hosts() {
		names = append(names, h.Name)
		if h.Title == "" || !strings.HasPrefix(h.Doc, "https://") {
			t.Errorf("%s: want a title and the documentation's URL, got %q %q", h.Name, h.Title, h.Doc)
		}
	}
	if len(names) != len(hosts) {
		t.Errorf("hosts = %v, want the %d hosts this test checks", names, len(hosts))
	}
	for _, n := range names {
		if _, ok := hosts[n]; !ok {
			t.Errorf("host %s has no schema check in this test", n)
		}
	}
}

// decode parses a snippet with the parser of its format.
func decode(t *testing.T, s hostconfig.Snippet) map[string]any {
	t.Helper()
	var m map[string]any
	switch s.Format {
	case hostconfig.FormatJSON:
		if err := json.Unmarshal([]byte(s.Text), &m); err != nil {
			t.Fatalf("snippet for %s is not JSON: %v\n%s", s.Where, err, s.Text)
		}
	case hostconfig.FormatTOML:
		if err := toml.Unmarshal([]byte(s.Text), &m); err != nil {
			t.Fatalf("snippet for %s is not TOML: %v\n%s", s.Where, err, s.Text)
		}
	default:
		t.Fatalf("snippet for %s: format %q is not a file format", s.Where, s.Format)
	}
	return m
}

// serverEntry returns m[top][name] as an object, failing when the shape
// is not the host's.
func serverEntry(t *testing.T, m map[string]any, top, name string) map[string]any {
	t.Helper()
	if len(m) != 1 {
		t.Fatalf("top-level keys = %v, want only %q", keys(m), top)
	}
	servers, ok := m[top].(map[string]any)
	if !ok {
		t.Fatalf("no %q object at the top level: %v", top, m)
	}
	e, ok := servers[name].(map[string]any)
	if !ok {
		t.Fatalf("%s has no server %q: %v", top, name, servers)
	}
	return e
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// checkStdio checks a local server entry against s.
func checkStdio(t *testing.T, e map[string]any, w want, s hostconfig.Server) {
	t.Helper()
	if got, _ := e["type"].(string); got != w.stdioTyp {
		t.Errorf("type = %q, want %q", got, w.stdioTyp)
	}
	if got := e["command"]; got != s.Command {
		t.Errorf("command = %v, want %q", got, s.Command)
	}
	var args []string
	raw, _ := e["args"].([]any)
	for _, a := range raw {
		args = append(args, a.(string))
	}
	if diff := cmp.Diff(s.Args, args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	env, _ := e["env"].(map[string]any)
	for k, v := range s.Env {
		if env[k] != v {
			t.Errorf("env[%s] = %v, want %q", k, env[k], v)
		}
	}
}

// shellWords splits a command line the way sh does.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the command line is for a POSIX shell")
	}
	out, err := exec.Command("sh", "-c", `eval "set -- $1"; printf '%s\0' "$@"`, "sh", line).Output()
	if err != nil {
		t.Fatalf("sh cannot parse %q: %v", line, err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

func check(t *testing.T, name string, w want, s hostconfig.Server) []hostconfig.Snippet {
	t.Helper()
	h, err := hostconfig.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	snips, err := h.Render(s)
	if s.URL != "" && w.noHTTP {
		var he *hostconfig.Error
		if !errors.As(err, &he) || he.Hint == "" {
			t.Fatalf("Render(HTTP) = %v, want an *Error with a hint", err)
		}
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if w.shell {
		if len(snips) < 2 || snips[0].Format != hostconfig.FormatShell {
			t.Fatalf("want a command line, then a file; got %+v", snips)
		}
		words := shellWords(t, strings.TrimSpace(snips[0].Text))
		if diff := cmp.Diff([]string{"claude", "mcp", "add"}, words[:3]); diff != "" {
			t.Errorf("command (-want +got):\n%s", diff)
		}
		if s.URL != "" {
			if got := words[len(words)-2:]; got[0] != "selmem" || got[1] != s.URL {
				t.Errorf("command ends %q, want selmem %s", got, s.URL)
			}
		} else {
			i := indexOf(words, "--")
			if i < 1 || words[i-1] != "selmem" {
				t.Fatalf("command %q: want NAME -- COMMAND ARGS", words)
			}
			if diff := cmp.Diff(append([]string{s.Command}, s.Args...), words[i+1:]); diff != "" {
				t.Errorf("server command (-want +got):\n%s", diff)
			}
			for k, v := range s.Env {
				if !contains(words, k+"="+v) {
					t.Errorf("command %q does not set %s", words, k)
				}
			}
		}
		snips = snips[1:]
	}
	if len(snips) != 1 {
		t.Fatalf("want one file snippet, got %d", len(snips))
	}
	if (snips[0].Format == hostconfig.FormatTOML) != w.toml {
		t.Errorf("format = %s", snips[0].Format)
	}
	e := serverEntry(t, decode(t, snips[0]), w.top, "selmem")
	if s.URL == "" {
		checkStdio(t, e, w, s)
		return snips
	}
	if got := e[w.urlKey]; got != s.URL {
		t.Errorf("%s = %v, want %q (entry %v)", w.urlKey, got, s.URL, e)
	}
	if got, _ := e["type"].(string); got != w.httpTyp {
		t.Errorf("type = %q, want %q", got, w.httpTyp)
	}
	if _, ok := e["command"]; ok {
		t.Errorf("an HTTP entry has a command: %v", e)
	}
	return snips
}

func indexOf(ws []string, w string) int {
	for i, x := range ws {
		if x == w {
			return i
		}
	}
	return -1
}

func contains(ws []string, w string) bool { return indexOf(ws, w) >= 0 }

// TestRender_Golden renders every host's stdio and HTTP snippets, parses
// each with a real JSON or TOML parser (and the command line with sh),
// checks the keys that host's documented schema requires and compares
// the text with testdata/<host>[-http].golden.
func TestRender_Golden(t *testing.T) {
	for name, w := range hosts {
		for _, http := range []bool{false, true} {
			s, file := golden, name+".golden"
			if http {
				s.URL, s.Command, s.Args, s.Env = goldenURL, "", nil, nil
				file = name + "-http.golden"
			}
			t.Run(strings.TrimSuffix(file, ".golden"), func(t *testing.T) {
				snips := check(t, name, w, s)
				if snips == nil && http && w.noHTTP {
					return
				}
				h, _ := hostconfig.Lookup(name)
				all, _ := h.Render(s)
				var b strings.Builder
				for _, sn := range all {
					b.WriteString("# " + sn.Where + "\n" + sn.Text)
				}
				path := filepath.Join("testdata", file)
				if *update {
					if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./internal/hostconfig -update)", err)
				}
				if diff := cmp.Diff(string(want), b.String()); diff != "" {
					t.Errorf("%s is stale (-want +got):\n%s", path, diff)
				}
			})
		}
	}
}

// TestRender_AwkwardPaths: a Windows path with spaces and backslashes, and
// a home with quotes, survive every host's escaping.
func TestRender_AwkwardPaths(t *testing.T) {
	s := hostconfig.Server{
		Command: `C:\Program Files\selmem\selmem.exe`,
		Args:    []string{"serve"},
		Env:     map[string]string{"SELMEM_HOME": `C:\Users\O'Brien "me"\selmem`},
	}
	for name, w := range hosts {
		t.Run(name, func(t *testing.T) { check(t, name, w, s) })
	}
}

func TestLookup_Unknown(t *testing.T) {
	_, err := hostconfig.Lookup("vs-code")
	var he *hostconfig.Error
	if !errors.As(err, &he) || !strings.Contains(he.Hint, "vscode") {
		t.Fatalf("Lookup(vs-code) = %v, want an error listing the hosts", err)
	}
}

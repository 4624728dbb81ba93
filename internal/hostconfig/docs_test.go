package hostconfig_test

import (
	"os"
	"strings"
	"testing"

	"github.com/selmem/selmem/internal/hostconfig"
)

// docBlock is a fenced code block of the docs, under a host's heading.
type docBlock struct {
	host, lang, text string
	line             int
}

// hostBlocks returns the json, toml and sh blocks of md under headings
// that name a host (by its title).
func hostBlocks(md string) []docBlock {
	titles := map[string]string{}
	for _, h := range hostconfig.Hosts() {
		titles[h.Title] = h.Name
	}
	var out []docBlock
	host, lang := "", ""
	var text strings.Builder
	start := 0
	for i, l := range strings.Split(md, "\n") {
		switch {
		case lang != "" && l == "```":
			if host != "" && (lang == "json" || lang == "toml" || lang == "sh") {
				out = append(out, docBlock{host: host, lang: lang, text: text.String(), line: start})
			}
			lang = ""
		case lang != "":
			text.WriteString(l + "\n")
		case strings.HasPrefix(l, "```"):
			lang, start = strings.TrimPrefix(l, "```"), i+1
			if lang == "" {
				lang = "text"
			}
			text.Reset()
		case strings.HasPrefix(l, "#"):
			host = titles[strings.TrimSpace(strings.TrimLeft(l, "#"))]
		}
	}
	return out
}

// readmeSection returns README.md's "Connect your host" section, or ""
// when the README has none.
func readmeSection(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	md := string(data)
	i := strings.Index(md, "\n## Connect your host\n")
	if i < 0 {
		return ""
	}
	md = md[i+1:]
	if j := strings.Index(md[3:], "\n## "); j >= 0 {
		md = md[:j+3]
	}
	return md
}

// TestDocs_HostSnippets: every snippet of docs/hosts.md (and of the
// README's "Connect your host" section, where it has one) is exactly what
// selmem mcp-config prints for the example paths, and so parses and has
// the keys the host documents (TestRender_Golden); every snippet a host
// has is shown.
func TestDocs_HostSnippets(t *testing.T) {
	data, err := os.ReadFile("../../docs/hosts.md")
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{"docs/hosts.md": string(data)}
	if s := readmeSection(t); s != "" {
		docs["README.md"] = s
	}
	for file, md := range docs {
		t.Run(file, func(t *testing.T) {
			shown := map[string]bool{}
			for _, b := range hostBlocks(md) {
				h, _ := hostconfig.Lookup(b.host)
				var rendered []hostconfig.Snippet
				for _, s := range []hostconfig.Server{golden, {URL: goldenURL}} {
					snips, _ := h.Render(s)
					rendered = append(rendered, snips...)
				}
				found := false
				for _, r := range rendered {
					if r.Text == b.text && string(r.Format) == b.lang {
						found, shown[b.host+"\x00"+r.Text] = true, true
					}
				}
				if !found {
					t.Errorf("%s:%d: this %s block under %s is not what selmem mcp-config %s prints:\n%s", file, b.line, b.lang, h.Title, h.Name, b.text)
				}
			}
			for _, h := range hostconfig.Hosts() {
				for _, s := range []hostconfig.Server{golden, {URL: goldenURL}} {
					snips, err := h.Render(s)
					if err != nil {
						continue // not configurable this way (Claude Desktop over HTTP)
					}
					for _, sn := range snips {
						if !shown[h.Name+"\x00"+sn.Text] {
							t.Errorf("%s does not show %s's snippet for %s:\n%s", file, h.Title, sn.Where, sn.Text)
						}
					}
				}
			}
		})
	}
}

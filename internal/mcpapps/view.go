package mcpapps

import (
	_ "embed"
	"html"
	"regexp"
	"strings"
)

//go:embed bridge.js
var bridgeJS string

//go:embed reporter.js
var reporterJS string

var bodyEnd = regexp.MustCompile(`(?i)</body\s*>`)

// withReporter adds to a page shown in the view's frame the script that
// reports its height and the links to open to the view.
func withReporter(page []byte) []byte {
	script := "<script>\n" + reporterJS + "</script>\n"
	locs := bodyEnd.FindAllIndex(page, -1)
	if len(locs) == 0 {
		return append(append([]byte{}, page...), script...)
	}
	at := locs[len(locs)-1][0]
	return append(append(append([]byte{}, page[:at]...), script...), page[at:]...)
}

// bridge is the view's script, for the protocol revision it speaks.
var bridge = strings.Replace(bridgeJS, "PROTOCOL_VERSION", ProtocolVersion, 1)

// Document is a view of the data snapshot (its SHA-256, "" for none): inner (an artifact's page with its data, or a
// notice) in the frame #selmem-view, and the bridge that talks to the host
// and re-renders the frame when a tool result brings new data. The frame
// is sandboxed to scripts (a page of its own origin, whatever the host
// grants the view); the host's policy, inherited by the frame, keeps it off
// the network.
func Document(title, snapshot string, inner []byte) []byte {
	var b strings.Builder
	b.WriteString(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>`)
	b.WriteString(html.EscapeString(title))
	b.WriteString(`</title>
<style>html,body{margin:0;padding:0}#selmem-view{display:block;border:0;width:100%;height:480px}</style>
</head>
<body data-selmem-snapshot="`)
	b.WriteString(html.EscapeString(snapshot))
	b.WriteString(`">
<iframe id="selmem-view" name="selmem-view" title="`)
	b.WriteString(html.EscapeString(title))
	b.WriteString(`" sandbox="allow-scripts" srcdoc="`)
	b.WriteString(html.EscapeString(string(inner)))
	b.WriteString(`"></iframe>
<script>
`)
	b.WriteString(bridge)
	b.WriteString("</script>\n</body>\n</html>\n")
	return []byte(b.String())
}

// Notice is a small page saying something about a view instead of
// showing the artifact: no data yet, data too large. link, when set, is
// the HTTP address of the artifact, opened through the host.
func Notice(title, text, link string) []byte {
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>`)
	b.WriteString(html.EscapeString(title))
	b.WriteString(`</title><style>body{font:15px/1.5 system-ui,sans-serif;margin:16px;color:#222}</style></head><body data-state="notice"><h1 style="font-size:18px">`)
	b.WriteString(html.EscapeString(title))
	b.WriteString(`</h1><p id="notice">`)
	b.WriteString(html.EscapeString(text))
	b.WriteString(`</p>`)
	if link != "" {
		b.WriteString(`<p><a id="open" data-selmem-open href="`)
		b.WriteString(html.EscapeString(link))
		b.WriteString(`">Open the artifact</a></p>`)
	}
	b.WriteString(`</body></html>`)
	return withReporter([]byte(b.String()))
}

// Shown is the part of a tool result's _meta, under MetaKey, that a view
// renders.
type Shown struct {
	URI       string `json:"uri"`
	Workspace string `json:"workspace"`
	Artifact  string `json:"artifact"`
	Snapshot  string `json:"snapshot,omitempty"`
	Rows      int64  `json:"rows"`
	Program   string `json:"program"`
	// Data is the snapshot as JSON text: one string, which hosts pass on
	// to the view without decoding ten thousand records.
	Data     string `json:"data,omitempty"`
	TooLarge bool   `json:"too_large,omitempty"`
	URL      string `json:"url,omitempty"`
}

// ResultMeta is the _meta of a tool result that shows an artifact: the
// artifact's own view under ui.resourceUri, and what to render under
// MetaKey.
func ResultMeta(s Shown) map[string]any {
	return map[string]any{"ui": map[string]any{"resourceUri": s.URI}, MetaKey: s}
}

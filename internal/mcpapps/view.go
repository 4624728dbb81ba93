package mcpapps

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"html"
	"regexp"
	"slices"
	"strings"

	"github.com/selmem/selmem/refresh"
)

//go:embed bridge.js
var bridgeJS string

//go:embed frame.js
var frameJS string

//go:embed columnar.js
var columnarJS string

//go:embed expand.js
var expandJS string

var bodyEnd = regexp.MustCompile(`(?i)</body\s*>`)

// withFrameScript adds to a page shown in the view's frame the scripts
// that talk to the view: columnar.js, which turns data by column into a
// snapshot, before the injection point (where the view may expand data
// when it loads the page, see expand.js) or else with frame.js, which
// reports the page's height, links to open and when it has rendered, and
// hands it new data, at the end of the body.
func withFrameScript(page []byte) []byte {
	columnar := "<script>\n" + columnarJS + "</script>\n"
	tail := "<script>\n" + frameJS + "</script>\n"
	if at := bytes.Index(page, []byte(refresh.InjectionPoint)); at >= 0 {
		page = slices.Concat(page[:at], []byte(columnar), page[at:])
	} else {
		tail = columnar + tail
	}
	locs := bodyEnd.FindAllIndex(page, -1)
	if len(locs) == 0 {
		return slices.Concat(page, []byte(tail))
	}
	at := locs[len(locs)-1][0]
	return slices.Concat(page[:at], []byte(tail), page[at:])
}

// bridge is the view's script, for the protocol revision it speaks, with
// the script it places after the injection point of a page it loads with
// data (EXPAND).
var bridge = "var EXPAND = " + jsString(expandJS) + ";\n" +
	strings.Replace(bridgeJS, "PROTOCOL_VERSION", ProtocolVersion, 1)

// jsString is s as a JavaScript string literal, with "<", ">" and "&"
// escaped so that it cannot end the script element holding it.
func jsString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a string always marshals
	}
	return string(b)
}

// Document is a view of the data snapshot (its SHA-256, "" for none): note,
// when set, above the frame (e.g. that it shows an aggregate), and inner
// (an artifact's page with its data, or a notice) in the frame #selmem-view, and the bridge that talks to the host
// and re-renders the frame when a tool result brings new data. The frame
// is sandboxed to scripts (a page of its own origin, whatever the host
// grants the view); the host's policy, inherited by the frame, keeps it off
// the network.
func Document(title, snapshot, note string, inner []byte) []byte {
	var b strings.Builder
	b.WriteString(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>`)
	b.WriteString(html.EscapeString(title))
	b.WriteString(`</title>
<style>html,body{margin:0;padding:0}#selmem-view{display:block;border:0;width:100%;height:480px}#selmem-note{margin:0;padding:6px 12px;font:13px/1.4 system-ui,sans-serif;color:#57534e;background:#f5f5f4}</style>
</head>
<body data-selmem-snapshot="`)
	b.WriteString(html.EscapeString(snapshot))
	b.WriteString(`">
<p id="selmem-note"`)
	if note == "" {
		b.WriteString(` hidden`)
	}
	b.WriteString(`>`)
	b.WriteString(html.EscapeString(note))
	b.WriteString(`</p>
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
	return withFrameScript([]byte(b.String()))
}

// Shown is the part of a tool result's _meta, under MetaKey, that a view
// renders.
type Shown struct {
	URI       string `json:"uri"`
	Workspace string `json:"workspace"`
	Artifact  string `json:"artifact"`
	Snapshot  string `json:"snapshot,omitempty"`
	Rows      int64  `json:"rows"`
	// Program is the page, self-contained, with an empty injection point;
	// ProgramKey identifies it, so that a view already showing it renders
	// new data in place.
	Program    string `json:"program"`
	ProgramKey string `json:"program_key,omitempty"`
	// Data and Numbers are what the page shows, by column, as JSON text
	// (refresh.Columnar): compact, passed from host to view as two strings
	// (not ten thousand values), from view to page as their bytes, and
	// parsed once, in the page. Numbers, most of the data, holds no quote
	// or backslash, so that JSON clients copy it without unescaping. (In
	// base64 a Go client decodes all of it as fast, but the host hands the
	// view a third more, which costs the view more than the client gains.)
	Data    string `json:"data,omitempty"`
	Numbers string `json:"numbers,omitempty"`
	// Aggregate says Data is the aggregate the binding declares, not the
	// data; Note says so for people.
	Aggregate bool   `json:"aggregate,omitempty"`
	Note      string `json:"note,omitempty"`
	TooLarge  bool   `json:"too_large,omitempty"`
	URL       string `json:"url,omitempty"`
}

// ResultMeta is the _meta of a tool result that shows an artifact: the
// artifact's own view under ui.resourceUri, and what to render under
// MetaKey.
func ResultMeta(s Shown) map[string]any {
	return map[string]any{"ui": map[string]any{"resourceUri": s.URI}, MetaKey: s}
}

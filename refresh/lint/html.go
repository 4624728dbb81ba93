package lint

import (
	"fmt"
	"strings"

	"golang.org/x/net/html"
)

// labelTags hold titles and headings: a category value there names what
// is shown rather than being data.
var labelTags = map[string]bool{
	"title": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"th": true, "label": true, "caption": true, "legend": true,
}

// textAttrs are attributes whose values are text a reader sees.
var textAttrs = map[string]bool{
	"title": true, "alt": true, "aria-label": true, "aria-description": true, "aria-valuetext": true,
	"placeholder": true, "value": true, "content": true, "label": true, "summary": true,
}

// scriptMode is how the text of a script element is checked.
type scriptMode int

const (
	modeText      scriptMode = iota // ordinary text
	modeSkip                        // style, external script, unknown script type
	modeJS                          // inline JavaScript or JSON
	modeInjection                   // the injection point: must be empty
)

// html checks an HTML or SVG document. index says whether it is the
// artifact's index.html, which must hold exactly one injection point.
func (c *checker) html(src string, svg, index bool) {
	z := html.NewTokenizer(strings.NewReader(src))
	line := 1
	mode := modeText
	labels := 0
	injections := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		raw := string(z.Raw())
		tokLine := line
		line += strings.Count(raw, "\n")
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			name, attrs := tagOf(z)
			c.attrs(attrs, raw, tokLine)
			if tt == html.SelfClosingTagToken {
				continue
			}
			switch {
			case labelTags[name]:
				labels++
			case name == "style":
				mode = modeSkip
			case name == "script":
				mode = scriptModeOf(attrs)
				if mode == modeInjection {
					injections++
					if typ, _ := attrs.get("type"); strings.ToLower(strings.TrimSpace(typ)) != "application/json" {
						c.add(Finding{Line: tokLine, Kind: KindInjection,
							Message: fmt.Sprintf("the injection point has type %s; it must be application/json so the browser does not run the data",
								quoteShort(typ))}, "type")
					}
				}
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch n := string(name); {
			case labelTags[n] && labels > 0:
				labels--
			case n == "script" || n == "style":
				mode = modeText
			}
		case html.TextToken:
			text := string(z.Text())
			switch mode {
			case modeJS:
				c.js(text, tokLine)
			case modeInjection:
				if strings.TrimSpace(text) != "" {
					c.add(Finding{Line: tokLine, Kind: KindInjection,
						Message: "the injection point is not empty: data must be injected when the artifact is served, never stored in the program"}, "filled")
				}
			case modeText:
				c.text(text, tokLine, labels > 0)
			}
		}
	}
	if !index {
		return
	}
	switch {
	case injections == 0:
		c.add(Finding{Line: 1, Kind: KindInjection,
			Message: `index.html has no injection point; add one empty <script type="application/json" id="` + InjectionID + `"></script> and read the data from it`}, "missing")
	case injections > 1:
		c.add(Finding{Line: 1, Kind: KindInjection,
			Message: fmt.Sprintf("index.html has %d injection points; keep exactly one", injections)}, "repeated")
	}
}

// attr is one attribute of a tag, its name lower-cased.
type attr struct{ key, val string }

// attrList is a tag's attributes in order, the first of repeated ones
// only (as in browsers).
type attrList []attr

// get returns the value of the attribute key and whether it is present.
func (l attrList) get(key string) (string, bool) {
	for _, a := range l {
		if a.key == key {
			return a.val, true
		}
	}
	return "", false
}

// tagOf returns the current tag's lower-cased name and attributes.
func tagOf(z *html.Tokenizer) (string, attrList) {
	name, more := z.TagName()
	var attrs attrList
	for more {
		var k, v []byte
		k, v, more = z.TagAttr()
		key := strings.ToLower(string(k))
		if _, dup := attrs.get(key); !dup {
			attrs = append(attrs, attr{key, string(v)})
		}
	}
	return strings.ToLower(string(name)), attrs
}

// scriptModeOf decides how to read a script element's text.
func scriptModeOf(attrs attrList) scriptMode {
	if id, _ := attrs.get("id"); strings.TrimSpace(id) == InjectionID {
		return modeInjection
	}
	if _, ok := attrs.get("src"); ok {
		return modeSkip
	}
	typ, _ := attrs.get("type")
	switch strings.ToLower(strings.TrimSpace(typ)) {
	case "", "text/javascript", "application/javascript", "module", "application/json",
		"application/ld+json", "importmap", "text/ecmascript", "application/ecmascript":
		return modeJS
	}
	return modeSkip
}

// attrs checks the attribute values of a tag whose raw text starts on
// line: event handlers as JavaScript, readable attributes as text; style,
// geometry, links and identifiers are skipped.
func (c *checker) attrs(attrs attrList, raw string, line int) {
	lowerRaw := asciiLower(raw) // same length as raw, unlike strings.ToLower
	for _, a := range attrs {
		key, v := a.key, a.val
		at := line
		if i := strings.Index(lowerRaw, key); i >= 0 {
			at += strings.Count(raw[:i], "\n")
		}
		switch {
		case strings.HasPrefix(key, "on"):
			c.js(v, at)
		case textAttrs[key] || strings.HasPrefix(key, "data-"):
			c.text(v, at, false)
		}
	}
}

// asciiLower lower-cases ASCII letters only, keeping every byte offset.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

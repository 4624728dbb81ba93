package lint

import (
	"fmt"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind is the kind of value a Finding is about.
type Kind string

const (
	// KindNumber is a number that occurs in the data.
	KindNumber Kind = "number"
	// KindAggregate is a number computed from the data: a column's total
	// or mean, the row count, a category's row count or total.
	KindAggregate Kind = "aggregate"
	// KindCategory is a value of a text column.
	KindCategory Kind = "category"
	// KindDate is a value of a date or timestamp column.
	KindDate Kind = "date"
	// KindInjection is a missing, repeated or pre-filled injection point.
	KindInjection Kind = "injection"
)

// Finding is one warning about a program file.
type Finding struct {
	File    string `json:"file"`             // file name as given to Program
	Line    int    `json:"line"`             // 1-based
	Kind    Kind   `json:"kind"`             // what kind of value was found
	Column  string `json:"column,omitempty"` // the data column it comes from, if any
	Message string `json:"message"`          // what was found and what to do; quotes only short values
}

// String formats f as "file:line: kind: message".
func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", f.File, f.Line, f.Kind, f.Message)
}

// MaxFindings is the most findings Program returns.
const MaxFindings = 200

// InjectionID is the id of the element data is injected into.
const InjectionID = "selmem-data"

// maxQuoted is the longest value a message quotes; longer ones are
// described by their length.
const maxQuoted = 32

// Program checks the program files of an artifact (file name relative to
// the artifact's directory → content) against snap, the data it is
// served with, and returns the findings ordered by file and line. HTML
// (.html, .htm), SVG, JavaScript (.js, .mjs, .cjs) and JSON files are
// read; other files are not. index.html must hold exactly one empty
// injection point. No findings means nothing suspicious was seen, not
// that the program is correct.
func Program(files map[string]string, snap Snapshot) []Finding {
	c := &checker{idx: newIndex(snap), seen: map[string]bool{}}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c.file = name
		src := files[name]
		switch strings.ToLower(path.Ext(name)) {
		case ".html", ".htm":
			c.html(src, false, strings.EqualFold(name, "index.html"))
		case ".svg":
			c.html(src, true, false)
		case ".js", ".mjs", ".cjs", ".json":
			c.js(src, 1)
		}
	}
	sort.SliceStable(c.out, func(i, j int) bool {
		a, b := c.out[i], c.out[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	if len(c.out) > MaxFindings {
		c.out = c.out[:MaxFindings]
	}
	return c.out
}

// checker holds the state of one Program call.
type checker struct {
	idx  *index
	file string
	out  []Finding
	seen map[string]bool // dedup key of each finding
	inJS bool            // whether JavaScript is being checked
}

func (c *checker) add(f Finding, key string) {
	f.File = c.file
	if f.Line < 1 {
		f.Line = 1
	}
	k := fmt.Sprintf("%s\x00%d\x00%s\x00%s", f.File, f.Line, f.Kind, key)
	if c.seen[k] || len(c.out) >= 4*MaxFindings {
		return
	}
	c.seen[k] = true
	c.out = append(c.out, f)
}

// js checks JavaScript (or JSON) source whose first line is line.
func (c *checker) js(src string, line int) {
	outer := c.inJS
	c.inJS = true
	defer func() { c.inJS = outer }()
	lastName := ""    // the nearest identifier or name-like string before a literal
	var p1, p2 string // the last two punctuation characters or keywords
	lexJS(src, line, func(t token) {
		switch t.kind {
		case tokIdent:
			lastName = t.text
			p1, p2 = t.text, p1
		case tokNumber:
			if !isLayoutName(lastName) {
				c.number(t.text, t.line)
			}
		case tokString:
			if !isLayoutName(lastName) && !looksLikeStyle(t.text) {
				c.numbersIn(t.text, t.line)
			}
			compared := p1 == "case" || (p1 == "=" && (p2 == "=" || p2 == "!"))
			c.textsIn(t.text, t.line, compared)
			if isNameLike(t.text) {
				lastName = t.text
			}
		case tokPunct:
			if t.text == ";" || t.text == "{" || t.text == "}" {
				lastName = ""
			}
			p1, p2 = t.text, p1
		}
		if t.kind != tokPunct && t.kind != tokIdent {
			p1, p2 = "", ""
		}
	})
}

// text checks human-readable text (HTML text, attribute values) starting
// on line; category values are not reported in labels.
func (c *checker) text(s string, line int, label bool) {
	c.numbersIn(s, line)
	if !label {
		c.textsIn(s, line, false)
	}
}

// number checks a numeric literal as written (digits, optional commas,
// decimal point and exponent).
func (c *checker) number(lit string, line int) {
	clean := separators.Replace(lit)
	for _, r := range clean {
		if !(r >= '0' && r <= '9' || r == '.' || r == 'e' || r == 'E' || r == '+' || r == '-') {
			return // hex, octal, binary, BigInt or malformed
		}
	}
	v, err := strconv.ParseFloat(clean, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return
	}
	mant := clean
	if i := strings.IndexAny(mant, "eE"); i >= 0 {
		mant = mant[:i]
	}
	decimals := 0
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		decimals = len(mant) - i - 1
	}
	if ignoredNumber(v, decimals) {
		return
	}
	sig := len(strings.TrimLeft(strings.ReplaceAll(mant, ".", ""), "0"))
	e, ok := c.idx.matchNumber(math.Abs(v), decimals, sig)
	if !ok {
		return
	}
	shown := quoteShort(lit)
	if e.agg == "" {
		c.add(Finding{Line: line, Kind: KindNumber, Column: e.col,
			Message: fmt.Sprintf("number %s occurs in column %s of the data; compute what it stands for from the injected data",
				shown, quoteShort(e.col))}, lit)
		return
	}
	what := e.agg
	if e.col != "" && !strings.Contains(what, " for ") && !strings.Contains(what, " rows with ") {
		what += " of column " + quoteShort(e.col)
	} else if strings.Contains(what, " for ") {
		what += " in column " + quoteShort(e.col)
	}
	c.add(Finding{Line: line, Kind: KindAggregate, Column: e.col,
		Message: fmt.Sprintf("number %s equals %s; compute it from the injected data so it changes when the data does",
			shown, what)}, lit)
}

// separators are dropped from numbers before parsing: 1,520.5 and 1_520.5.
var separators = strings.NewReplacer(",", "", "_", "")

// ignoredNumber reports numbers that are layout or formatting rather than
// data: small numbers, years, powers of ten.
func ignoredNumber(v float64, decimals int) bool {
	a := math.Abs(v)
	if a <= 10 && decimals <= 1 {
		return true
	}
	if decimals == 0 && a == math.Trunc(a) {
		if a >= 1900 && a <= 2100 {
			return true
		}
		if l := math.Log10(a); l == math.Trunc(l) {
			return true
		}
	}
	return false
}

// numbersIn checks the numbers written in free text, skipping those that
// are part of a word, a date, a time, a version, a colour or a measure
// with a unit (12px, 50%).
func (c *checker) numbersIn(s string, line int) {
	counted := 0 // s[:counted] has been scanned for newlines into line
	for i := 0; i < len(s); {
		ch := s[i]
		if !isDigit(ch) && !(ch == '.' && i+1 < len(s) && isDigit(s[i+1])) {
			i++
			continue
		}
		start := i
		attached := start > 0 && attachedBefore(s[:start])
		// digits, thousands groups, decimals
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i-start <= 3 {
			for i+3 < len(s) && s[i] == ',' && isDigit(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) &&
				(i+4 == len(s) || !isDigit(s[i+4])) {
				i += 4
			}
		}
		if i+1 < len(s) && s[i] == '.' && isDigit(s[i+1]) {
			i++
			for i < len(s) && isDigit(s[i]) {
				i++
			}
		}
		end := i
		if end < len(s) {
			next := s[end]
			switch {
			case next == '%', next >= 0x80 && unicode.IsLetter(firstRune(s[end:])), isIdentPart(next) && next < 0x80:
				attached = true
			case strings.IndexByte(":/-.", next) >= 0 && end+1 < len(s) && isDigit(s[end+1]):
				attached = true
			}
		}
		if attached {
			// skip the rest of the word, date or version
			for i < len(s) && (isIdentPart(s[i]) || strings.IndexByte(".:/-,%#", s[i]) >= 0) {
				i++
			}
			continue
		}
		line += strings.Count(s[counted:start], "\n")
		counted = start
		c.number(s[start:end], line)
	}
}

// attachedBefore reports whether the text before a number makes it part of
// a word, identifier, colour, version or date.
func attachedBefore(before string) bool {
	r, _ := utf8.DecodeLastRuneInString(before)
	switch {
	case r == '_' || r == '#' || r == '.' || r == ':' || r == '/' || r == '\\':
		return true
	case r == '-':
		rest := before[:len(before)-1]
		if rest == "" {
			return false
		}
		p, _ := utf8.DecodeLastRuneInString(rest)
		return unicode.IsLetter(p) || unicode.IsDigit(p)
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// textsIn reports category and date values written in s as whole words.
// A plain lower-case word ("open", "mobile") reads like code or prose, so
// it is reported only when it is all of s and, in JavaScript, compared
// with (compared: s follows ==, ===, != or case).
func (c *checker) textsIn(s string, line int, compared bool) {
	if len(s) < 2 {
		return
	}
	var covered [][2]int
	for _, e := range c.idx.texts {
		if len(e.value) > len(s) {
			continue
		}
		pos := -1
		if e.plain {
			if strings.TrimSpace(s) == e.value && (compared || !c.inJS) {
				pos = strings.Index(s, e.value)
			}
		} else {
			pos = wordIndex(s, e.value)
		}
		if pos < 0 || overlaps(covered, pos, pos+len(e.value)) {
			continue
		}
		covered = append(covered, [2]int{pos, pos + len(e.value)})
		c.add(Finding{Line: line + strings.Count(s[:pos], "\n"), Kind: e.kind, Column: e.col,
			Message: fmt.Sprintf("%s value %s of column %s is written into the program; read it from the injected data",
				e.kind, quoteShort(e.value), quoteShort(e.col))}, e.col+"\x00"+e.value)
	}
}

// wordIndex returns the first index of word in s where it is not part of
// a longer word, or -1.
func wordIndex(s, word string) int {
	for from := 0; from <= len(s)-len(word); {
		i := strings.Index(s[from:], word)
		if i < 0 {
			return -1
		}
		i += from
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+len(word):])
		if (i == 0 || !isWordRune(before)) && (i+len(word) == len(s) || !isWordRune(after)) {
			return i
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		from = i + size
	}
	return -1
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func overlaps(spans [][2]int, start, end int) bool {
	for _, sp := range spans {
		if start < sp[1] && sp[0] < end {
			return true
		}
	}
	return false
}

// layoutWords are the last words of names whose numbers are layout,
// formatting or timing rather than data.
var layoutWords = map[string]bool{
	"width": true, "height": true, "w": true, "h": true, "x": true, "y": true, "z": true,
	"x0": true, "x1": true, "x2": true, "y0": true, "y1": true, "y2": true,
	"cx": true, "cy": true, "r": true, "rx": true, "ry": true, "dx": true, "dy": true,
	"margin": true, "padding": true, "pad": true, "gap": true, "gutter": true, "spacing": true,
	"top": true, "left": true, "right": true, "bottom": true, "inset": true, "indent": true,
	"size": true, "radius": true, "stroke": true, "opacity": true, "alpha": true, "offset": true,
	"box": true, "viewbox": true, "transform": true, "translate": true, "rotate": true, "d": true,
	"points": true, "path": true, "angle": true, "zoom": true, "index": true, "weight": true,
	"duration": true, "delay": true, "timeout": true, "interval": true, "ms": true,
	"px": true, "em": true, "rem": true, "digits": true, "decimals": true, "precision": true,
	"ticks": true, "tick": true, "step": true, "thickness": true, "length": true, "span": true,
	"color": true, "colour": true, "fill": true, "border": true, "outline": true, "lineheight": true,
}

// isLayoutName reports whether name (an identifier, property or
// attribute name) ends in a layout word: CHART_WIDTH, fontSize,
// stroke-width, viewBox, setTimeout.
func isLayoutName(name string) bool {
	if name == "" {
		return false
	}
	if layoutWords[strings.ToLower(name)] {
		return true
	}
	last := 0
	for i, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ':':
			last = i + 1
		case unicode.IsUpper(r) && i > 0:
			prev, _ := utf8.DecodeLastRuneInString(name[:i])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) {
				last = i
			}
		}
	}
	return layoutWords[strings.ToLower(name[last:])]
}

// isNameLike reports whether a string literal looks like a property or
// attribute name ("width", "stroke-width", "data-x").
func isNameLike(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r == '$' || r == '-' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

// looksLikeStyle reports strings that are CSS or SVG geometry rather than
// text: "translate(10, 20)", "rgb(1,2,3)", "M0 0 L 640 22".
func looksLikeStyle(s string) bool {
	l := strings.ToLower(s)
	for _, fn := range []string{"translate(", "rotate(", "scale(", "matrix(", "rgb(", "rgba(", "hsl(", "hsla(", "calc(", "var(--"} {
		if strings.Contains(l, fn) {
			return true
		}
	}
	if strings.Contains(l, ":") && strings.Contains(l, ";") && strings.ContainsAny(l, "0123456789") &&
		(strings.Contains(l, "px") || strings.Contains(l, "em") || strings.Contains(l, "%")) {
		return true // an inline style
	}
	t := strings.TrimSpace(s)
	if t != "" && strings.IndexByte("MmLlHhVvCcSsQqTtAaZz", t[0]) >= 0 {
		return strings.Trim(t, "MmLlHhVvCcSsQqTtAaZz0123456789 ,.-\n") == "" && len(t) > 1 &&
			strings.ContainsAny(t[1:], "0123456789")
	}
	return false
}

// quoteShort quotes s when it is short and otherwise describes it by its
// length, so that findings never carry long values.
func quoteShort(s string) string {
	n := utf8.RuneCountInString(s)
	if n <= maxQuoted && utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("(a %d-character value)", n)
}

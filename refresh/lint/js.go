package lint

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// tokKind is the kind of a JavaScript token, as far as the lint needs it.
type tokKind int

const (
	tokIdent  tokKind = iota // identifier or keyword
	tokNumber                // numeric literal, as written
	tokString                // string literal or template chunk, decoded
	tokPunct                 // one punctuation character
	tokRegex                 // regular expression literal
)

// token is one JavaScript token. line is the line its first character is
// on (1-based, counted in the whole file).
type token struct {
	kind tokKind
	text string
	line int
}

// keywords after which a slash starts a regular expression, not a division.
var regexKeywords = map[string]bool{
	"return": true, "typeof": true, "case": true, "do": true, "else": true, "in": true,
	"of": true, "new": true, "delete": true, "void": true, "throw": true, "yield": true,
	"await": true, "instanceof": true,
}

// jsLexer splits JavaScript (or JSON) into tokens. It is lenient: any
// input, however malformed, is consumed in one forward pass, so it always
// terminates; unterminated strings end at the line's end, unterminated
// comments and templates at the input's end.
type jsLexer struct {
	src  string
	i    int
	line int
	prev token // the last token emitted
	has  bool  // whether prev is set
	// tmpl holds, for each template literal whose ${…} expression is being
	// read, the depth of braces opened inside that expression.
	tmpl []int
	emit func(token)
}

// lexJS calls emit for each token of src, whose first line is line.
func lexJS(src string, line int, emit func(token)) {
	l := &jsLexer{src: src, line: line, emit: emit}
	l.run()
}

func (l *jsLexer) out(kind tokKind, text string, line int) {
	t := token{kind: kind, text: text, line: line}
	l.prev, l.has = t, true
	l.emit(t)
}

func (l *jsLexer) peek(k int) byte {
	if l.i+k < len(l.src) {
		return l.src[l.i+k]
	}
	return 0
}

func (l *jsLexer) run() {
	for l.i < len(l.src) {
		c := l.src[l.i]
		switch {
		case c == '\n':
			l.line++
			l.i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			l.i++
		case c == '/' && l.peek(1) == '/':
			l.skipLine()
		case c == '/' && l.peek(1) == '*':
			l.skipBlockComment()
		case c == '<' && strings.HasPrefix(l.src[l.i:], "<!--"):
			l.skipLine()
		case c == '\'' || c == '"':
			l.stringLit(c)
		case c == '`':
			l.i++
			l.template()
		case isDigit(c) || (c == '.' && isDigit(l.peek(1))):
			l.number()
		case isIdentStart(c):
			l.ident()
		case c == '/' && l.regexAllowed():
			l.regex()
		case c == '{':
			if n := len(l.tmpl); n > 0 {
				l.tmpl[n-1]++
			}
			l.punct()
		case c == '}':
			if n := len(l.tmpl); n > 0 {
				if l.tmpl[n-1] == 0 {
					l.tmpl = l.tmpl[:n-1]
					l.i++
					l.template()
					continue
				}
				l.tmpl[n-1]--
			}
			l.punct()
		default:
			l.punct()
		}
	}
}

func (l *jsLexer) punct() {
	l.out(tokPunct, l.src[l.i:l.i+1], l.line)
	l.i++
}

func (l *jsLexer) skipLine() {
	for l.i < len(l.src) && l.src[l.i] != '\n' {
		l.i++
	}
}

func (l *jsLexer) skipBlockComment() {
	end := strings.Index(l.src[l.i+2:], "*/")
	stop := len(l.src)
	if end >= 0 {
		stop = l.i + 2 + end + 2
	}
	l.line += strings.Count(l.src[l.i:stop], "\n")
	l.i = stop
}

// stringLit reads a quoted string starting at l.i.
func (l *jsLexer) stringLit(q byte) {
	line := l.line
	l.i++
	var b strings.Builder
	for l.i < len(l.src) {
		c := l.src[l.i]
		if c == q {
			l.i++
			break
		}
		if c == '\n' { // unterminated: the string ends with the line
			break
		}
		if c == '\\' {
			l.escape(&b)
			continue
		}
		b.WriteByte(c)
		l.i++
	}
	l.out(tokString, b.String(), line)
}

// template reads a template literal's text from l.i up to its closing
// backtick or the next ${, which opens an expression read as code.
func (l *jsLexer) template() {
	line := l.line
	var b strings.Builder
	for l.i < len(l.src) {
		c := l.src[l.i]
		if c == '`' {
			l.i++
			break
		}
		if c == '$' && l.peek(1) == '{' {
			l.i += 2
			l.tmpl = append(l.tmpl, 0)
			break
		}
		if c == '\\' {
			l.escape(&b)
			continue
		}
		if c == '\n' {
			l.line++
		}
		b.WriteByte(c)
		l.i++
	}
	l.out(tokString, b.String(), line)
}

// escape decodes the escape sequence at l.i (a backslash) into b.
func (l *jsLexer) escape(b *strings.Builder) {
	l.i++ // the backslash
	if l.i >= len(l.src) {
		return
	}
	c := l.src[l.i]
	l.i++
	switch c {
	case 'n':
		b.WriteByte('\n')
	case 't':
		b.WriteByte('\t')
	case 'r', 'b', 'f', 'v', '0':
		b.WriteByte(' ')
	case '\n':
		l.line++ // line continuation
	case 'u':
		if l.i < len(l.src) && l.src[l.i] == '{' {
			end := strings.IndexByte(l.src[l.i:], '}')
			if end > 0 && end <= 8 {
				if r, err := strconv.ParseUint(l.src[l.i+1:l.i+end], 16, 32); err == nil && r <= utf8.MaxRune {
					b.WriteRune(rune(r))
					l.i += end + 1
					return
				}
			}
			return
		}
		l.hexRune(b, 4)
	case 'x':
		l.hexRune(b, 2)
	default:
		b.WriteByte(c)
	}
}

func (l *jsLexer) hexRune(b *strings.Builder, n int) {
	if l.i+n > len(l.src) {
		return
	}
	r, err := strconv.ParseUint(l.src[l.i:l.i+n], 16, 32)
	if err != nil {
		return
	}
	b.WriteRune(rune(r))
	l.i += n
}

// number reads a numeric literal. Non-decimal literals (0x…, 0o…, 0b…) and
// BigInts are emitted with their prefix or suffix so callers can skip them.
func (l *jsLexer) number() {
	start := l.i
	if l.src[l.i] == '0' && strings.IndexByte("xXoObB", l.peek(1)) >= 0 && l.peek(1) != 0 {
		l.i += 2
		for l.i < len(l.src) && (isIdentPart(l.src[l.i])) {
			l.i++
		}
		l.out(tokNumber, l.src[start:l.i], l.line)
		return
	}
	for l.i < len(l.src) && (isDigit(l.src[l.i]) || l.src[l.i] == '_') {
		l.i++
	}
	if l.i < len(l.src) && l.src[l.i] == '.' {
		l.i++
		for l.i < len(l.src) && (isDigit(l.src[l.i]) || l.src[l.i] == '_') {
			l.i++
		}
	}
	if l.i < len(l.src) && (l.src[l.i] == 'e' || l.src[l.i] == 'E') {
		j := l.i + 1
		if j < len(l.src) && (l.src[j] == '+' || l.src[j] == '-') {
			j++
		}
		if j < len(l.src) && isDigit(l.src[j]) {
			l.i = j
			for l.i < len(l.src) && isDigit(l.src[l.i]) {
				l.i++
			}
		}
	}
	// A suffix (BigInt's n, or junk like 12px in malformed code) stays part
	// of the token.
	for l.i < len(l.src) && isIdentPart(l.src[l.i]) {
		l.i++
	}
	l.out(tokNumber, l.src[start:l.i], l.line)
}

func (l *jsLexer) ident() {
	start := l.i
	for l.i < len(l.src) && isIdentPart(l.src[l.i]) {
		l.i++
	}
	l.out(tokIdent, l.src[start:l.i], l.line)
}

// regexAllowed reports whether a slash at l.i starts a regular expression:
// at the start, after punctuation other than a closing bracket, or after a
// keyword such as return.
func (l *jsLexer) regexAllowed() bool {
	if !l.has {
		return true
	}
	switch l.prev.kind {
	case tokNumber, tokString, tokRegex:
		return false
	case tokIdent:
		return regexKeywords[l.prev.text]
	}
	return !strings.Contains(")]}", l.prev.text)
}

func (l *jsLexer) regex() {
	start, line := l.i, l.line
	l.i++
	inClass := false
	for l.i < len(l.src) {
		c := l.src[l.i]
		if c == '\n' {
			break
		}
		l.i++
		switch {
		case c == '\\':
			if l.i < len(l.src) && l.src[l.i] != '\n' {
				l.i++
			}
		case c == '[':
			inClass = true
		case c == ']':
			inClass = false
		case c == '/' && !inClass:
			for l.i < len(l.src) && isIdentPart(l.src[l.i]) {
				l.i++
			}
			l.out(tokRegex, l.src[start:l.i], line)
			return
		}
	}
	l.out(tokRegex, l.src[start:l.i], line)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || (c|0x20 >= 'a' && c|0x20 <= 'z') || c >= 0x80
}

func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) }

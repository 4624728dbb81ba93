package gate

import (
	"encoding/base64"
	"encoding/hex"
	"html"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// A view is a transformed copy of content that the secret scanners read
// besides the raw text: origin[i] is the 1-based line of the content that
// line i+1 of text comes from, so a finding in a view names a real line.
type view struct {
	text   string
	origin []int
}

// lineOf maps the 1-based line n of v to a line of the content.
func (v view) lineOf(n int) int {
	if n >= 1 && n <= len(v.origin) {
		return v.origin[n-1]
	}
	return 1
}

type viewBuilder struct {
	b      strings.Builder
	origin []int
}

func (vb *viewBuilder) add(line string, from int) {
	vb.b.WriteString(line)
	vb.b.WriteByte('\n')
	vb.origin = append(vb.origin, from)
}

func (vb *viewBuilder) view() view { return view{vb.b.String(), vb.origin} }

// Decoding limits: runs shorter than minEncodedRun are not decoded (a
// shorter run cannot hide a credential worth the false positives), and
// decoded text counts only when at least minPrintable of it is printable.
const (
	minEncodedRun = 24
	minPrintable  = 0.9
	maxURLDecode  = 3 // rounds of percent-decoding (double-encoded DSNs)
)

// normalizedViews returns the views of text the secret scanners read
// besides text itself:
//
//  1. the normalised text: format characters (zero-width, soft hyphen,
//     BOM, bidi) removed, NFKC (fullwidth and other compatibility forms
//     folded), \uXXXX escapes, HTML character references and percent
//     escapes decoded, string concatenations ("a" + "b") closed, and
//     tokens split over lines joined: YAML folded and literal block
//     scalars, backslash continuations, and a line ending in a token run
//     continued by a line starting with one;
//     a field name ending a line ("password:", "the token is") is joined
//     to a value alone on the next line, the cells of tables are
//     written as field: value lines (see tableAssignments), and words
//     spelled out a character at a time, or credential field names of
//     several words, are written as one word (see spelledWords), and
//     field names disguised with digits, symbols or a hyphen are written
//     plain (see plainFieldNames);
//  2. decoded text: base64 and hex runs of at least 24 characters in the
//     normalised text, decoded when the result is mostly printable text.
//
// A view equal to text is omitted. The result is deterministic.
func normalizedViews(text string) []view {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	norms := make([]string, len(lines))
	for i, l := range lines {
		norms[i] = normalizeLine(l)
	}
	// The normalised view holds only the lines that differ from the raw
	// text (the raw text is scanned anyway); decoding reads every line.
	var nb, db viewBuilder
	for i := 0; i < len(norms); {
		joined, next := joinContinuations(norms, i)
		if next != i+1 || joined != lines[i] {
			nb.add(joined, i+1)
		}
		if next < len(norms) && fieldAtEnd(joined) {
			// "The password is" / "token:" with the value on the next line.
			if v := strings.TrimSpace(norms[next]); v != "" && !strings.ContainsAny(v, " \t") {
				nb.add(strings.TrimRight(joined, " \t")+" "+v, i+1)
			}
		}
		if w := spelledWords(joined); w != joined {
			// "P-a-s-s-w-o-r-d: X", "mot de passe : X".
			nb.add(w, i+1)
		}
		if w := plainFieldNames(joined); w != joined {
			// "p@ssw0rd: X", "pass-word = X".
			nb.add(w, i+1)
		}
		if next > i+1 {
			// A line broken with a hyphen, as text wraps: also without it.
			if d := dehyphenate(norms[i:next]); d != joined {
				nb.add(d, i+1)
			}
		}
		for _, d := range decodeRuns(joined) {
			for _, dl := range strings.Split(d, "\n") {
				db.add(normalizeLine(dl), i+1)
			}
		}
		i = next
	}
	tableAssignments(norms, nb.add)
	var out []view
	if len(nb.origin) > 0 {
		out = append(out, nb.view())
	}
	if len(db.origin) > 0 {
		out = append(out, db.view())
	}
	return out
}

var (
	reUnicodeEscape = regexp.MustCompile(`\\u[0-9a-fA-F]{4}`)
	rePercent       = regexp.MustCompile(`%[0-9a-fA-F]{2}`)
	reConcat        = regexp.MustCompile(`(["'])\s*\+?\s*(["'])`)
)

// normalizeLine applies the per-line normalisations of normalizedViews.
func normalizeLine(l string) string {
	if hasNonASCII(l) {
		l = foldConfusables(norm.NFKC.String(withoutFormatChars(l, false)), isCredentialField)
	}
	if strings.Contains(l, `\u`) {
		l = reUnicodeEscape.ReplaceAllStringFunc(l, func(m string) string {
			n, err := strconv.ParseUint(m[2:], 16, 32)
			if err != nil || n < 0x20 {
				return m
			}
			return string(rune(n))
		})
	}
	if strings.Contains(l, "&") && strings.Contains(l, ";") {
		l = html.UnescapeString(l)
	}
	for i := 0; i < maxURLDecode && strings.Contains(l, "%") && rePercent.MatchString(l); i++ {
		l = rePercent.ReplaceAllStringFunc(l, func(m string) string {
			b, _ := hex.DecodeString(m[1:])
			if b[0] < 0x20 || b[0] >= 0x7f {
				return m
			}
			return string(b)
		})
	}
	if strings.Contains(l, `"`) || strings.Contains(l, "'") {
		l = closeConcatenations(l)
	}
	return l
}

// confusables maps the Cyrillic and Greek letters that look like Latin
// ones, and the Latin small capitals, which NFKC leaves alone, to those
// Latin letters.
var confusables = func() map[rune]rune {
	const pairs = "аaвBеeкkоoрpсcуyхxіiјjѕsԁdԛqԝwһhүyӏlАAВBЕEКKМMНHОOРPСCТTХXУYІIЈJЅSҮYҺH" + // Cyrillic
		"αaοoρpιiκkνvτtυuχxεeγyΑAΒBΕEΖZΗHΙIΚKΜMΝNΟOΡPΤTΥYΧX" + // Greek
		"ᴀaʙbᴄcᴅdᴇeꜰfɢgʜhɪiᴊjᴋkʟlᴍmɴnᴏoᴘpʀrꜱsᴛtᴜuᴠvᴡwʏyᴢz" // small capitals
	m := map[rune]rune{}
	rs := []rune(pairs)
	for i := 0; i+1 < len(rs); i += 2 {
		m[rs[i]] = rs[i+1]
	}
	return m
}()

// latinLookalike returns the Latin letter r looks like when r is one of
// the confusables, else r itself.
func latinLookalike(r rune) rune {
	if c, ok := confusables[r]; ok {
		return c
	}
	return r
}

// withoutFormatChars returns l without its format characters (zero-width
// spaces and joiners, soft hyphens, BOM, bidi controls); with emoji set, a
// zero-width joiner after a character that is not a letter, which joins
// emoji (🧑‍💻), is kept.
func withoutFormatChars(l string, emoji bool) string {
	prev := rune(0)
	return strings.Map(func(r rune) rune {
		keep := !unicode.Is(unicode.Cf, r) || emoji && r == zeroWidthJoiner && !unicode.IsLetter(prev)
		prev = r
		if !keep {
			return -1
		}
		return r
	}, l)
}

// labelView returns content as the transcript detector reads it a second
// time: the head of each line where a speaker label stands (see
// labelHead), when it holds characters outside ASCII, with its format
// characters removed (see withoutFormatChars; emoji sequences kept), its
// letters made plain (see plainLetters: fullwidth, mathematical and
// accented letters, colons that look like one) and the Cyrillic, Greek
// and small capital look-alike letters of its words folded (see
// foldConfusables; a word of look-alikes alone when it spells a speaker
// label, "ΑΙ" or "МЕ"), so "Usеr:" with a Cyrillic е, "ＵＳＥＲ:",
// "Üser:" and "User∶" read as User:. Lines keep their numbers. It returns
// nil when content is ASCII or the view equals it.
func labelView(content []byte) []byte {
	if utf8.RuneCount(content) == len(content) {
		return nil // ASCII (content is valid UTF-8 here)
	}
	lines := strings.Split(string(content), "\n")
	changed := false
	for i, l := range lines {
		n := labelHead(l)
		if !hasNonASCII(l[:n]) {
			continue
		}
		if f := foldConfusables(plainLetters(withoutFormatChars(l[:n], true)), isSpeakerName); f != l[:n] {
			lines[i], changed = f+l[n:], true
		}
	}
	if !changed {
		return nil
	}
	return []byte(strings.Join(lines, "\n"))
}

// maxLabelHead bounds the head of a line labelView reads: a time stamp,
// quotation and list markers, emphasis and a label of mathematical
// letters (four bytes each) fit.
const maxLabelHead = 96

// labelHead returns the length of the head of l where a speaker label
// stands: up to and with the first colon (also fullwidth or small) in
// the first maxLabelHead bytes, or those bytes when l is a quotation or
// heading ("> usеr", "### Usеr"); 0 for a line without one.
func labelHead(l string) int {
	n := min(len(l), maxLabelHead)
	for n < len(l) && !utf8.RuneStart(l[n]) {
		n++
	}
	if i := strings.IndexAny(l[:n], ":：﹕"+colonLookalikes); i >= 0 {
		_, size := utf8.DecodeRuneInString(l[i:])
		return i + size
	}
	if t := strings.TrimLeft(l[:n], " \t"); t != "" && (t[0] == '>' || t[0] == '#') {
		return n
	}
	return 0
}

// colonLookalikes are characters that look like a colon and that NFKC
// leaves alone: ratio, modifier letter colons, Hebrew sof pasuq.
const colonLookalikes = "∶꞉˸׃"

// plainLetters returns s with compatibility forms replaced (NFKD:
// fullwidth and mathematical letters, the fullwidth colon), combining
// marks removed (Üser as User) and colonLookalikes written as colons.
func plainLetters(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case unicode.Is(unicode.Mn, r):
			return -1
		case strings.ContainsRune(colonLookalikes, r):
			return ':'
		}
		return r
	}, norm.NFKD.String(s))
}

// isSpeakerName reports a word that names a side of a chat as a label
// (see speakerLabel), or Q or A.
func isSpeakerName(w string) bool {
	w = strings.ToLower(w)
	_, ok := speakerLabel(w)
	return ok || w == "q" || w == "a"
}

// foldConfusables returns l with the look-alike letters of each word that
// disguises a Latin one written in Latin letters (see confusables): a
// word, a run of letters, all of whose letters outside ASCII have a Latin
// look-alike, and that either mixes them with ASCII letters ("pаssword"
// with a Cyrillic а, "tοken" with a Greek ο) or, once folded, is a word
// that names accepts (a credential field name for the secret scanners, a
// speaker label for the transcript detector). Words of Russian or Greek,
// which hold other letters too, and words of look-alikes alone that name
// nothing ("сор") are left as they are.
func foldConfusables(l string, names func(string) bool) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(l); {
		r, size := utf8.DecodeRuneInString(l[i:])
		if !unicode.IsLetter(r) {
			i += size
			continue
		}
		j, ascii, lookalike, other := i, false, false, false
		for j < len(l) {
			r, size = utf8.DecodeRuneInString(l[j:])
			if !unicode.IsLetter(r) {
				break
			}
			_, ok := confusables[r]
			ascii, lookalike, other = ascii || r < utf8.RuneSelf, lookalike || ok, other || r >= utf8.RuneSelf && !ok
			j += size
		}
		if lookalike && !other {
			folded := strings.Map(latinLookalike, l[i:j])
			if ascii || names(folded) {
				b.WriteString(l[last:i])
				b.WriteString(folded)
				last = j
			}
		}
		i = j
	}
	if last == 0 {
		return l
	}
	b.WriteString(l[last:])
	return b.String()
}

// closeConcatenations joins adjacent string literals, "ab" + "cd" and
// "ab" "cd", into "abcd", when the quotes on both sides match.
func closeConcatenations(l string) string {
	return reConcat.ReplaceAllStringFunc(l, func(m string) string {
		if m[0] != m[len(m)-1] || len(strings.TrimSpace(m[1:len(m)-1])) == 0 && !strings.ContainsAny(m[1:len(m)-1], " \t") {
			return m // "" is an empty literal, not a concatenation
		}
		return ""
	})
}

func hasNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '+' || c == '/' || c == '=' || c == '.'
}

// tokenRunEnd returns the length of the run of token bytes ending s.
func tokenRunEnd(s string) int {
	n := 0
	for n < len(s) && isTokenByte(s[len(s)-1-n]) {
		n++
	}
	return n
}

// tokenRunStart returns the length of the run of token bytes starting s.
func tokenRunStart(s string) int {
	n := 0
	for n < len(s) && isTokenByte(s[n]) {
		n++
	}
	return n
}

// mixedToken reports whether s mixes letters and digits, as tokens do and
// words do not.
func mixedToken(s string) bool {
	var letter, digit bool
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter = letter || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		digit = digit || '0' <= c && c <= '9'
	}
	return letter && digit
}

var reBlockScalar = regexp.MustCompile(`:\s*[>|][-+0-9]*\s*$`)

// joinContinuations returns line i of lines joined with the lines that
// continue it, and the index of the first line not consumed.
func joinContinuations(lines []string, i int) (string, int) {
	cur := lines[i]
	j := i + 1
	// A YAML block scalar whose lines are single tokens: join them.
	if reBlockScalar.MatchString(cur) {
		indent := -1
		var parts []string
		k := j
		for ; k < len(lines); k++ {
			l := lines[k]
			t := strings.TrimLeft(l, " \t")
			if t == "" {
				break
			}
			in := len(l) - len(t)
			if indent < 0 {
				indent = in
			}
			if in < indent || in == 0 || strings.ContainsAny(strings.TrimSpace(t), " \t") {
				break
			}
			parts = append(parts, strings.TrimSpace(t))
		}
		if len(parts) > 1 || len(parts) == 1 && k > j {
			head := reBlockScalar.ReplaceAllString(cur, ": ")
			return head + strings.Join(parts, ""), k
		}
	}
	// buf holds the joined line; run is the length of the token run at its
	// end. Appending keeps both up to date, so joining is linear.
	buf := []byte(strings.TrimRight(cur, " \t"))
	run := tokenRunEnd(string(buf))
	for j < len(lines) && len(buf) < maxJoined {
		next := strings.TrimLeft(lines[j], " \t")
		last := byte(0)
		if len(buf) > 0 {
			last = buf[len(buf)-1]
		}
		switch {
		case last == '\\':
			buf = buf[:len(buf)-1]
			run = tokenRunEnd(string(buf))
		case (last == '"' || last == '\'') && strings.HasPrefix(next, string(last)):
			buf, next = buf[:len(buf)-1], next[1:]
			run = tokenRunEnd(string(buf))
		default:
			// A token split over lines: the line ends in a token run and
			// the next starts with one that is not itself an assignment.
			start := tokenRunStart(next)
			cont := next[:start]
			if run < 8 || start < 6 || strings.Contains(strings.TrimRight(cont, "="), "=") ||
				!(mixedToken(cont) || last == '-' || last == '_') {
				return string(buf), j
			}
		}
		next = strings.TrimRight(next, " \t")
		if n := tokenRunStart(next); n == len(next) {
			run += n
		} else {
			run = tokenRunEnd(next)
		}
		buf = append(buf, next...)
		j++
	}
	return string(buf), j
}

// maxJoined bounds a line joined from continuations; no credential is
// longer, and the bound keeps a megabyte of base64 lines from becoming one
// line.
const maxJoined = 8 << 10

// decodeRuns returns the printable text that base64 and hex runs of at
// least minEncodedRun characters in line decode to.
func decodeRuns(line string) []string {
	var out []string
	if len(line) < minEncodedRun {
		return nil
	}
	for i := 0; i < len(line); {
		if !isBase64Byte(line[i]) {
			i++
			continue
		}
		j := i
		for j < len(line) && isBase64Byte(line[j]) {
			j++
		}
		for k := 0; k < 2 && j < len(line) && line[j] == '='; k++ {
			j++
		}
		if run := line[i:j]; len(run) >= minEncodedRun {
			if d, ok := decodeRun(run); ok {
				out = append(out, d)
			}
		}
		i = j
	}
	return out
}

func isBase64Byte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '_' || c == '-'
}

// decodeRun decodes a hex run (with or without 0x) or a base64 run, in the
// standard or URL alphabet, padded or not, and reports whether the result
// is mostly printable text.
func decodeRun(run string) (string, bool) {
	if h := strings.TrimPrefix(run, "0x"); isAllHex(h) {
		b, err := hex.DecodeString(h[:len(h)&^1])
		if err == nil && mostlyPrintable(b) {
			return string(b), true
		}
		return "", false
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(run); err == nil {
			return string(b), mostlyPrintable(b)
		}
	}
	return "", false
}

func isAllHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// mostlyPrintable reports whether b is UTF-8 text of which at least
// minPrintable of the runes are printable or whitespace.
func mostlyPrintable(b []byte) bool {
	if len(b) < 8 || !utf8.Valid(b) {
		return false
	}
	n, ok := 0, 0
	for _, r := range string(b) {
		n++
		if unicode.IsPrint(r) || r == '\n' || r == '\t' || r == '\r' {
			ok++
		}
	}
	return float64(ok) >= minPrintable*float64(n)
}

// hasRun reports whether line has a run of at least n base64 or hex
// characters, the only runs decodeRuns decodes.
func hasRun(line string, n int) bool {
	run := 0
	for i := 0; i < len(line); i++ {
		c := line[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '_' || c == '-' {
			run++
			if run >= n {
				return true
			}
			continue
		}
		run = 0
	}
	return false
}

// reFieldPhrase matches credential field names written in several words,
// which the detectors know as one: pass phrase, mot de passe (French),
// contraseña (Spanish, with its tilde).
var reFieldPhrase = regexp.MustCompile(`(?i)\bpass phrase\b|\bmot de passe\b|contraseña`)

// spelledWords returns l with words spelled out a character at a time and
// credential field names of several words (see reFieldPhrase) written as
// one word: "P-a-s-s-w-o-r-d" as "Password", "mot de passe" as
// "motdepasse", "contraseña" as "contrasena". A word is spelled out when
// four or more letters or digits, each standing alone, follow each other
// with the same separator (-, ., _ or a blank) between them.
func spelledWords(l string) string {
	var b strings.Builder
	last := 0
	for i := 0; i+1 < len(l); i++ {
		if !isAlnumByte(l[i]) || i > 0 && isAlnumByte(l[i-1]) || strings.IndexByte("-._ ", l[i+1]) < 0 {
			continue
		}
		sep, j, n := l[i+1], i, 1
		for j+2 < len(l) && l[j+1] == sep && isAlnumByte(l[j+2]) && (j+3 == len(l) || !isAlnumByte(l[j+3])) {
			j, n = j+2, n+1
		}
		if n < 4 {
			continue
		}
		b.WriteString(l[last:i])
		for k := i; k <= j; k += 2 {
			b.WriteByte(l[k])
		}
		last, i = j+1, j
	}
	if last > 0 {
		b.WriteString(l[last:])
		l = b.String()
	}
	if !strings.Contains(l, "hrase") && !strings.Contains(l, "asse") && !strings.Contains(l, "ñ") && !strings.Contains(l, "Ñ") {
		return l
	}
	return reFieldPhrase.ReplaceAllStringFunc(l, func(m string) string {
		m = strings.ReplaceAll(strings.ReplaceAll(m, " ", ""), "ñ", "n")
		return strings.ReplaceAll(m, "Ñ", "N")
	})
}

// leet maps the digits and symbols that stand for letters in disguised
// field names (p@ssw0rd, s3cr3t, t0k3n) to those letters.
var leet = strings.NewReplacer("0", "o", "1", "i", "3", "e", "4", "a", "@", "a", "$", "s", "5", "s", "7", "t")

// credentialWords are the credential field names that parts of a field
// name, joined, may spell (see plainFieldNames): the secretSuffixes,
// credentials, and key after each of keyQualifiers (apikey, clientkey).
var credentialWords = func() map[string]bool {
	m := map[string]bool{"credentials": true}
	for _, w := range secretSuffixes {
		m[w] = true
	}
	for q := range keyQualifiers {
		m[q+"key"] = true
	}
	return m
}()

// Bounds of a disguised field name: its bytes, and the characters of a
// separator between two of its parts.
const (
	maxFieldName      = 40
	maxSeparatorRunes = 3
)

// plainFieldNames returns l with each field name before an assignment
// operator (see operatorEnd) that is disguised, and then names a
// credential field, written plain. A name is disguised when digits and
// symbols stand for its letters (see leet: "p@ssw0rd: X" as "password:
// X") or when separators split a credential word into parts (see
// credentialWords): "pass_word: X", "pass.word = X", "Pass Word: X",
// "passWord: X", "secret~key ▸ X", "to·ken: X" as "password: X",
// "secretkey ▸ X", "token: X". A separator is a run of up to
// maxSeparatorRunes characters that are neither letters nor digits nor
// brackets, quotes, commas or semicolons; a change from lower to upper
// case also separates. Outside a markdown table row (see isTableRow) a
// pipe separates too: "pass|word: X". Blanks alone do not join a compound
// ending in key: "API key: X" is prose's way to name the field (see
// matchAssignment).
func plainFieldNames(l string) string {
	pipes := strings.IndexByte(l, '|') >= 0 && !isTableRow(l)
	var b strings.Builder
	last := 0
	for i := 0; i < len(l); i++ {
		if r, _ := utf8.DecodeRuneInString(l[i:]); !isOperatorRune(r) {
			continue
		}
		if _, ok := operatorEnd(l, i); !ok {
			continue
		}
		e := i
		for e > last && strings.IndexByte(" \t\"'*`", l[e-1]) >= 0 {
			e--
		}
		if e == last || !isPartByte(l[e-1]) {
			continue // no name before the operator
		}
		s, plain, ok := plainFieldName(l[last:e], pipes)
		if !ok {
			continue
		}
		b.WriteString(l[last : last+s])
		b.WriteString(plain)
		last = e
	}
	if last == 0 {
		return l
	}
	b.WriteString(l[last:])
	return b.String()
}

// A namePart is one part of a field name: its span, and whether the
// separator before it is blanks alone.
type namePart struct {
	start, end int
	blank      bool
}

// plainFieldName reads the field name that ends text and returns, when
// the name is disguised and names a credential field once written plain
// (see plainFieldNames), the offset in text from which it is rewritten and
// what replaces the rest; pipes says whether a pipe separates parts.
func plainFieldName(text string, pipes bool) (from int, plain string, ok bool) {
	parts := nameParts(text, pipes)
	n := len(parts)
	if n == 0 || isCredentialField(trailingKey(text)) {
		return 0, "", false
	}
	words := make([]string, n)
	for k, p := range parts {
		words[k] = leet.Replace(strings.ToLower(text[p.start:p.end]))
	}
	// The shortest run of last parts that spells a credential word.
	first, word := n, ""
	for k := n - 2; k >= 0 && word == ""; k-- {
		w := strings.Join(words[k:], "")
		if !credentialWords[w] {
			continue
		}
		spaced := true
		for _, p := range parts[k+1:] {
			spaced = spaced && p.blank
		}
		if !spaced || !strings.HasSuffix(w, "key") {
			first, word = k, w
		}
	}
	// Else the first part a leet spelling changes.
	changed := first
	for k := 0; k < first; k++ {
		if words[k] != strings.ToLower(text[parts[k].start:parts[k].end]) && strings.ContainsFunc(words[k], unicode.IsLetter) {
			changed = k
			break
		}
	}
	if changed == n {
		return 0, "", false
	}
	var b strings.Builder
	for k := changed; k < first; k++ {
		b.WriteString(words[k])
		if k+1 < n {
			b.WriteString(text[parts[k].end:parts[k+1].start])
		}
	}
	b.WriteString(word)
	from = parts[changed].start
	if !isCredentialField(trailingKey(text[:from] + b.String())) {
		return 0, "", false
	}
	return from, b.String(), true
}

// nameParts splits the field name ending text, at most maxFieldName
// bytes, into its parts (see plainFieldNames). Parts are ASCII letters,
// digits and the symbols of leet; the name starts after anything else but
// a separator (see isNameSeparator; pipes says whether a pipe is one).
func nameParts(text string, pipes bool) []namePart {
	var rev []namePart
	e := len(text)
	for e > 0 && len(text)-e < maxFieldName {
		s := e
		for s > 0 && e-s <= maxFieldName && isPartByte(text[s-1]) {
			s--
		}
		if s == e || e-s > maxFieldName {
			break
		}
		// camelCase: "passWord" is pass and Word.
		for k := e - 1; k > s; k-- {
			if 'A' <= text[k] && text[k] <= 'Z' && 'a' <= text[k-1] && text[k-1] <= 'z' {
				rev = append(rev, namePart{start: k, end: e})
				e = k
			}
		}
		j, runes, blank := s, 0, true
		for j > 0 && runes < maxSeparatorRunes {
			r, size := utf8.DecodeLastRuneInString(text[:j])
			if !isNameSeparator(r) && !(pipes && r == '|') {
				break
			}
			j -= size
			runes++
			blank = blank && (r == ' ' || r == '\t')
		}
		if j == s || j == 0 || !isPartByte(text[j-1]) || len(text)-j > maxFieldName {
			rev = append(rev, namePart{start: s, end: e})
			break
		}
		rev = append(rev, namePart{start: s, end: e, blank: blank})
		e = j
	}
	slices.Reverse(rev)
	if len(rev) > 0 {
		rev[0].blank = false
	}
	return rev
}

// isPartByte reports the bytes of a part of a field name: ASCII letters,
// digits and the symbols of leet.
func isPartByte(c byte) bool {
	return isAlnumByte(c) || c == '@' || c == '$'
}

// isNameSeparator reports the characters that may separate the parts of a
// disguised field name: neither letters, digits nor the symbols of leet,
// brackets, quotes, commas, semicolons or pipes (a pipe separates cells of
// a table, and parts of a name only outside one; see nameParts).
func isNameSeparator(r rune) bool {
	if r < utf8.RuneSelf {
		return !isPartByte(byte(r)) && !strings.ContainsRune("\"'`()[]{}<>,;:=|\n", r)
	}
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.In(r, unicode.Ps, unicode.Pe, unicode.Pi, unicode.Pf)
}

// trailingKey returns the run of field-name characters ending s, as
// matchAssignment reads a field name.
func trailingKey(s string) string {
	i := len(s)
	for i > 0 && isKeyChar(s[i-1]) {
		i--
	}
	return s[i:]
}

// isAlnumByte reports ASCII letters and digits.
func isAlnumByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// dehyphenate joins lines, trimmed, dropping a hyphen that ends a line.
func dehyphenate(lines []string) string {
	var b strings.Builder
	for k, l := range lines {
		l = strings.TrimSpace(l)
		if k < len(lines)-1 {
			l = strings.TrimSuffix(l, "-")
		}
		b.WriteString(l)
	}
	return b.String()
}

// reFieldAtEnd matches a line ending in a credential field name and its
// operator, whose value may stand alone on the next line.
var reFieldAtEnd = regexp.MustCompile(`(?i)(?:pass|pw|secret|token|key|credential)[\w.-]*["'*_\x60]*\s*(?::|=|\sis|\swas)[\s*_\x60]*$`)

// fieldAtEnd reports whether l ends in a credential field name and its
// operator (see reFieldAtEnd), testing the cheap conditions first.
func fieldAtEnd(l string) bool {
	t := strings.TrimRight(l, " \t*_`")
	if !strings.HasSuffix(t, ":") && !strings.HasSuffix(t, "=") && !hasSuffixFold(t, " is") && !hasSuffixFold(t, " was") {
		return false
	}
	return reFieldAtEnd.MatchString(l[max(0, len(l)-maxFieldTail):])
}

// maxFieldTail bounds the end of a line fieldAtEnd reads: a field name,
// its decoration and operator.
const maxFieldTail = 128

func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}

// maxHeaderWords bounds a markdown table cell read as a field name ("API
// key"); a cell of a delimited line is read as one when it is one word.
const maxHeaderWords = 3

// tableAssignments calls add with a "field: value" line, and the 1-based
// line it comes from, for each cell of a table that a credential field
// names: in a markdown table the cell after one holding a field name
// (| API_TOKEN | X |), and in any table the cell under a header holding
// one (user,password over admin,X). Tables are markdown rows (|) and
// tab- or comma-separated lines; a header holds for the lines below it
// with as many cells.
func tableAssignments(lines []string, add func(string, int)) {
	var header []string
	for i, l := range lines {
		cells, markdown := tableCells(l)
		if len(cells) < 2 {
			header = nil
			continue
		}
		if isTableRule(cells) {
			continue
		}
		words := 1
		if markdown {
			words = maxHeaderWords
		}
		if len(cells) != len(header) {
			header = cells
		} else {
			for k, h := range header {
				if f := cellField(h, words); f != "" && cells[k] != "" {
					add(f+": "+cells[k], i+1)
				}
			}
		}
		for k := 0; markdown && k+1 < len(cells); k++ {
			if f := cellField(cells[k], words); f != "" && cells[k+1] != "" {
				add(f+": "+cells[k+1], i+1)
			}
		}
	}
}

// tableCells splits a table row into its trimmed cells: at | for a
// markdown row (markdown true), else at tabs, else at commas; nil for a
// line that is none. A line with brackets, braces or semicolons is code,
// not a delimited row.
func tableCells(l string) (cells []string, markdown bool) {
	t := strings.TrimSpace(l)
	switch {
	case strings.Count(t, "|") >= 2:
		cells, markdown = strings.Split(strings.Trim(t, "|"), "|"), true
	case strings.ContainsAny(t, "(){}[];<>"):
		return nil, false
	case strings.Contains(t, "\t"):
		cells = strings.Split(t, "\t")
	case strings.Contains(t, ","):
		cells = strings.Split(t, ",")
	default:
		return nil, false
	}
	for k := range cells {
		cells[k] = strings.Trim(strings.TrimSpace(cells[k]), `"`)
	}
	return cells, markdown
}

// isTableRule reports a markdown table's separator row: |---|:--:|.
func isTableRule(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, "-: ") != "" {
			return false
		}
	}
	return true
}

// isTableRow reports a markdown table row: a line that starts or ends
// with a pipe.
func isTableRow(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(t, "|") || strings.HasSuffix(t, "|")
}

// cellField returns the cell c as a field name, "API key" as API_key, when
// it is at most words words and names a credential field, or "".
func cellField(c string, words int) string {
	w := strings.Fields(strings.Trim(c, "*_`"))
	if len(w) == 0 || len(w) > words {
		return ""
	}
	f := strings.Join(w, "_")
	if !isCredentialField(f) {
		return ""
	}
	return f
}

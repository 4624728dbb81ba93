package profiler

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sensitive columns
//
// A column is sensitive when, over the whole stream,
//   - at least 60% of its non-null values match one of the value classes
//     (email, phone, national-id, card, iban, ip, secret, or a name whose
//     first word is a common first name), taken together; the class shown
//     is the most frequent; or
//   - its name hints a class (phone, ssn, first_name, ...) and at least 30%
//     of its non-null values match that class; for a weak person-name hint
//     (name, customer, contact) 60% must be shaped like a name (one to
//     three capitalised words) and 30% must have several words or start
//     with a common first name; address and birth-date are only detected
//     with a hint (values with a number and words; dates); or
//   - its name says credentials (password, secret, api_key, token) and it
//     is not a numeric or boolean column.
//
// Emails include internationalised addresses (jörg@bücher.de), ones
// whose dots are the wide stops Chinese and Japanese input methods type
// (用户@例子。广告) or glued to the text before them (see hasGluedEmail) and addresses spelled out to dodge
// harvesters (alice [at] example [dot] com; see spelled.go). Nine bare digits are a US social security number
// only in a column whose name hints one or after words naming one (SSN
// 123456789), never by their values alone (see isNationalID).
//
// Detection runs on every value of the first piiSample values of a column;
// afterwards only while a class was seen in at least 5% of them or is
// hinted, so a column with no sign of personal data costs nothing more.
// Counting goes on over the whole stream, through the exact value counts
// and beyond.
//
// A sensitive column keeps its counts, missing share, distinct estimate,
// uniqueness and length range, and gains its class, the share of values
// matching it, up to three value shapes, each of at least 5% of the
// values and seen at least twice (digits as d, letter runs as a, A or
// Aa), and for emails up to five domains seen at least three times. It
// loses every value: catalog, rare values, numeric and date ranges (a
// birth date keeps years only), warnings' examples and its join sketch
// (hashes of a small space like SSNs are reversed by enumeration); its
// cells in sample rows are masks such as <email>.
//
// In every other column, a listed value, sample cell or example that
// contains a sensitive pattern anywhere (an email in free text, a card
// number in a note) is replaced by the class's mask.

const (
	piiSample     = 1024 // values classified with every detector
	piiActive     = 0.05 // share of the sample that keeps a class detected
	piiShare      = 0.60 // share of values making a column sensitive by value
	piiHintShare  = 0.30 // the same with a hint in the column's name
	piiMaxShapes  = 32
	piiMaxDomains = 64
	piiShapeLen   = 24
	scanWindow    = 256 // bytes of a shown value scanned for embedded patterns
)

// Sensitive describes a column detected as personal data or secrets; its
// values are never part of the profile.
type Sensitive struct {
	// Class names the kind of data: email, phone, national-id, card, iban,
	// ip, secret, name, address or birth-date.
	Class string `json:"class"`
	// Share is the share of non-null values that match the class (0..1).
	Share float64 `json:"share"`
	// Shapes are the commonest value shapes (digits as d, a run of
	// letters as a, A or Aa), each of at least 5% of the values and seen
	// at least twice.
	Shapes []ValueCount `json:"shapes,omitempty"`
	// Domains are the commonest email domains, each seen at least three
	// times; local parts are never kept.
	Domains []ValueCount `json:"domains,omitempty"`

	class Class
}

// piiAcc accumulates one column's evidence of sensitive data.
type piiAcc struct {
	hints      classSet
	strongName bool
	credential bool
	sampled    int64
	done       bool     // the sample is over
	active     classSet // classes still detected after the sample
	counts     [nBits]int64
	any        int64 // values matching a strongValue class

	shapes      map[string]int16
	shapeNames  []string
	shapeCounts []int64
	domains     map[string]int16
	domNames    []string
	domCounts   []int64
}

func newPIIAcc(column string) piiAcc {
	var p piiAcc
	p.hints, p.strongName, p.credential = hintsOf(column)
	return p
}

// classify sets the sensitive facts of a new distinct value in vi.
func (p *piiAcc) classify(s string, vi *valInfo) {
	vi.pshape, vi.dom = -1, -1
	if p.done && p.active == 0 {
		return
	}
	cs := detectValue(s, p.hints)
	if vi.kind == kDate && p.hints.has(ClassBirthDate) {
		cs |= setOf(ClassBirthDate)
	}
	if p.done {
		cs &= p.active
	}
	vi.cls = cs
	if cs != 0 || p.credential {
		vi.pshape = p.shapeIndex(s, cs)
	}
	if cs.has(ClassEmail) {
		vi.dom = p.domainIndex(emailDomain(s))
	}
}

// replay counts one occurrence of a classified value.
func (p *piiAcc) replay(vi *valInfo) {
	if vi.cls != 0 {
		for c := Class(1); c < nBits; c++ {
			if vi.cls.has(c) {
				p.counts[c]++
			}
		}
		if vi.cls&strongValue != 0 {
			p.any++
		}
	}
	if vi.pshape >= 0 {
		p.shapeCounts[vi.pshape]++
	}
	if vi.dom >= 0 {
		p.domCounts[vi.dom]++
	}
	if !p.done {
		p.sampled++
		if p.sampled >= piiSample {
			p.endSample()
		}
	}
}

// endSample keeps detecting only the hinted classes and the value
// classes seen often enough in the sample to make the column sensitive;
// the name, address and date shapes count only with a hint.
func (p *piiAcc) endSample() {
	p.done = true
	p.active = p.hints
	for c := Class(1); c < nBits; c++ {
		if strongValue.has(c) && float64(p.counts[c]) >= piiActive*float64(p.sampled) {
			p.active |= 1 << c
		}
	}
	if p.hints.has(ClassName) {
		p.active |= 1<<nameDict | 1<<nameLikely
	}
}

func (p *piiAcc) shapeIndex(s string, cs classSet) int16 {
	if len(p.shapeNames) >= piiMaxShapes {
		return -1
	}
	var buf [piiShapeLen + 8]byte
	var sh []byte
	if cs.has(ClassSecret) {
		sh = append(append(buf[:0], secretPrefix(s)...), "…"...)
	} else {
		sh = appendShape(buf[:0], s)
	}
	if i, ok := p.shapes[string(sh)]; ok {
		return i
	}
	if p.shapes == nil {
		p.shapes = map[string]int16{}
		p.shapeNames = []string{}
	}
	if len(p.shapeNames) >= piiMaxShapes {
		return -1
	}
	i := int16(len(p.shapeNames))
	p.shapes[string(sh)] = i
	p.shapeNames = append(p.shapeNames, string(sh))
	p.shapeCounts = append(p.shapeCounts, 0)
	return i
}

func (p *piiAcc) domainIndex(d string) int16 {
	d = strings.ToLower(d)
	if i, ok := p.domains[d]; ok {
		return i
	}
	if len(p.domNames) >= piiMaxDomains {
		return -1
	}
	if p.domains == nil {
		p.domains = map[string]int16{}
	}
	d = strings.Clone(d) // ToLower may return d, which is in the batch's buffers
	i := int16(len(p.domNames))
	p.domains[d] = i
	p.domNames = append(p.domNames, d)
	p.domCounts = append(p.domCounts, 0)
	return i
}

// coarseShape maps digits to d and each run of letters to a, A or Aa
// (lower-case, upper-case, capitalised), keeping other characters:
// "Ann-Marie Smith" is "Aa-Aa Aa", "555-12-3456" is "ddd-dd-dddd". Longer
// than piiShapeLen it is cut with "…".
func coarseShape(s string) string {
	var buf [piiShapeLen + 8]byte
	return string(appendShape(buf[:0], s))
}

// appendShape appends the coarse shape of s to b (no allocation while it
// fits b's capacity).
func appendShape(b []byte, s string) []byte {
	const (
		none = iota
		lower
		upper    // upper-case letters only so far
		capital1 // one upper-case letter
		capital  // upper-case, then lower-case
	)
	run := none
	flush := func() []byte {
		switch run {
		case lower:
			b = append(b, 'a')
		case upper, capital1:
			b = append(b, 'A')
		case capital:
			b = append(b, 'A', 'a')
		}
		run = none
		return b
	}
	for i := 0; i < len(s); {
		c := s[i]
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		i += size
		if len(b) >= piiShapeLen {
			run = none
			b = append(b, "…"...)
			break
		}
		isUp := isUpper(c) || c >= utf8.RuneSelf && unicode.IsUpper(r)
		isLetter := isUp || isLower(c) || c >= utf8.RuneSelf && unicode.IsLetter(r)
		switch {
		case isLetter:
			switch {
			case run == none && isUp:
				run = capital1
			case run == none:
				run = lower
			case run == capital1 && !isUp:
				run = capital
			case run == capital1:
				run = upper
			case run == upper && !isUp:
				run = capital
			}
			continue
		case isDigit(c):
			b = flush()
			b = append(b, 'd')
		case c < utf8.RuneSelf && !unicode.IsControl(r):
			b = flush()
			b = append(b, c)
		default:
			b = flush()
			b = append(b, '?')
		}
	}
	return flush()
}

// decide returns the column's class, or ClassNone, and the share of its
// nn non-null values matching it. numeric columns (numbers and booleans)
// are not made secret by a credential hint alone.
func (p *piiAcc) decide(nn int64, numeric bool) (Class, float64) {
	if nn == 0 {
		return ClassNone, 0
	}
	best, bestN := ClassNone, int64(-1)
	consider := func(c Class, n int64) {
		if n > bestN {
			best, bestN = c, n
		}
	}
	for c := Class(1); c < nClasses; c++ {
		need := piiHintShare
		if c == ClassName && !p.strongName {
			// a weak hint: mostly name-shaped, and not only single
			// capitalised words unknown as first names (Café, Straße)
			need = piiShare
			if float64(p.counts[nameLikely]) < piiHintShare*float64(nn) {
				continue
			}
		}
		if p.hints.has(c) && p.counts[c] > 0 && float64(p.counts[c]) >= need*float64(nn) {
			consider(c, p.counts[c])
		}
	}
	if float64(p.any) >= piiShare*float64(nn) {
		for c := Class(1); c < nClasses; c++ {
			if strongValue.has(c) {
				consider(c, p.counts[c])
			}
		}
		consider(ClassName, p.counts[nameDict])
	}
	if best == ClassNone && p.credential && !numeric {
		best, bestN = ClassSecret, p.counts[ClassSecret]
	}
	if best == ClassNone {
		return ClassNone, 0
	}
	return best, min(float64(bestN)/float64(nn), 1)
}

// summary builds the column's Sensitive description.
func (p *piiAcc) summary(cls Class, share float64, nn int64) *Sensitive {
	s := &Sensitive{Class: cls.String(), Share: round(share, 3), class: cls}
	s.Shapes = topCounts(p.shapeNames, p.shapeCounts, max(2, nn/20), 3)
	if cls == ClassEmail {
		s.Domains = topCounts(p.domNames, p.domCounts, 3, 5)
	}
	return s
}

// topCounts returns up to k names with their counts, most frequent first,
// each counted at least atLeast times.
func topCounts(names []string, counts []int64, atLeast int64, k int) []ValueCount {
	var out []ValueCount
	for i, n := range names {
		if counts[i] >= atLeast {
			out = append(out, ValueCount{Value: n, Count: counts[i]})
		}
	}
	sortCounts(out)
	return out[:min(k, len(out))]
}

func sortCounts(vs []ValueCount) {
	slices.SortFunc(vs, func(a, b ValueCount) int {
		if a.Count != b.Count {
			if a.Count > b.Count {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Value, b.Value)
	})
}

// findSensitive returns the class of personal data or secret found in s,
// whole or anywhere in its first scanWindow bytes (free text), or
// ClassNone.
func findSensitive(s string) Class {
	s = trimSpace(s)
	if len(s) > scanWindow {
		s = s[:scanWindow]
	}
	if s == "" {
		return ClassNone
	}
	if cs := detectValue(s, 0) & strongValue; cs != 0 {
		return firstClass(cs)
	}
	if hasSpelledEmail(s) || hasGluedEmail(s) {
		return ClassEmail
	}
	words := strings.FieldsFunc(s, isWordBreak)
	for i, w := range words {
		w = strings.Trim(w, "'")
		w = cutPossessive(strings.TrimRight(w, ".:!?"))
		w = strings.TrimPrefix(w, "mailto:")
		if c := firstClass(detectValue(w, 0) & strongValue &^ (1 << nameDict)); c != ClassNone {
			return c
		}
		if isNamedSSN(words[:i], w) {
			return ClassNationalID
		}
		// numbers written in groups: 4111 1111 1111 1111, +44 20 7946 0958,
		// DE89 3704 0044 0532 0130 00
		if groupStart(w) {
			for j := i + 1; j < min(len(words), i+8) && groupWord(words[j]); j++ {
				g := strings.TrimRight(strings.Join(words[i:j+1], " "), ".:!?")
				switch {
				case isCard(g):
					return ClassCard
				case isPhone(g, false):
					return ClassPhone
				case isNationalID(g, false):
					return ClassNationalID
				case isIBAN(g):
					return ClassIBAN
				}
			}
		}
		if i+1 < len(words) && nameWord(w) && startsName(words, i) && (isFirstName(w) || midSentence(words, i)) && nameAfter(words[i+1:]) {
			return ClassName
		}
	}
	return ClassNone
}

// hasGluedEmail reports whether s holds an address its words do not
// show: one whose domain has a wide stop (联系：用户@例子。广告，谢谢), as
// free text is cut into words at wide stops, which end sentences in
// Chinese and Japanese; or one glued to the text before it, which has
// no spaces between words in those languages (这是我的邮箱用户@例子.广告).
// So the address is read around each @ or ＠: its local part the at
// most 64 bytes of runes a local part may hold before it, its domain the
// labels, dots and wide stops after it, without a closing stop.
//
// A mention with text glued before its @ and a sentence after its stop
// reads as an address too: 请联系@张三。谢谢 is 请联系@张三.谢谢. Nothing in
// its spelling tells it from 用户@例子。广告, so it is masked: that hides a
// sentence (and a mention names a person anyway), where reading it as
// prose would show an address. A mention with nothing glued before the @
// (请联系 @张三。谢谢, @张三。谢谢), or whose stop ends the text
// (请联系@张三。), is no address.
func hasGluedEmail(s string) bool {
	for at, sign := range s {
		if sign != '@' && sign != '＠' {
			continue
		}
		start := at
		for start > 0 {
			r, n := utf8.DecodeLastRuneInString(s[:start])
			if !isLocalRune(r) || at-(start-n) > maxLocalPart {
				break
			}
			start -= n
		}
		domain := s[at+utf8.RuneLen(sign):]
		if end := strings.IndexFunc(domain, notDomainRune); end >= 0 {
			domain = domain[:end]
		}
		after := s[at+utf8.RuneLen(sign)+len(domain):]
		if isEmail(s[start:at]+"@"+trimLabelEnd(domain)) && !isGitRemote(s[:start], s[start:at], after) {
			return true
		}
	}
	return false
}

// isGitRemote reports whether an address-like local@domain, with the
// text before and after it, is a git remote's host over SSH: the account
// git, which git hosts give every SSH user, then a repository path, in
// scp-like form (git@github.com:org/repo.git) or in a URL
// (ssh://git@github.com/org/repo.git). It names no one. Another account
// (alice@host:/srv, or a key or token in a URL's user part) stays
// masked.
func isGitRemote(before, local, after string) bool {
	if strings.HasSuffix(before, ":") {
		local = strings.TrimPrefix(local, "//")
	}
	if local != "git" || len(after) < 2 || after[0] != ':' && after[0] != '/' {
		return false
	}
	r, _ := utf8.DecodeRuneInString(after[1:])
	return !unicode.IsSpace(r)
}

// maxLocalPart is the longest local part of an address, in bytes (RFC
// 5321).
const maxLocalPart = 64

// notDomainRune reports whether r can be no part of a domain: no label
// rune, hyphen, dot or wide stop.
func notDomainRune(r rune) bool {
	return notLabelRune(r) && !strings.ContainsRune("-."+wideStops, r)
}

// isWordBreak reports whether r separates the words of free text: a
// space, the ASCII punctuation that separates or brackets values
// (,;"()<>[]{}|), or the full-width punctuation of Chinese and Japanese
// text (联系：用户@例子.广告，谢谢).
func isWordBreak(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || '\t' <= r && r <= '\r' || strings.IndexByte(",;\"()<>[]{}|", byte(r)) >= 0
	}
	return unicode.IsSpace(r) || strings.ContainsRune("，。、：；（）「」『』《》【】！？", r)
}

// midSentence reports whether words[i] follows a lower-case word in the
// same sentence ("spoke with Tomasz"): capitalised there, it is a proper
// noun rather than a title-cased label ("Central African Republic").
func midSentence(words []string, i int) bool {
	if i == 0 {
		return false
	}
	prev := words[i-1]
	if !isLower(prev[0]) || strings.ContainsAny(prev[len(prev)-1:], ".!?:") {
		return false
	}
	switch prev {
	case "and", "or", "of", "the", "de", "del", "la", "le", "du", "des", "da", "y", "et", "und", "van", "von", "der", "den", "in", "on", "at":
		return false // inside a title-cased name: Turks and Caicos Islands
	}
	return true
}

// startsName reports whether words[i] can start a person's name: it is
// the first word or follows a word that is not capitalised (Northern
// Mariana Islands is a place).
func startsName(words []string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeRuneInString(words[i-1])
	return !unicode.IsUpper(r)
}

// nameAfter reports whether words start with a capitalised word, after
// at most one particle (van, de).
func nameAfter(words []string) bool {
	if len(words) > 1 && isParticle(words[0]) {
		words = words[1:]
	}
	// capitalised words ending in a word for a place or an organisation
	// name that, not a person: Henry Hudson Pkwy, Control Board
	for _, w := range words[:min(3, len(words))] {
		w = strings.TrimRight(w, ".:!?,)")
		if placeWords[strings.ToLower(w)] {
			return false
		}
		if !nameWord(w) {
			break
		}
	}
	return nameWord(strings.TrimRight(words[0], ".:!?"))
}

// placeWords end the names of places and organisations.
var placeWords = map[string]bool{
	"board": true, "department": true, "council": true, "commission": true, "authority": true, "agency": true,
	"park": true, "pkwy": true, "parkway": true, "expwy": true, "expressway": true, "bridge": true, "tunnel": true,
	"street": true, "st": true, "avenue": true, "ave": true, "road": true, "rd": true, "boulevard": true, "blvd": true,
	"highway": true, "hwy": true, "drive": true, "dr": true, "square": true, "plaza": true, "station": true,
	"airport": true, "hospital": true, "school": true, "university": true, "college": true, "center": true,
	"centre": true, "company": true, "corporation": true, "inc": true, "ltd": true, "llc": true, "bank": true,
}

// groupStart reports whether w can begin a number written in groups:
// a digit, +, or an IBAN's country and check digits.
func groupStart(w string) bool {
	return w != "" && (isDigit(w[0]) || w[0] == '+') ||
		len(w) >= 4 && isUpper(w[0]) && isUpper(w[1]) && isDigit(w[2]) && isDigit(w[3])
}

// groupWord reports whether w can continue a number written in groups.
func groupWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; !isDigit(c) && !isUpper(c) && c != '-' && c != '.' {
			return false
		}
	}
	return w != ""
}

func firstClass(cs classSet) Class {
	for c := Class(1); c < nClasses; c++ {
		if cs.has(c) {
			return c
		}
	}
	if cs.has(nameDict) {
		return ClassName
	}
	return ClassNone
}

// maskText returns s, or the mask of the sensitive class found in it.
func maskText(s string) string {
	if c := findSensitive(s); c != ClassNone {
		return c.Mask()
	}
	return s
}

// masker masks the values a profile shows: with the mask of the class
// maskText finds, else, when the caller's scanner (Options.Secrets) finds
// a credential, with <secret>.
type masker struct{ secrets func(string) bool }

func (m masker) text(s string) string {
	if t := maskText(s); t != s || m.secrets == nil || isMask(s) {
		return t
	}
	if m.secrets(s) {
		return ClassSecret.Mask()
	}
	return s
}

// catalog masks the listed values of a column that is not sensitive as a
// whole; rare values that became a mask join the mask's count among the
// top values.
func (m masker) catalog(cp *ColumnProfile) {
	top := m.counts(cp.Top)
	var kept []ValueCount
	moved := false
	for _, v := range m.counts(cp.Rare) {
		if isMask(v.Value) {
			top, moved = append(top, v), true
		} else {
			kept = append(kept, v)
		}
	}
	if moved {
		top = m.counts(top)
	}
	cp.Top, cp.Rare = top, kept
}

func isMask(s string) bool {
	for c := Class(1); c < nClasses; c++ {
		if s == c.Mask() {
			return true
		}
	}
	return false
}

// counts replaces listed values holding sensitive data by their class's
// mask, merging values that became the same mask; it returns vs when
// nothing changed.
func (m masker) counts(vs []ValueCount) []ValueCount {
	var out []ValueCount
	at := map[string]int{}
	changed := false
	for _, v := range vs {
		if mv := m.text(v.Value); mv != v.Value || isMask(v.Value) {
			changed = true
			v.Value = mv
			if i, ok := at[mv]; ok {
				out[i].values = max(out[i].values, 1) + max(v.values, 1)
				lo := lowerBound(out[i]) + lowerBound(v)
				out[i].Count += v.Count
				out[i].Approx = out[i].Approx || v.Approx
				if out[i].Approx {
					out[i].Min = lo
				}
				continue
			}
			at[mv] = len(out)
		}
		out = append(out, v)
	}
	if !changed {
		return vs
	}
	sortCounts(out)
	return out
}

// lowerBound is the least count v can stand for.
func lowerBound(v ValueCount) int64 {
	if v.Approx {
		return v.Min
	}
	return v.Count
}

package profiler

import (
	"math"
	"net/netip"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Class is a kind of personal data or secret a column or value can hold.
type Class uint8

// The classes the profiler detects. ClassNone is no class.
const (
	ClassNone Class = iota
	ClassEmail
	ClassPhone
	ClassNationalID
	ClassCard
	ClassIBAN
	ClassIP
	ClassSecret
	ClassName
	ClassAddress
	ClassBirthDate
	nClasses
)

var classNames = [nClasses]string{"", "email", "phone", "national-id", "card", "iban", "ip", "secret", "name", "address", "birth-date"}

// String returns the class's name as written in profiles ("email",
// "national-id", ...), or "" for ClassNone.
func (c Class) String() string {
	if c >= nClasses {
		return ""
	}
	return classNames[c]
}

// Mask is what a value of the class is replaced with wherever a profile
// would otherwise show it, e.g. "<email>".
func (c Class) Mask() string { return "<" + c.String() + ">" }

// classSet is a set of classes, one bit per class, and two more bits:
// nameDict marks a value that is a person's name by the first-name list
// (two or three words, the first a common first name), which counts
// without a hint in the column's name; nameLikely marks a name-shaped
// value of several words or starting with a common first name, which a
// weak hint (a column called name) needs besides the shape.
type classSet uint16

const (
	nameDict   = nClasses
	nameLikely = nClasses + 1
	nBits      = nClasses + 2
)

func (s classSet) has(c Class) bool { return s&(1<<c) != 0 }

func setOf(cs ...Class) classSet {
	var s classSet
	for _, c := range cs {
		s |= 1 << c
	}
	return s
}

// strongValue are the classes whose value shape alone is evidence enough:
// a column where most values match one of them is sensitive whatever its
// name.
var strongValue = setOf(ClassEmail, ClassPhone, ClassNationalID, ClassCard, ClassIBAN, ClassIP, ClassSecret, nameDict)

// detectValue returns the classes a whole, trimmed, non-empty value
// matches. hints are the classes the column's name suggests: a few
// formats are only taken for a class with its hint (ten bare digits are a
// phone number only in a column named phone).
func detectValue(s string, hints classSet) classSet {
	var out classSet
	if len(s) > 600 {
		return 0
	}
	if len(s) < 5 {
		return nameSet(s)
	}
	if strings.IndexByte(s, '@') > 0 && isEmail(s) {
		return setOf(ClassEmail)
	}
	if _, ok := spelledEmail(s); ok {
		return setOf(ClassEmail)
	}
	if isSecret(s) || hasURLUser(s) {
		return setOf(ClassSecret)
	}
	if isIP(s) {
		return setOf(ClassIP)
	}
	if isCard(s) {
		out |= setOf(ClassCard)
	}
	if isPhone(s, hints.has(ClassPhone)) {
		out |= setOf(ClassPhone)
	}
	if isNationalID(s, hints.has(ClassNationalID)) || namedSSN(s) {
		out |= setOf(ClassNationalID)
	}
	if isIBAN(s) {
		out |= setOf(ClassIBAN)
	}
	if out != 0 {
		return out
	}
	out |= nameSet(s)
	if isAddressShape(s) {
		out |= setOf(ClassAddress)
	}
	return out
}

// nameSet returns the name bits of s: ClassName for a name's shape, and
// nameDict and nameLikely as the first-name list and word count say.
func nameSet(s string) classSet {
	n := nameWords(s)
	if n == 0 {
		return 0
	}
	out := setOf(ClassName)
	first, _, _ := strings.Cut(s, " ")
	dict := isFirstName(first)
	if n >= 2 && dict {
		out |= 1 << nameDict
	}
	if n >= 2 || dict {
		out |= 1 << nameLikely
	}
	return out
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isAlnum(c byte) bool { return isDigit(c) || isUpper(c) || isLower(c) }

// isEmail reports whether s is one address local@domain.tld. Besides
// ASCII, the local part and the domain's labels may hold Unicode letters,
// marks and digits (jörg@bücher.de, 用户@例子.广告), and the domain's dots
// may be wide stops (用户@例子。广告): see isLocalRune and isDomain.
func isEmail(s string) bool {
	at := strings.LastIndexByte(s, '@')
	if at < 1 || at > 64 || len(s)-at < 5 {
		return false
	}
	for _, r := range s[:at] {
		if !isLocalRune(r) {
			return false
		}
	}
	return isDomain(s[at+1:])
}

// emailDomain returns the domain of a value detectValue found an email,
// a plain or a spelled-out address, with its dots written . whatever
// they were (例子。广告 is 例子.广告), as IDNA reads them.
func emailDomain(s string) string {
	if a, ok := spelledEmail(s); ok {
		s = a
	}
	return wideStopDots.Replace(s[strings.LastIndexByte(s, '@')+1:])
}

// wideStops are the full stops other than . that IDNA (UTS #46) reads as
// the dot between a domain's labels: the ideographic full stop U+3002,
// the full-width full stop U+FF0E and the half-width ideographic full
// stop U+FF61. Chinese and Japanese input methods type them for a dot,
// so an address is often written 用户@例子。广告 or zhang@example．com.
const wideStops = "。．｡"

var wideStopDots = strings.NewReplacer("。", ".", "．", ".", "｡", ".")

// isLocalRune reports whether r may be part of an address's local part:
// an ASCII letter, digit or one of RFC 5322's atext signs, or a Unicode
// letter, mark or digit (RFC 6531).
func isLocalRune(r rune) bool {
	if r < utf8.RuneSelf {
		return isAlnum(byte(r)) || strings.ContainsRune(".!#$%&'*+/=?^_`{|}~-", r)
	}
	return isWordRune(r)
}

// isWordRune reports whether r, beyond ASCII, is a letter, a mark (the
// vowel signs of Devanagari, say) or a digit.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r)
}

// isDomain reports whether d is a host name under a top-level domain:
// two or more labels of letters, digits and inner hyphens, Unicode ones
// included (bücher.de, 例子.广告), separated by dots or wide stops
// (例子。广告); the last label is a top-level domain (isTLD).
func isDomain(d string) bool {
	labels := 0
	for {
		label, rest, more := cutLabel(d)
		if !isLabel(label) {
			return false
		}
		labels++
		if !more {
			return labels >= 2 && isTLD(label)
		}
		d = rest
	}
}

// cutLabel slices d around its first dot, a . or one of wideStops,
// returning the label before it and the text after it.
func cutLabel(d string) (label, rest string, more bool) {
	i := strings.IndexAny(d, "."+wideStops)
	if i < 0 {
		return d, "", false
	}
	_, n := utf8.DecodeRuneInString(d[i:])
	return d[:i], d[i+n:], true
}

// isLabel reports whether l is one label of a host name: letters, digits
// and hyphens, not starting or ending with a hyphen.
func isLabel(l string) bool {
	if l == "" || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for _, r := range l {
		if r < utf8.RuneSelf && !isAlnum(byte(r)) && r != '-' || r >= utf8.RuneSelf && !isWordRune(r) {
			return false
		}
	}
	return true
}

// isTLD reports whether l can be a top-level domain: two or more ASCII
// letters (com), a punycode label (xn--p1ai), or two or more Unicode
// letters and marks (рф, 广告, भारत).
func isTLD(l string) bool {
	if len(l) > 4 && lowerIs(l[:4], "xn--") {
		return true // isLabel checked the rest
	}
	n := 0
	for _, r := range l {
		switch {
		case r < utf8.RuneSelf && !isUpper(byte(r)) && !isLower(byte(r)):
			return false
		case r >= utf8.RuneSelf && !unicode.IsLetter(r) && (n == 0 || !unicode.IsMark(r)):
			return false
		}
		n++
	}
	return n >= 2
}

// secretPrefixes are the prefixes of well-known credential formats, each
// with the least number of token characters that must follow.
var secretPrefixes = []struct {
	p    string
	rest int
}{
	{"npm_", 30}, {"ghp_", 30}, {"gho_", 30}, {"ghu_", 30}, {"ghs_", 30}, {"ghr_", 30},
	{"github_pat_", 30}, {"glpat-", 20}, {"sk-", 20}, {"sk_live_", 16}, {"sk_test_", 16},
	{"rk_live_", 16}, {"rk_test_", 16}, {"xoxb-", 10}, {"xoxp-", 10}, {"xoxa-", 10},
	{"xoxr-", 10}, {"xoxs-", 10}, {"xapp-", 10}, {"AKIA", 16}, {"ASIA", 16}, {"AIza", 30},
	{"hf_", 30}, {"SG.", 30}, {"shpat_", 30}, {"shpss_", 30}, {"dop_v1_", 30}, {"pypi-", 30},
}

func isTokenChar(c byte) bool {
	return isAlnum(c) || c == '_' || c == '-' || c == '.' || c == '+' || c == '/' || c == '='
}

// secretPrefix returns the known credential prefix s starts with, or "".
func secretPrefix(s string) string {
	for _, sp := range secretPrefixes {
		if len(s) >= len(sp.p)+sp.rest && strings.HasPrefix(s, sp.p) {
			ok := true
			for i := len(sp.p); i < len(s); i++ {
				if !isTokenChar(s[i]) {
					ok = false
					break
				}
			}
			if ok {
				return sp.p
			}
		}
	}
	return ""
}

// isSecret reports whether s looks like a credential: a known prefix, a
// JWT, a PEM block, or a long high-entropy token of mixed letters and
// digits. Hex strings (hashes, commit ids) and UUIDs are not secrets by
// shape alone.
func isSecret(s string) bool {
	if len(s) < 16 {
		return false
	}
	if strings.HasPrefix(s, "-----BEGIN ") {
		return true
	}
	if secretPrefix(s) != "" || isJWT(s) {
		return true
	}
	return highEntropy(s)
}

// hasURLUser reports whether s holds a URL with a user in its authority
// (postgres://app:pass@10.0.0.5/prod, https://TOKEN@github.com/…): a
// password, a token passed as the user, or an account name, none of which
// a profile shows. The account git of a git remote
// (ssh://git@github.com/org/repo.git) names no one and is not counted.
func hasURLUser(s string) bool {
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			return false
		}
		s = s[i+3:]
		authority := s
		if end := strings.IndexFunc(s, endsAuthority); end >= 0 {
			authority = s[:end]
		}
		if at := strings.LastIndexByte(authority, '@'); at > 0 && authority[:at] != "git" {
			return true
		}
	}
}

// endsAuthority reports whether r ends a URL's authority: a path, query
// or fragment begins, or the URL ends in text.
func endsAuthority(r rune) bool {
	return strings.ContainsRune("/?#\"'<>()[]{}", r) || unicode.IsSpace(r)
}

func isJWT(s string) bool {
	if !strings.HasPrefix(s, "eyJ") {
		return false
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 || len(parts[0]) < 10 || len(parts[1]) < 10 {
		return false
	}
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			if c := p[i]; !isAlnum(c) && c != '_' && c != '-' && c != '=' {
				return false
			}
		}
	}
	return true
}

func highEntropy(s string) bool {
	if len(s) < 24 || len(s) > 512 {
		return false
	}
	var up, lo, dg int
	var freq [256]int
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isUpper(c):
			up++
		case isLower(c):
			lo++
		case isDigit(c):
			dg++
		case c == '_' || c == '-' || c == '+' || c == '/' || c == '=':
		default:
			return false
		}
		freq[c]++
	}
	if up < 2 || lo < 2 || dg < 2 {
		return false
	}
	var h float64
	n := float64(len(s))
	for _, f := range freq {
		if f > 0 {
			p := float64(f) / n
			h -= p * math.Log2(p)
		}
	}
	// a random base62 string of 24 characters has about 4.3 bits per
	// character; words and identifiers stay well below
	return h >= 4.0 && float64(up+lo+dg) >= 0.9*n && caseChanges(s) >= len(s)/5
}

// caseChanges counts changes between letter case and digits along s: a
// random token changes often, CamelCaseWords and snake_case rarely.
func caseChanges(s string) int {
	n, last := 0, byte(0)
	for i := 0; i < len(s); i++ {
		var k byte
		switch c := s[i]; {
		case isUpper(c):
			k = 1
		case isLower(c):
			k = 2
		case isDigit(c):
			k = 3
		default:
			continue
		}
		if last != 0 && k != last {
			n++
		}
		last = k
	}
	return n
}

func isIP(s string) bool {
	if len(s) < 7 || len(s) > 45 {
		return false
	}
	if !strings.Contains(s, ":") && strings.Count(s, ".") != 3 {
		return false
	}
	a, err := netip.ParseAddr(s)
	return err == nil && !a.Is4In6()
}

// digitsOf returns the digits of s if s holds only digits and the given
// separators, and how many separators it had.
func digitsOf(s, seps string) (string, int, bool) {
	var b [40]byte
	n, ns := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isDigit(c):
			if n == len(b) {
				return "", 0, false
			}
			b[n] = c
			n++
		case strings.IndexByte(seps, c) >= 0:
			ns++
		default:
			return "", 0, false
		}
	}
	return string(b[:n]), ns, n > 0
}

func luhn(d string) bool {
	sum := 0
	for i := 0; i < len(d); i++ {
		v := int(d[len(d)-1-i] - '0')
		if i%2 == 1 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

// isCard reports whether s is a payment card number: 13 to 19 digits,
// optionally grouped by spaces or dashes, with a card network's prefix
// and a valid Luhn check digit.
func isCard(s string) bool {
	if len(s) < 13 || len(s) > 23 {
		return false
	}
	d, _, ok := digitsOf(s, " -")
	if !ok || len(d) < 13 || len(d) > 19 || !luhn(d) {
		return false
	}
	p2 := int(d[0]-'0')*10 + int(d[1]-'0')
	p4 := p2*100 + int(d[2]-'0')*10 + int(d[3]-'0')
	switch {
	case d[0] == '4': // Visa
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720: // Mastercard
	case p2 == 34 || p2 == 37: // Amex
	case p2 == 30 || p2 == 36 || p2 == 38 || p2 == 39: // Diners
	case p2 == 35 || p2 == 62 || p2 == 65 || p2 == 60 || p2 == 64: // JCB, UnionPay, Discover
	case p2 == 50 || (p2 >= 56 && p2 <= 58) || p2 == 63 || p2 == 67: // Maestro
	default:
		return false
	}
	return true
}

// isPhone reports whether s is a telephone number: international (+ or
// 00 and 8–15 digits), North American (NXX-NXX-XXXX with separators or
// parentheses), or national with a trunk 0 and separators (020 7946 0958).
// With hint, any 7–15 digits with separators or none count.
func isPhone(s string, hint bool) bool {
	if len(s) < 7 || len(s) > 24 {
		return false
	}
	plus := s[0] == '+'
	body := s
	if plus {
		body = s[1:]
	}
	d, ns, ok := digitsOf(body, " -.()/")
	if !ok || len(d) < 7 || len(d) > 15 {
		return false
	}
	switch {
	case plus:
		return len(d) >= 8 && d[0] != '0'
	case strings.HasPrefix(body, "00") && ns > 0:
		return len(d) >= 10
	}
	if hint {
		return true
	}
	if ns == 0 {
		return false
	}
	nanp := d
	if len(nanp) == 11 && nanp[0] == '1' {
		nanp = nanp[1:]
	}
	if len(nanp) == 10 && nanp[0] >= '2' && nanp[3] >= '2' && groupsMatch(body, 3, 3, 4) {
		return true
	}
	return (len(d) == 10 || len(d) == 11) && d[0] == '0' && d[1] != '0' && minGroup(body) >= 2
}

// groupsMatch reports whether the digit groups of s end with the given
// lengths (a leading country code may precede them).
func groupsMatch(s string, want ...int) bool {
	g := digitGroups(s)
	if len(g) < len(want) {
		return false
	}
	g = g[len(g)-len(want):]
	for i := range want {
		if g[i] != want[i] {
			return false
		}
	}
	return true
}

func digitGroups(s string) []int {
	var g []int
	n := 0
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			n++
		} else if n > 0 {
			g = append(g, n)
			n = 0
		}
	}
	if n > 0 {
		g = append(g, n)
	}
	return g
}

func minGroup(s string) int {
	m := math.MaxInt
	for _, n := range digitGroups(s) {
		m = min(m, n)
	}
	return m
}

// isNationalID reports whether s is a national identity number: a US
// social security number (123-45-6789; nine bare digits only with hint),
// a UK National Insurance number (AB 12 34 56 C), a Canadian social
// insurance number (123-456-782, Luhn-checked) or a Spanish DNI/NIE
// (12345678Z, X1234567L, check letter verified).
//
// Nine bare digits are a social security number only where something
// names one: the column's name (hint) or the words before them
// (namedSSN). The values of a column are no evidence: ZIP+4 codes written
// without their dash, bank routing numbers, order and account ids are
// nine digits too, with leading zeros kept, and the SSN rules (no area
// 000, 666 or 9xx, no group 00, no serial 0000) leave about nine in ten
// nine-digit numbers valid.
func isNationalID(s string, hint bool) bool {
	if len(s) < 8 || len(s) > 13 {
		return false
	}
	if d, ns, ok := digitsOf(s, "- "); ok {
		switch {
		case len(d) == 9 && (ns == 2 && groupsMatch(s, 3, 2, 4) || ns == 0 && hint):
			return ssnValid(d)
		case len(d) == 9 && ns == 2 && groupsMatch(s, 3, 3, 3):
			return d[0] != '0' && d[0] != '8' && luhn(d)
		}
		return false
	}
	return isNINO(s) || isDNI(s)
}

// namedSSN reports whether the value s is a social security number of
// nine bare digits after words naming it: "SSN 123456789".
func namedSSN(s string) bool {
	if len(s) < 12 || len(s) > 48 || !isDigit(s[len(s)-1]) || !strings.ContainsAny(s, "sS") {
		return false
	}
	f := strings.Fields(s)
	return isNamedSSN(f[:len(f)-1], f[len(f)-1])
}

// isNamedSSN reports whether w, a word of text after the words before,
// is a valid social security number of nine bare digits named as one by
// the words before it or a prefix of its own: SSN, ssn:, SSN#, social
// security no., Social Security Number, soc. sec. #.
func isNamedSSN(before []string, w string) bool {
	j := len(w)
	for j > 0 && isDigit(w[j-1]) {
		j--
	}
	if len(w)-j != 9 || !ssnValid(w[j:]) {
		return false
	}
	var names []string
	for _, n := range append(slices.Clip(before[max(0, len(before)-4):]), w[:j]) {
		if n = strings.ToLower(strings.Trim(n, "#:=.-")); n != "" {
			names = append(names, n)
		}
	}
	if k := len(names) - 1; k >= 0 && ssnNumberWords[names[k]] {
		names = names[:k]
	}
	k := len(names)
	return k >= 1 && names[k-1] == "ssn" ||
		k >= 2 && (names[k-2] == "social" && names[k-1] == "security" || names[k-2] == "soc" && names[k-1] == "sec")
}

// ssnNumberWords may follow the name of a social security number.
var ssnNumberWords = wordSet("no nr num number")

func ssnValid(d string) bool {
	area, group, serial := d[:3], d[3:5], d[5:]
	return area != "000" && area != "666" && area[0] != '9' && group != "00" && serial != "0000"
}

func isNINO(s string) bool {
	t := strings.ReplaceAll(strings.ToUpper(s), " ", "")
	if len(t) != 9 {
		return false
	}
	if strings.IndexByte("DFIQUV", t[0]) >= 0 || strings.IndexByte("DFIQUVO", t[1]) >= 0 || !isUpper(t[0]) || !isUpper(t[1]) {
		return false
	}
	switch t[:2] {
	case "BG", "GB", "KN", "NK", "NT", "TN", "ZZ":
		return false
	}
	for i := 2; i < 8; i++ {
		if !isDigit(t[i]) {
			return false
		}
	}
	return t[8] >= 'A' && t[8] <= 'D'
}

func isDNI(s string) bool {
	if len(s) != 9 {
		return false
	}
	t := strings.ToUpper(s)
	lead := int64(0)
	switch t[0] {
	case 'X':
	case 'Y':
		lead = 1
	case 'Z':
		lead = 2
	default:
		if !isDigit(t[0]) {
			return false
		}
		lead = int64(t[0] - '0')
	}
	n := lead
	for i := 1; i < 8; i++ {
		if !isDigit(t[i]) {
			return false
		}
		n = n*10 + int64(t[i]-'0')
	}
	return t[8] == "TRWAGMYFPDXBNJZSQVHLCKE"[n%23]
}

// isIBAN reports whether s is an IBAN (spaces allowed) whose mod-97
// check holds.
func isIBAN(s string) bool {
	if len(s) < 15 || len(s) > 42 {
		return false
	}
	var b [34]byte
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' {
			continue
		}
		if isLower(c) {
			c -= 'a' - 'A'
		}
		if !isUpper(c) && !isDigit(c) || n == len(b) {
			return false
		}
		b[n] = c
		n++
	}
	t := b[:n]
	if n < 15 || !isUpper(t[0]) || !isUpper(t[1]) || !isDigit(t[2]) || !isDigit(t[3]) {
		return false
	}
	rem := 0
	for i := range n {
		c := t[(i+4)%n]
		if isDigit(c) {
			rem = (rem*10 + int(c-'0')) % 97
		} else {
			rem = (rem*100 + int(c-'A'+10)) % 97
		}
	}
	return rem == 1
}

// nameWords returns how many words s has if it is shaped like a person's
// name: one to three capitalised words (four with a particle such as
// "van" or "de"), initials like "J." allowed, "Smith, John" allowed; else
// 0.
func nameWords(s string) int {
	if len(s) > 60 {
		return 0
	}
	words := strings.Split(s, " ")
	if len(words) > 4 {
		return 0
	}
	n := 0
	for i, w := range words {
		if i == 0 {
			w = strings.TrimSuffix(w, ",")
		}
		switch {
		case w == "":
			return 0
		case i > 0 && i < len(words)-1 && isParticle(w):
			continue
		case !nameWord(w):
			return 0
		}
		n++
	}
	if n > 3 || n == 0 {
		return 0
	}
	return len(words)
}

func isParticle(w string) bool {
	switch w {
	case "van", "von", "de", "da", "del", "der", "den", "di", "la", "le", "du", "bin", "al", "y":
		return true
	}
	return false
}

// nameWord: an upper-case letter, then letters (with ' or -), at least
// one lower-case; or an initial "J.".
func nameWord(w string) bool {
	r, size := utf8.DecodeRuneInString(w)
	if !unicode.IsUpper(r) {
		return false
	}
	rest := w[size:]
	if rest == "." {
		return true
	}
	lower := false
	for _, r := range rest {
		switch {
		case unicode.IsLower(r):
			lower = true
		case unicode.IsLetter(r), r == '\'', r == '-', r == '’':
		default:
			return false
		}
	}
	return lower
}

// isAddressShape: a few words holding both a number and letters, as in
// "12 High Street" or "Rue de Rivoli 5, Paris".
func isAddressShape(s string) bool {
	if len(s) > 120 || strings.Count(s, " ") < 2 {
		return false
	}
	var dg, al bool
	for i := 0; i < len(s); i++ {
		dg = dg || isDigit(s[i])
		al = al || isUpper(s[i]) || isLower(s[i])
	}
	return dg && al
}

// firstNames are common given names across several languages; a value of
// two or three capitalised words starting with one is a person's name
// even in a column whose name says nothing.
var firstNames = func() map[string]bool {
	const list = "james john robert michael william david richard joseph thomas charles christopher daniel matthew " +
		"anthony mark donald steven paul andrew joshua kenneth kevin brian george timothy ronald edward jason jeffrey " +
		"ryan jacob gary nicholas eric jonathan stephen larry justin scott brandon benjamin samuel gregory alexander " +
		"frank patrick raymond jack dennis jerry tyler aaron jose adam nathan henry peter zachary douglas harold " +
		"mary patricia jennifer linda elizabeth barbara susan jessica sarah karen lisa nancy betty margaret sandra " +
		"ashley kimberly emily donna michelle carol amanda dorothy melissa deborah stephanie rebecca sharon laura " +
		"cynthia kathleen amy angela shirley anna brenda pamela emma nicole helen samantha katherine christine " +
		"debra rachel carolyn janet catherine maria heather diane ruth julie olivia joyce virginia victoria kelly " +
		"lauren christina joan evelyn judith megan andrea cheryl hannah jacqueline martha gloria teresa ann sara " +
		"madison frances kathryn janice jean abigail alice judy sophia grace denise amber doris marilyn danielle " +
		"beverly isabella theresa diana natalie brittany charlotte marie kayla alexis lori jane oliver harry " +
		"liam noah lucas mia ella chloe lily zoe leo max ben tom sam tim jim bob bill joe dan ken ed al " +
		"hans peter klaus jürgen stefan andreas thomas wolfgang michael uwe anna ursula monika petra sabine " +
		"jean pierre michel philippe alain nicolas françois isabelle nathalie sylvie catherine sophie camille " +
		"giuseppe giovanni marco luca francesco antonio paolo giulia chiara francesca sofia " +
		"juan carlos luis miguel javier jorge pedro manuel carmen lucia elena ana isabel rosa pablo diego " +
		"joão ana beatriz mariana rafael gabriel fernanda bruno " +
		"jan piet kees anke sanne lars sven erik ingrid astrid olga ivan dmitri sergei natasha " +
		"wei li ming hiroshi yuki kenji akira mohammed muhammad ahmed ali fatima omar aisha priya raj amit rahul"
	m := map[string]bool{}
	for _, w := range strings.Fields(list) {
		m[w] = true
	}
	return m
}()

func isFirstName(w string) bool { return firstNames[strings.ToLower(strings.TrimSuffix(w, ","))] }

// hintsOf returns the classes a column's name suggests, whether a
// person-name hint is strong (first_name, customer_name) rather than weak
// (name, customer), and whether the name says credentials (password,
// api_key, token), which makes the column secret whatever its values
// look like.
func hintsOf(column string) (hints classSet, strongName, credential bool) {
	words := nameTokens(column)
	joined := strings.Join(words, "")
	has := func(ws ...string) bool {
		for _, w := range ws {
			if len(w) >= 5 && strings.Contains(joined, w) {
				return true
			}
			for _, x := range words {
				if x == w {
					return true
				}
			}
		}
		return false
	}
	if has("email", "mail") {
		hints |= setOf(ClassEmail)
	}
	if has("phone", "mobile", "tel", "cell", "fax", "msisdn") {
		hints |= setOf(ClassPhone)
	}
	if has("ssn", "socialsecurity", "socialsecno", "socialsecnum", "socsec", "nino", "nationalinsurance", "nationalid", "sin", "taxid", "tin", "dni", "nie", "passport", "idnumber") {
		hints |= setOf(ClassNationalID)
	}
	if has("card", "cardnumber", "creditcard", "ccnumber", "cc", "pan") {
		hints |= setOf(ClassCard)
	}
	if has("iban", "bankaccount", "accountnumber") {
		hints |= setOf(ClassIBAN)
	}
	if has("ip", "ipaddress", "ipv4", "ipv6", "clientip", "remoteaddr") {
		hints |= setOf(ClassIP)
	}
	if has("token", "secret", "apikey", "password", "passwd", "pwd", "credential", "privatekey", "accesskey") {
		hints |= setOf(ClassSecret)
		credential = !has("tokens", "tokencount", "numtoken")
	}
	if has("firstname", "lastname", "fullname", "surname", "givenname", "familyname", "middlename", "forename",
		"customername", "contactname", "clientname", "personname", "employeename", "patientname", "ownername",
		"holdername", "cardholder", "accountholder", "username", "displayname") {
		hints |= setOf(ClassName)
		strongName = true
	} else if has("name", "customer", "contact", "client", "person", "employee", "patient", "owner", "author", "recipient", "sender", "holder") {
		if !has("product", "company", "city", "country", "file", "item", "category", "brand", "street", "table",
			"column", "host", "domain", "place", "region", "state", "team", "org", "organization", "store", "shop",
			"project", "event", "model", "type", "field", "tag", "label", "group", "department", "dept",
			"park", "facility", "bridge", "highway", "landmark", "agency", "borough", "venue", "school", "hospital",
			"station", "airport", "building", "site", "location") {
			hints |= setOf(ClassName)
		}
	}
	if has("address", "street", "addr", "addressline", "line1") && !has("email", "ip", "ipaddress", "mac", "url", "web") {
		hints |= setOf(ClassAddress)
	}
	if has("dob", "birth", "birthday", "bday", "dateofbirth") {
		hints |= setOf(ClassBirthDate)
	}
	return hints, strongName, credential
}

// nameTokens splits a column name into lower-case words at punctuation,
// spaces and camelCase boundaries.
func nameTokens(s string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prevLower := false
	for _, r := range s {
		switch {
		case unicode.IsUpper(r):
			if prevLower {
				flush()
			}
			cur = append(cur, r)
			prevLower = false
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			cur = append(cur, r)
			prevLower = unicode.IsLower(r)
		default:
			flush()
			prevLower = false
		}
	}
	flush()
	return words
}

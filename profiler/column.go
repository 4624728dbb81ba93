package profiler

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/selmem/selmem/internal/textcut"
)

type kind uint8

const (
	kText kind = iota
	kInt
	kDec
	kBool
	kDate
	kDecC // a decimal with a decimal comma: 3,5 or 1.234,5
	kDecG // a number with ',' between groups of thousands: 1,234.5 or 1,234,567
	nKinds
)

// number reports a kind of number, whatever its notation.
func (k kind) number() bool { return k == kInt || k == kDec || k == kDecC || k == kDecG }

var kindNames = [nKinds]string{"text", "integer", "decimal", "boolean", "date/time", "decimal-comma numbers", "numbers with thousands separators"}

// isNullToken reports whether s is one of the conventional missing-value
// markers: ?, NA, N/A, null, none, nan, #N/A, nil (case-insensitive).
func isNullToken(s string) bool {
	switch len(s) {
	case 1:
		return s[0] == '?'
	case 2:
		return lowerIs(s, "na")
	case 3:
		return lowerIs(s, "n/a") || lowerIs(s, "nan") || lowerIs(s, "nil")
	case 4:
		return lowerIs(s, "null") || lowerIs(s, "none") || lowerIs(s, "#n/a")
	}
	return false
}

// lowerIs reports whether s equals the lower-case ASCII word w, ignoring
// ASCII case (no allocation, unlike strings.ToLower).
func lowerIs(s, w string) bool {
	if len(s) != len(w) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}

func boolToken(s string) bool {
	switch len(s) {
	case 1:
		return lowerIs(s, "t") || lowerIs(s, "f") || lowerIs(s, "y") || lowerIs(s, "n")
	case 2:
		return lowerIs(s, "no")
	case 3:
		return lowerIs(s, "yes")
	case 4:
		return lowerIs(s, "true")
	case 5:
		return lowerIs(s, "false")
	}
	return false
}

// parseInt parses an optionally signed decimal integer; big reports more
// than 18 digits (value returned as float only).
func parseInt(s string) (v int64, f float64, lead0, ok bool) {
	i := 0
	neg := false
	if s[0] == '-' || s[0] == '+' {
		neg = s[0] == '-'
		i = 1
	}
	if i == len(s) {
		return 0, 0, false, false
	}
	digits := s[i:]
	for j := 0; j < len(digits); j++ {
		c := digits[j]
		if c < '0' || c > '9' {
			return 0, 0, false, false
		}
		if j < 18 {
			v = v*10 + int64(c-'0')
		}
	}
	lead0 = len(digits) > 1 && digits[0] == '0'
	if len(digits) > 18 {
		f, _ = strconv.ParseFloat(s, 64)
		return 0, f, lead0, true
	}
	if neg {
		v = -v
	}
	return v, float64(v), lead0, true
}

func looksDecimal(s string) bool {
	digit := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-':
		default:
			return false
		}
	}
	return digit
}

// looksDate reports whether s may be a date or time that starts with a
// digit: two separators (2026-12-03, 3/12/2026 10:00, 10:00:00), a time
// of hours and minutes (9:30, 10:00) or a month's name after the day
// (3 Dec 2026).
func looksDate(s string) bool {
	if len(s) >= 4 && len(s) <= 5 && s[len(s)-3] == ':' && s[0] >= '0' && s[0] <= '9' {
		return true
	}
	if len(s) < 6 || len(s) > 40 || s[0] < '0' || s[0] > '9' {
		return false
	}
	seps := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '-', '/', '.', ':':
			seps++
		case ' ':
			if monthFirst(s[i+1:]) {
				return true
			}
		}
	}
	return seps >= 2
}

// spaceGroups reads the spaces a French or Swiss writer puts between
// groups of thousands (a space, a no-break or narrow no-break space) as
// the '.' parseDecComma knows: 1 234,5 is 1.234,5.
var spaceGroups = strings.NewReplacer(" ", ".", "\u00a0", ".", "\u202f", ".")

// parseDecComma parses a number written with a decimal comma, with or
// without '.' or spaces between groups of thousands: 3,5  -12,75
// 1.234,5  1 234,5. dec3 reports exactly three digits after the comma
// and no grouping (1,500), which could also be a thousands separator.
func parseDecComma(s string) (f float64, dec3, ok bool) {
	i := 0
	if s[0] == '-' || s[0] == '+' {
		i = 1
	}
	comma := strings.IndexByte(s, ',')
	if comma <= i || comma == len(s)-1 || strings.IndexByte(s[comma+1:], ',') >= 0 {
		return 0, false, false
	}
	intPart, frac := s[i:comma], s[comma+1:]
	if strings.IndexByte(intPart, '.') < 0 {
		intPart = spaceGroups.Replace(intPart)
	}
	for j := 0; j < len(frac); j++ {
		if frac[j] < '0' || frac[j] > '9' {
			return 0, false, false
		}
	}
	var b [64]byte
	n := copy(b[:], s[:i])
	grouped := strings.IndexByte(intPart, '.') >= 0
	for j, g := range strings.Split(intPart, ".") {
		if g == "" || len(g) > 3 && grouped || j > 0 && len(g) != 3 {
			return 0, false, false
		}
		for k := 0; k < len(g); k++ {
			if g[k] < '0' || g[k] > '9' {
				return 0, false, false
			}
		}
		if n+len(g) > 40 {
			return 0, false, false
		}
		n += copy(b[n:], g)
	}
	if n+1+len(frac) > len(b) {
		return 0, false, false
	}
	b[n] = '.'
	n++
	n += copy(b[n:], frac)
	f, err := strconv.ParseFloat(string(b[:n]), 64)
	if err != nil {
		return 0, false, false
	}
	return f, len(frac) == 3 && !grouped, true
}

// groupSeps are the characters written between groups of thousands
// before a '.' fraction: ',' (1,234.5), an apostrophe (Swiss: 1'234.5,
// 1’234.5) and a space, a no-break or narrow no-break space (1 234 567).
var groupSeps = [...]string{",", "'", "\u2019", " ", "\u00a0", "\u202f"}

// parseGrouped parses a number written with one of groupSeps between
// groups of thousands and an optional '.' before its fraction, when it
// cannot be a decimal comma: 1,234.5  -12,000.00  1,234,567  1'234.5
// 1 234. (1,234 alone is left to parseDecComma, which flags it as either;
// a separator other than ',' is never a decimal one.)
func parseGrouped(s string) (float64, bool) {
	i := 0
	if s[0] == '-' || s[0] == '+' {
		i = 1
	}
	whole, frac, dot := strings.Cut(s[i:], ".")
	sep := ""
	for _, g := range groupSeps {
		if strings.Contains(whole, g) {
			sep = g
			break
		}
	}
	if sep == "" {
		return 0, false
	}
	groups := strings.Split(whole, sep)
	if len(groups) < 2 || sep == "," && !dot && len(groups) < 3 || dot && frac == "" {
		return 0, false
	}
	var b [64]byte
	n := copy(b[:], s[:i])
	for j, g := range groups {
		if g == "" || len(g) > 3 || j > 0 && len(g) != 3 || j == 0 && g[0] == '0' || n+len(g) > 40 {
			return 0, false
		}
		for k := 0; k < len(g); k++ {
			if g[k] < '0' || g[k] > '9' {
				return 0, false
			}
		}
		n += copy(b[n:], g)
	}
	if dot {
		if n+1+len(frac) > len(b) {
			return 0, false
		}
		for k := 0; k < len(frac); k++ {
			if frac[k] < '0' || frac[k] > '9' {
				return 0, false
			}
		}
		b[n] = '.'
		n++
		n += copy(b[n:], frac)
	}
	f, err := strconv.ParseFloat(string(b[:n]), 64)
	return f, err == nil
}

// colAcc accumulates the statistics of one column over the whole stream.
// It is owned by one goroutine at a time.
//
// While a column has at most limit distinct values (and its share of
// exactMemory holds them), each distinct value is classified once: its
// facts (kind, parsed number or date, length, text shape) are kept in
// info next to its count, and a repeated value only replays them. Beyond
// that, values not already counted are classified every time and go to
// the sketches.
type colAcc struct {
	mask     masker // masks the values the profile shows
	name     string
	limit    int // exact distinct threshold
	rows     int64
	nulls    int64
	empty    int64
	padded   int64
	nullToks map[string]int64

	kinds    [nKinds]int64
	examples [nKinds]string
	lead0    int64

	// numbers, and the same numbers reading each 1,234 as 1234 (nil
	// until the first such value, whose reading differs)
	num     numAcc
	grouped *numAcc
	// dates, by layout (see dates.go)
	dCount     []int64
	dMin, dMax []float64
	dSk        []*kll
	dCur       int8
	dExam      []dateExample
	// decimal commas with exactly three digits after the comma
	decC3 int64
	// numbers with thousands separators and a fraction
	decGFrac int64
	// numbers written with each unit (units: none, %, $, …)
	unitCounts [len(units)]int64
	// negative numbers written in parentheses
	parens int64
	// strings
	lenMin, lenMax int
	lenSum         int64
	spaces         int64
	emails, urls   int64
	shapes         map[string]int32 // shape -> index in shapeCounts
	shapeNames     []string
	shapeCounts    []int64
	shapesOver     bool

	// distinct / frequencies
	// idx maps a value's 64-bit hash to its index in keys, counts and
	// info. Counting by hash treats two values as one only on a 64-bit
	// collision (odds about 1e-11 at the default 10,000 values), and saves
	// comparing strings: the hash is needed for the sketches anyway.
	idx      posTable
	keys     []string // values (shortened by countKey), in first-seen order
	counts   []int64
	info     []valInfo
	overflow bool
	missed   int64 // values not in idx after overflow
	ss       *spaceSaving
	hll      *hll
	keySet   *u64set
	keyDead  bool
	keyCap   bool
	join     *kmv
	// mono: every value so far is an integer greater than the one before
	// (a sequence id), so no value can repeat and keySet is not needed.
	mono     bool
	monoLast float64
	// countBytes is what the exact counts hold (entryBytes of each key);
	// room is how much the exact counts and keySet may hold together
	// until the next batch (see shareExactMemory).
	countBytes, room int64
	// pii gathers the evidence of personal data or secrets.
	pii piiAcc
}

// valInfo is what classifying one distinct value found.
type valInfo struct {
	f      float64 // the number, or the date in Unix seconds
	f2     float64 // the date under layout2
	n      int32   // length in characters
	shape  int32   // index in colAcc.shapeCounts; -1 for none
	kind   kind
	lead0  bool
	layout int8 // index in dateLayouts
	// layout2 is the day/month twin of layout (05/01/2011) or its
	// month-name alias (May 3, 2026) when it parses the value too, or its
	// wider layout (widerLayouts), else -1.
	layout2 int8
	text    uint8
	unit    uint8    // index in units of a number's sign: % or a currency
	cls     classSet // sensitive classes the value matches
	pshape  int16    // index in colAcc.pii.shapeCounts; -1 for none
	dom     int16    // index of the email domain in colAcc.pii.domCounts; -1 for none
}

// hasScheme reports whether s begins with a URL's scheme and "://"
// (https://, ssh://, s3://): a letter, then letters, digits, "+", "-" or
// ".". A user in such a URL (ssh://git@github.com/…) makes it no email.
func hasScheme(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok || scheme == "" || !isUpper(scheme[0]) && !isLower(scheme[0]) {
		return false
	}
	for i := range len(scheme) {
		if c := scheme[i]; !isAlnum(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// valInfo.text flags.
const (
	textSpace = 1 << iota
	textEmail
	textURL
	textDec3  // a decimal comma with three digits after it (1,500)
	textFrac  // a number with thousands separators and a fraction (1,234.5)
	textParen // a negative number in parentheses: (1,234.50)
)

func newColAcc(name string, limit int) *colAcc {
	return &colAcc{
		name: name, limit: limit,
		num:      numAcc{min: math.Inf(1), max: math.Inf(-1)},
		lenMin:   math.MaxInt,
		idx:      newPosTable(16),
		join:     &kmv{k: joinK},
		dCur:     -1,
		mono:     true,
		monoLast: math.Inf(-1),
		pii:      newPIIAcc(name),
		room:     exactMemory,
	}
}

const (
	kllK        = 400
	joinK       = 256
	keySetLimit = 1 << 18
	maxKeyLen   = 200
)

func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func trimSpace(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == '\r' || s[0] == '\n') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t' || s[len(s)-1] == '\r' || s[len(s)-1] == '\n') {
		s = s[:len(s)-1]
	}
	return s
}

func (c *colAcc) addMissing(n int64) {
	c.rows += n
	c.nulls += n
}

func (c *colAcc) add(raw string) {
	c.rows++
	s := trimSpace(raw)
	pad := len(s) != len(raw)
	if len(s) == 0 {
		c.empty++
		return
	}
	// A value already counted exactly: replay its facts. (Null tokens are
	// never counted, so they cannot be found here.) Values are counted as
	// written, surrounding spaces included, so catalogs keep exact
	// spellings; they are classified without them.
	h := hash64(unsafeBytes(raw))
	if i, ok := c.idx.get(h); ok {
		if pad {
			c.padded++
		}
		c.mono = false
		c.counts[i]++
		c.replay(&c.info[i])
		if c.overflow {
			c.hashed(h, true, c.info[i].cls)
		}
		return
	}
	if isNullToken(s) {
		c.nulls++
		if c.nullToks == nil {
			c.nullToks = map[string]int64{}
		}
		if _, ok := c.nullToks[s]; ok {
			c.nullToks[s]++
		} else {
			c.nullToks[strings.Clone(s)] = 1
		}
		return
	}
	if pad {
		c.padded++
	}
	vi := valInfo{n: int32(len(s)), shape: -1, layout: -1, layout2: -1}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			vi.n = int32(utf8.RuneCountInString(s))
			break
		}
	}
	c.classifyInto(s, &vi)
	if c.mono {
		if vi.kind == kInt && !vi.lead0 && vi.f > c.monoLast {
			c.monoLast = vi.f
		} else {
			c.mono = false
		}
	}
	if vi.kind == kText {
		c.textInfo(s, &vi)
	}
	c.pii.classify(s, &vi)
	if c.examples[vi.kind] == "" {
		// a copy: s is in the batch's buffers
		c.examples[vi.kind] = strings.Clone(clip(c.mask.text(s), 40))
	}
	c.replay(&vi)
	c.count(raw, h, &vi)
}

// replay adds one occurrence of a classified value to the statistics.
func (c *colAcc) replay(vi *valInfo) {
	n := int(vi.n)
	c.lenMin = min(c.lenMin, n)
	c.lenMax = max(c.lenMax, n)
	c.lenSum += int64(n)
	c.kinds[vi.kind]++
	c.pii.replay(vi)
	if vi.kind.number() {
		c.unitCounts[vi.unit]++
		if vi.text&textParen != 0 {
			c.parens++
		}
	}
	switch vi.kind {
	case kInt:
		if vi.lead0 {
			c.lead0++
		}
		c.addNum(vi.f, vi.f)
	case kDec:
		c.addNum(vi.f, vi.f)
	case kDecG:
		if vi.text&textFrac != 0 {
			c.decGFrac++
		}
		c.addNum(vi.f, vi.f)
	case kDecC:
		if vi.text&textDec3 != 0 {
			c.decC3++
			c.addNum(vi.f, vi.f2)
			break
		}
		c.addNum(vi.f, vi.f)
	case kDate:
		c.addDate(vi.layout, vi.f)
		if vi.layout2 >= 0 {
			c.addDate(vi.layout2, vi.f2)
		}
	case kText:
		if vi.text&textSpace != 0 {
			c.spaces++
		}
		if vi.text&textEmail != 0 {
			c.emails++
		} else if vi.text&textURL != 0 {
			c.urls++
		}
		if vi.shape >= 0 && !c.shapesOver {
			c.shapeCounts[vi.shape]++
		}
	}
}

// classify returns the kind of a non-empty, trimmed, non-null value.
func (c *colAcc) classify(s string) kind {
	vi := valInfo{shape: -1, layout: -1, layout2: -1}
	c.classifyInto(s, &vi)
	return vi.kind
}

// classifyInto sets vi.kind and the parsed value; it changes no statistics.
func (c *colAcc) classifyInto(s string, vi *valInfo) {
	vi.kind = kText
	if len(s) > 2 && s[0] == '(' && s[len(s)-1] == ')' && s[1] != '-' && s[1] != '+' {
		// An accountant's negative: (1,234.50) is -1234.5.
		c.classifyWrapped("-"+s[1:len(s)-1], vi, func(vi *valInfo) { vi.text |= textParen })
		return
	}
	if n, u := numberUnit(s); u > 0 {
		c.classifyWrapped(n, vi, func(vi *valInfo) { vi.unit = u })
		return
	}
	if c.classifyNumber(s, vi) {
		return
	}
	if monthFirst(s) && len(s) <= 40 && c.parseDate(s, vi) {
		vi.kind = kDate
		return
	}
	if boolToken(s) {
		vi.kind = kBool
	}
}

// classifyWrapped classifies the number a value wraps (in parentheses,
// or with a unit): when core is a number, mark records the wrapping;
// otherwise the value is text, with the facts its caller had set.
func (c *colAcc) classifyWrapped(core string, vi *valInfo, mark func(*valInfo)) {
	text := *vi
	if c.classifyInto(core, vi); vi.kind.number() {
		mark(vi)
		return
	}
	*vi = text
}

// units are the signs numberUnit splits off a number; index 0 is none.
var units = [...]string{"", "%", "$", "€", "£", "¥", "₹"}

// numberUnit splits a currency sign or a percent sign off what may be a
// number, its sign kept: $1.50, -$1.50, $-1.50, €1.234,50, 1.234,50 €,
// 12,50 $, 12%, 7,5 %. It returns the index of the unit in units, 0 when
// s has none; the rest is not checked to be a number.
func numberUnit(s string) (string, uint8) {
	sign := ""
	if s != "" && (s[0] == '-' || s[0] == '+') {
		sign, s = s[:1], s[1:]
	}
	for u := 2; u < len(units); u++ {
		if rest, ok := strings.CutPrefix(s, units[u]); ok && rest != "" {
			return sign + rest, uint8(u)
		}
	}
	for u := 1; u < len(units); u++ {
		if rest, ok := strings.CutSuffix(s, units[u]); ok {
			rest = strings.TrimRight(rest, " \u00a0\u202f")
			if rest != "" {
				return sign + rest, uint8(u)
			}
		}
	}
	return "", 0
}

// classifyNumber sets vi's kind and value when s starts like a number,
// reporting whether it did: an integer, a decimal in any notation, or a
// date.
func (c *colAcc) classifyNumber(s string, vi *valInfo) bool {
	ch := s[0]
	if (ch >= '0' && ch <= '9') || ch == '-' || ch == '+' || ch == '.' {
		if _, f, lead0, ok := parseInt(s); ok {
			vi.kind, vi.f, vi.lead0 = kInt, f, lead0
			return true
		}
		if looksDecimal(s) {
			if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) {
				vi.kind, vi.f = kDec, f
				return true
			}
		}
		if f, dec3, ok := parseDecComma(s); ok {
			vi.kind, vi.f = kDecC, f
			if dec3 {
				// Also read with ',' between thousands: 1,500 is 1500.
				vi.text |= textDec3
				vi.f2, _ = strconv.ParseFloat(strings.Replace(s, ",", "", 1), 64)
			}
			return true
		}
		if f, ok := parseGrouped(s); ok {
			vi.kind, vi.f = kDecG, f
			if strings.IndexByte(s, '.') >= 0 {
				vi.text |= textFrac
			}
			return true
		}
		if looksDate(s) && c.parseDate(s, vi) {
			vi.kind = kDate
		}
		return true
	}
	return false
}

// addNum adds a number read as f and, with ',' between thousands, as g:
// the two differ for a value like 1,500, a decimal comma or not.
func (c *colAcc) addNum(f, g float64) {
	if g != f && c.grouped == nil {
		c.grouped = c.num.clone()
	}
	c.num.add(f)
	if c.grouped != nil {
		c.grouped.add(g)
	}
}

// numAcc holds the statistics of a column's numbers: moments, extremes,
// and, once the column overflows its exact counter, a quantile sketch.
type numAcc struct {
	min, max    float64
	mean, m2    float64
	n           int64
	zeros, negs int64
	sketch      *kll
}

func (a *numAcc) add(f float64) {
	a.n++
	d := f - a.mean
	a.mean += d / float64(a.n)
	a.m2 += d * (f - a.mean)
	a.min = min(a.min, f)
	a.max = max(a.max, f)
	if f == 0 {
		a.zeros++
	} else if f < 0 {
		a.negs++
	}
	if a.sketch != nil {
		a.sketch.add(f)
	}
}

func (a *numAcc) clone() *numAcc {
	b := *a
	if a.sketch != nil {
		b.sketch = a.sketch.clone()
	}
	return &b
}

// textInfo sets the text flags and shape of a text value; a shape seen for
// the first time is registered with count 0.
func (c *colAcc) textInfo(s string, vi *valInfo) {
	if strings.IndexByte(s, ' ') >= 0 {
		vi.text |= textSpace
	}
	switch {
	case hasScheme(s):
		vi.text |= textURL
	case strings.IndexByte(s, '@') > 0 && isEmail(s):
		vi.text |= textEmail
	}
	if c.shapesOver || len(s) > 24 {
		return
	}
	var buf [24]byte
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case b >= 'A' && b <= 'Z':
			b = 'A'
		case b >= 'a' && b <= 'z':
			b = 'a'
		case b >= '0' && b <= '9':
			b = '9'
		case b >= utf8.RuneSelf:
			b = '~'
		}
		buf[i] = b
	}
	if c.shapes == nil {
		c.shapes = map[string]int32{}
	}
	sh := buf[:len(s)]
	if i, ok := c.shapes[string(sh)]; ok {
		vi.shape = i
		return
	}
	if len(c.shapes) >= 64 {
		c.shapesOver = true
		return
	}
	vi.shape = int32(len(c.shapeCounts))
	c.shapes[string(sh)] = vi.shape
	c.shapeNames = append(c.shapeNames, string(sh))
	c.shapeCounts = append(c.shapeCounts, 0)
}

// Long values are counted under a key that keeps their first keyHead
// and last keyTail bytes around their hash, so the exact counter stays
// bounded and a catalog can still show how a long value starts and ends.
const (
	keyHead = 120
	keyTail = 40
)

// countKey shortens very long values so the exact counter stays bounded.
func countKey(s string) string {
	if len(s) <= maxKeyLen {
		return s
	}
	h := hash64(unsafeBytes(s))
	return textcut.Prefix(s, keyHead) + "\x00" + strconv.FormatUint(h, 16) + "\x00" + textcut.Suffix(s, keyTail)
}

// fullKey is the value a counted key stands for: the value itself, or
// for a long value its start and end joined by "…" (shortened true).
func fullKey(k string) (v string, shortened bool) {
	i := strings.IndexByte(k, 0)
	if i < 0 {
		return k, false
	}
	j := strings.LastIndexByte(k, 0)
	return k[:i] + "…" + k[j+1:], true
}

// count counts a value that add did not find among the exact counts:
// exactly while the column has fewer than limit values and room for
// this one, else in the sketches.
func (c *colAcc) count(s string, h uint64, vi *valInfo) {
	key := countKey(s)
	if !c.overflow {
		if cost := entryBytes(key); c.idx.n < c.limit && c.exactBytes()+cost <= c.room {
			c.idx.set(h, int32(len(c.counts)))
			c.keys = append(c.keys, strings.Clone(key))
			c.counts = append(c.counts, 1)
			c.info = append(c.info, *vi)
			c.countBytes += cost
			return
		}
		c.startOverflow()
	}
	c.missed++
	c.hashed(h, false, vi.cls)
	c.ss.add(h, unsafeBytes(key))
}

// groupedValue is a number value read with ',' between thousands.
func groupedValue(vi *valInfo) float64 {
	if vi.kind == kDecC && vi.text&textDec3 != 0 {
		return vi.f2
	}
	return vi.f
}

// startOverflow switches from exact counting to sketches; the exact counts
// gathered so far seed the sketches and keep counting their own values.
func (c *colAcc) startOverflow() {
	c.overflow = true
	// Quantiles were exact, from the counts; from here on they come from
	// KLL sketches, seeded with the exact counts in first-seen order.
	c.num.sketch = newKLL(kllK)
	if c.grouped != nil {
		c.grouped.sketch = newKLL(kllK)
	}
	for i, vi := range c.info {
		switch {
		case vi.kind.number():
			c.num.sketch.addWeighted(vi.f, c.counts[i])
			if c.grouped != nil {
				c.grouped.sketch.addWeighted(groupedValue(&vi), c.counts[i])
			}
		case vi.kind == kDate:
			for _, l := range [2]int8{vi.layout, vi.layout2} {
				if l < 0 {
					continue
				}
				if c.dSk[l] == nil {
					c.dSk[l] = newKLL(kllK)
				}
				f, _ := dateValue(&vi, l)
				c.dSk[l].addWeighted(f, c.counts[i])
			}
		}
	}
	c.hll = newHLL()
	c.ss = newSpaceSaving(256)
	if !c.mono {
		c.startKeySet()
	}
	c.idx.each(func(h uint64, i int32) {
		c.hll.add(h)
		c.joinAdd(h, c.info[i].cls)
		if c.counts[i] > 1 {
			c.keyDead = true
		}
		if !c.keyDead && c.keySet != nil {
			c.keyInsert(h)
		}
	})
	if c.keyDead {
		c.keySet = nil
	}
}

// joinAdd adds a value's hash to the join sketch unless the value is
// personal data or a secret: the hash function is public, so the hash of
// an email or a phone number is as good as the value to whoever can
// guess candidates.
func (c *colAcc) joinAdd(h uint64, cls classSet) {
	if cls&strongValue == 0 {
		c.join.add(h)
	}
}

// hashed feeds the hash of a value counted after overflow to the
// sketches; known means the value was counted before; cls are the
// value's sensitive classes.
func (c *colAcc) hashed(h uint64, known bool, cls classSet) {
	c.hll.add(h)
	c.joinAdd(h, cls)
	if known {
		c.keyDead = true
		c.keySet = nil
		return
	}
	if c.mono || c.keyDead {
		return
	}
	if c.keySet == nil {
		// the increasing run held when counting overflowed and has just
		// broken: earlier values were not kept, so uniqueness is now an
		// estimate, and the set detects repeats from here on
		c.keyCap = true
		if c.startKeySet(); c.keySet == nil {
			return
		}
	}
	dup, refused := c.keyInsert(h)
	if dup {
		c.keyDead = true
		c.keySet = nil
	} else if refused {
		c.keyCap = true
	}
}

// clip returns s, or when it has more than n runes its first n-1 and
// "…" (each invalid byte among them as U+FFFD, as []rune reads it). It
// reads no more of s than that: s may be a mebibyte.
func clip(s string, n int) string {
	cut, i := 0, 0
	for k := 0; k < n; k++ {
		if i >= len(s) {
			return s
		}
		if k == n-1 {
			cut = i
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	if i >= len(s) {
		return s
	}
	return string([]rune(s[:cut])) + "…"
}

// valueCounts returns the value counts, in no particular order (sort them
// with sortCounts). Counts of values counted exactly are exact; after
// overflow, the heavy-hitter sketch's entries come with a guaranteed range
// [Min, Count] (Approx).
func (c *colAcc) valueCounts() []ValueCount {
	out := make([]ValueCount, 0, len(c.keys))
	for i, k := range c.keys {
		v, short := fullKey(k)
		out = append(out, ValueCount{Value: v, Count: c.counts[i], Shortened: short})
	}
	if c.overflow {
		for _, e := range c.ss.ent {
			v, short := fullKey(string(e.val))
			vc := ValueCount{Value: v, Count: e.count, Shortened: short}
			if e.err > 0 {
				vc.Approx, vc.Min = true, e.count-e.err
			}
			out = append(out, vc)
		}
	}
	return out
}

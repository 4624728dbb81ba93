package profiler

import (
	"strings"
	"unicode/utf8"
)

// Spelled-out email addresses
//
// An address is often written so that harvesters miss it:
// alice(at)example.com, alice [at] example [dot] com, alice＠example.com,
// alice at example dot com. Such a text is an address when, read with its
// spelled signs as @ and ., it is one (isEmail), and
//   - its @ is bracketed ((at), [at], {at} or <at>, any case, spaces
//     inside allowed) or a full-width ＠, or it is a plain @ and a dot is
//     spelled; the dots may be bracketed, plain or the word dot; or
//   - its @ is the word at (or AT). Prose holds "at" everywhere and "dot"
//     now and then, so then every dot of the domain is the word dot
//     (find us at example.com is prose), the top-level domain is one of
//     spelledTLDs (meet at polka dot bar is prose), no label is an
//     article or a determiner (look at the dot in the middle, the dot com
//     bubble), and the mailbox reads as no word of the sentence: it is
//     no pronoun (visit us at example dot com, thanks to everyone at
//     example dot org), no word English puts before at
//     (shop at amazon dot com, she worked at example dot org, sign up at
//     example dot com, tickets are available at example dot com; see
//     atWords) nor a contracted be (I'm at example dot com), and follows
//     no determiner, which makes it a noun (the folks at example dot
//     com, a friend at google dot com).
//
// A mailbox is a name, initials or a role far more often than it is one
// of those words, and the words are chosen to be neither first names
// (mark, will and sue are not among them) nor the roles mailboxes are
// named after (info, sales, help, contact, jobs, orders are not), so
// mark at example dot com, info at example dot com and jobs at google
// dot com stay masked. A mailbox of several words (j.smith, alice dot
// smith) is never prose.
//
// The top-level domain may end in a possessive: alice at example dot
// com's inbox is alice@example.com.

// spellTok is a word of a text, or a sign in it: an @ (written @, ＠,
// (at) or at) or a dot written (dot) or dot.
type spellTok struct {
	word string // the word; "" for a sign
	sign byte   // '@' or '.' for a sign
	bare bool   // the sign is the word at or dot
}

// spelledEmail returns the address s spells out as a whole, and whether
// it spells one (see above).
func spelledEmail(s string) (string, bool) {
	if !mayBeSpelled(s) {
		return "", false
	}
	toks := spellTokens(s)
	for k, t := range toks {
		if t.sign == '@' {
			if a, i, end, ok := addressAt(toks, k); ok && i == 0 && end == len(toks) {
				return a, true
			}
		}
	}
	return "", false
}

// hasSpelledEmail reports whether a spelled-out address is anywhere in s.
func hasSpelledEmail(s string) bool {
	if !mayBeSpelled(s) {
		return false
	}
	toks := spellTokens(s)
	for k, t := range toks {
		if t.sign == '@' {
			if _, _, _, ok := addressAt(toks, k); ok {
				return true
			}
		}
	}
	return false
}

// mayBeSpelled reports whether s holds a ＠, the letters at in any case
// as a word of their own or in brackets, or an @ and the letters dot so:
// a quick test before reading s as words and signs.
func mayBeSpelled(s string) bool {
	return strings.Contains(s, "＠") || hasWordFold(s, "at") ||
		strings.IndexByte(s, '@') >= 0 && hasWordFold(s, "dot")
}

// hasWordFold reports whether s holds the lower-case ASCII word w, in
// any case, between characters that are no ASCII letters or digits.
func hasWordFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i]|0x20 == w[0] && lowerIs(s[i:i+len(w)], w) && (i == 0 || !isAlnum(s[i-1])) && (i+len(w) == len(s) || !isAlnum(s[i+len(w)])) {
			return true
		}
	}
	return false
}

// spellTokens splits s into words and signs, at blanks and around an @,
// a ＠ and a bracketed at or dot; the words at and dot are bare signs.
// A plain . stays in its word.
func spellTokens(s string) []spellTok {
	var toks []spellTok
	for i := 0; i < len(s); {
		if isBlank(s[i]) {
			i++
			continue
		}
		if sign, n := spelledSign(s[i:]); n > 0 {
			toks = append(toks, spellTok{sign: sign})
			i += n
			continue
		}
		j := i + 1
		for j < len(s) && !isBlank(s[j]) {
			if _, n := spelledSign(s[j:]); n > 0 {
				break
			}
			j++
		}
		switch w := s[i:j]; w {
		case "at", "AT":
			toks = append(toks, spellTok{sign: '@', bare: true})
		case "dot", "DOT":
			toks = append(toks, spellTok{sign: '.', bare: true})
		default:
			toks = append(toks, spellTok{word: w})
		}
		i = j
	}
	return toks
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// spelledSign returns the sign s starts with, an @, a ＠ or a bracketed
// at or dot ("(at)", "[ DOT ]"), and its length in bytes; 0 when none.
func spelledSign(s string) (byte, int) {
	if strings.HasPrefix(s, "＠") {
		return '@', len("＠")
	}
	if s == "" {
		return 0, 0
	}
	if s[0] == '@' {
		return '@', 1
	}
	k := strings.IndexByte("([{<", s[0])
	if k < 0 {
		return 0, 0
	}
	i := skipBlanks(s, 1)
	var sign byte
	switch {
	case len(s)-i >= 2 && lowerIs(s[i:i+2], "at"):
		sign, i = '@', i+2
	case len(s)-i >= 3 && lowerIs(s[i:i+3], "dot"):
		sign, i = '.', i+3
	default:
		return 0, 0
	}
	i = skipBlanks(s, i)
	if i == len(s) || s[i] != ")]}>"[k] {
		return 0, 0
	}
	return sign, i + 1
}

func skipBlanks(s string, i int) int {
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	return i
}

// addressAt returns the address around the @ sign toks[k], and its
// first token and the end of its last: its mailbox is the words joined
// by dot signs before the @, the first cut to the runes a local part may
// hold; its domain the most words joined by dot signs after it that make
// an address, the last without trailing punctuation. ok is false when
// there is none.
func addressAt(toks []spellTok, k int) (addr string, start, end int, ok bool) {
	start = k - 1
	if start < 0 || toks[start].sign != 0 {
		return "", 0, 0, false
	}
	for start >= 2 && toks[start-1].sign == '.' && toks[start-2].sign == 0 {
		start -= 2
	}
	mailbox := trimMailbox(joinTokens(toks[start:k]))
	var domain strings.Builder
	for j := k + 1; j < len(toks) && toks[j].sign == 0; j += 2 {
		domain.WriteString(toks[j].word)
		a := mailbox + "@" + trimLabelEnd(domain.String())
		if isEmail(a) && (!toks[k].bare || bareSpelling(toks, start, k, j+1)) {
			addr, end, ok = a, j+1, true
		}
		if j+1 == len(toks) || toks[j+1].sign != '.' {
			break
		}
		domain.WriteByte('.')
	}
	return addr, start, end, ok
}

// joinTokens writes words and signs together: alice, (dot), smith is
// alice.smith.
func joinTokens(toks []spellTok) string {
	var b strings.Builder
	for _, t := range toks {
		if t.sign != 0 {
			b.WriteByte(t.sign)
		} else {
			b.WriteString(t.word)
		}
	}
	return b.String()
}

// bareSpelling reports whether the address toks[start:end], whose @
// toks[at] is the word at, keeps to the rules of that spelling (see
// above): its domain's dots are the word dot, no label is an article,
// the top-level domain is one of spelledTLDs, and its mailbox is no word
// of the sentence around it.
func bareSpelling(toks []spellTok, start, at, end int) bool {
	if end-at < 4 || at-start == 1 && inSentence(toks, start) {
		return false
	}
	label := ""
	for i := at + 1; i < end; i += 2 {
		label = strings.ToLower(trimLabelEnd(toks[i].word))
		if strings.ContainsAny(label, ".@"+wideStops) || spelledArticles[label] {
			return false
		}
		if i+1 < end && !toks[i+1].bare {
			return false
		}
	}
	return spelledTLDs[label]
}

// inSentence reports whether the word toks[i] before a bare at is a word
// of the sentence rather than a mailbox: a pronoun, one of atWords or an
// inflection of one, a contracted be (I'm, we’re, she's), or a noun after
// a determiner.
func inSentence(toks []spellTok, i int) bool {
	w := strings.ToLower(trimMailbox(strings.ReplaceAll(toks[i].word, "’", "'")))
	return spelledPronouns[w] || isAtWord(w) ||
		strings.HasSuffix(w, "'m") || strings.HasSuffix(w, "'re") || strings.HasSuffix(w, "'s") ||
		i > 0 && toks[i-1].sign == 0 && spelledDeterminers[strings.ToLower(toks[i-1].word)]
}

// isAtWord reports whether the lower-case w is one of atWords or a
// regular inflection of one: shops, shopped, shopping, lived, living,
// studies, studied.
func isAtWord(w string) bool {
	if atWords[w] {
		return true
	}
	for _, suffix := range []string{"s", "es", "ed", "ing"} {
		stem, ok := strings.CutSuffix(w, suffix)
		if !ok || len(stem) < 2 {
			continue
		}
		n := len(stem)
		if atWords[stem] || atWords[stem+"e"] || stem[n-1] == stem[n-2] && atWords[stem[:n-1]] || stem[n-1] == 'i' && atWords[stem[:n-1]+"y"] {
			return true
		}
	}
	return false
}

// trimLabelEnd returns w without what cannot end a host name: trailing
// punctuation and a possessive (example.com's, example.com’s).
func trimLabelEnd(w string) string {
	return strings.TrimRightFunc(cutPossessive(strings.TrimRightFunc(w, notLabelRune)), notLabelRune)
}

// cutPossessive returns w without a trailing possessive 's or ’s.
func cutPossessive(w string) string {
	for _, p := range []string{"'s", "’s", "'S", "’S"} {
		if t, ok := strings.CutSuffix(w, p); ok {
			return t
		}
	}
	return w
}

// trimMailbox returns the end of w made of runes a local part may hold:
// alice for mailto:alice or (alice.
func trimMailbox(w string) string {
	for i := len(w); i > 0; {
		r, size := utf8.DecodeLastRuneInString(w[:i])
		if !isLocalRune(r) {
			return w[i:]
		}
		i -= size
	}
	return w
}

// notLabelRune reports whether r cannot end a host name's label.
func notLabelRune(r rune) bool {
	if r < utf8.RuneSelf {
		return !isAlnum(byte(r))
	}
	return !isWordRune(r)
}

// spelledTLDs are the top-level domains an address spelled with the bare
// words at and dot may end in: common ones that are no English word (in,
// it, me, to, us and be are).
var spelledTLDs = wordSet("com net org edu gov mil info biz io co eu uk de fr nl ch es pt ie se dk fi pl cz ru jp cn kr au nz ca br mx ar za")

// spelledPronouns are words before at that name no mailbox: visit us at
// example dot com, thanks to everyone at example dot org.
var spelledPronouns = wordSet("i me you he him she her it we us they them " +
	"everyone everybody someone somebody anyone anybody nobody")

// spelledDeterminers are words that make the word after them a noun, so
// no mailbox: the folks at example dot com, our friends at example dot
// org. That and her are not among them: they also start a clause or end
// a verb's object (he said that bob at example dot com replied).
var spelledDeterminers = wordSet("a an the this these those my your his its our their some any each every many several other")

// atWords are words English puts before at, so that the word before a
// bare at is one of them, or an inflection of one (isAtWord), in prose
// far more often than it is a mailbox: verbs of doing something
// somewhere (shop at amazon dot com, worked at example dot org, sign up
// at), the verb be (tickets are at), and adverbs and adjectives (online
// at, available at, more at). None of them is a first name (firstNames)
// or a common role mailbox (info, sales, help, contact, jobs, orders,
// bookings, post, news).
var atWords = wordSet("shop work meet look buy sell trade live stay sleep eat dine drink arrive " +
	"find read browse search apply register enrol enroll subscribe sign log download stream watch listen " +
	"donate play study teach train learn intern volunteer serve perform graduate park stop start wait " +
	"sit stand gather hang laugh point stare smile aim bank save spend pay get join vote bid locate base " +
	"met ate bought sold slept found held sat stood taught paid got spent " +
	"be is am are was were been being " +
	"up in on out online here there now also only still just more available cheaper")

// spelledArticles are words after at that name no host: look at the dot
// in the middle.
var spelledArticles = wordSet("a an the this that these those my your his her its our their")

func wordSet(list string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(list) {
		m[w] = true
	}
	return m
}

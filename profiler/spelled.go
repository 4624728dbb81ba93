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
//     spelledTLDs (meet at polka dot bar is prose), the mailbox is no
//     pronoun (visit us at example dot com) and no label is an article
//     or a determiner (look at the dot in the middle, the dot com
//     bubble).

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
		a := mailbox + "@" + strings.TrimRightFunc(domain.String(), notLabelRune)
		if isEmail(a) && (!toks[k].bare || bareSpelling(toks[start:j+1], k-start)) {
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

// bareSpelling reports whether an address whose @ (at run[at]) is the
// word at keeps to the rules of that spelling (see above): its domain's
// dots are the word dot, no label is an article, the top-level domain is
// one of spelledTLDs and a one-word mailbox is no pronoun.
func bareSpelling(run []spellTok, at int) bool {
	if len(run)-at < 4 || at == 1 && spelledPronouns[strings.ToLower(trimMailbox(run[0].word))] {
		return false
	}
	label := ""
	for i := at + 1; i < len(run); i += 2 {
		label = strings.ToLower(strings.TrimRightFunc(run[i].word, notLabelRune))
		if strings.ContainsAny(label, ".@") || spelledArticles[label] {
			return false
		}
		if i+1 < len(run) && !run[i+1].bare {
			return false
		}
	}
	return spelledTLDs[label]
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
// example dot com.
var spelledPronouns = wordSet("i me you he him she her it we us they them")

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

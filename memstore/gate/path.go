package gate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Root is the virtual root every memory path lives under.
const Root = "/memories"

const pathHint = "Use a path like /memories/notes/topic.md: elements separated by single slashes, no . or .. elements, no hidden names."

// Path canonicalises a virtual path and returns the repository-relative slash
// path: "/memories" and "/memories/" give "", "/memories/a/b.md" gives
// "a/b.md".
//
// One trailing slash is stripped, on the root and on any other path, so that
// "/memories/notes/" names the directory notes (a file path that needs an
// extension is refused later by [FilePath]); two trailing slashes are an
// empty element and refused.
//
// Path refuses, with a [*Rejection] of Rule "path": invalid UTF-8; control,
// format (bidi overrides, zero-width), private-use, unassigned and
// non-ASCII space characters; backslashes; Unicode look-alikes of dot,
// slash and backslash (any character whose NFKC form holds one, and a list of
// confusables NFKC keeps apart, such as U+2215 DIVISION SLASH); percent
// escapes (%2e, %252e: virtual paths are not URL-encoded); paths outside
// /memories; empty and "." elements, ".." anywhere in an element (so no
// accepted path contains ".." at all); hidden elements (a leading dot,
// including .git in any case) and the 8.3 alias GIT~1; elements with leading
// or trailing spaces or a trailing dot; characters Windows cannot store
// (< > : " | ? *) and its reserved device names (CON, NUL, COM1, ...);
// elements not in Unicode NFC; elements longer than lim.MaxNameBytes and
// paths deeper than lim.MaxDepth.
//
// Path also refuses, with Rule "secret", an element that holds a
// credential (a token in a file or directory name would land in the tree
// and the commit message), using the detectors of [Content].
//
// Path accepts letters of every script, fullwidth and other compatibility
// forms included: they change what a name reads as, not where it leads, and
// names such as ２０２４年 or продажи are ordinary. Whether a name reads as
// one of its siblings is for the caller, who knows the siblings, to decide
// with [FoldCase] and [Skeleton].
//
// Path never repeats the offending bytes in its message: elements are named
// by position and characters by code point.
func Path(virtual string, lim Limits) (string, error) {
	lim = lim.withDefaults()
	if max := len(Root) + lim.MaxDepth*(1+lim.MaxNameBytes) + 1; len(virtual) > max {
		return "", reject(RulePath, 0, fmt.Sprintf("The path is %d bytes long; the limit is %d bytes.", len(virtual), max), "Use a shorter path, e.g. /memories/notes/topic.md.")
	}
	if !utf8.ValidString(virtual) {
		return "", reject(RulePath, 0, "The path is not valid UTF-8.", pathHint)
	}
	for _, r := range virtual {
		if why := badRune(r); why != "" {
			return "", reject(RulePath, 0, fmt.Sprintf("The path contains %U, %s.", r, why), pathHint)
		}
	}
	if strings.Contains(virtual, "%") && hasPercentEscape(virtual) {
		return "", reject(RulePath, 0, "The path contains a percent escape such as %2e; virtual paths are not URL-encoded.", "Write the characters themselves. "+pathHint)
	}
	if virtual != Root && !strings.HasPrefix(virtual, Root+"/") {
		return "", reject(RulePath, 0, "The path is outside the memory directory: every path starts with /memories.", pathHint)
	}
	rest := strings.TrimPrefix(virtual, Root)
	if rest == "" || rest == "/" {
		return "", nil
	}
	rest = strings.TrimPrefix(rest, "/")
	rest = strings.TrimSuffix(rest, "/")
	elems := strings.Split(rest, "/")
	for i, e := range elems {
		if err := checkElement(i+1, e, lim); err != nil {
			return "", err
		}
	}
	if err := pathSecret(elems); err != nil {
		return "", err
	}
	if len(elems) > lim.MaxDepth {
		return "", reject(RulePath, 0,
			fmt.Sprintf("The path is %d elements deep below /memories; the limit is %d.", len(elems), lim.MaxDepth),
			"Use a flatter layout, e.g. /memories/notes/topic.md.")
	}
	return rest, nil
}

// checkElement checks the n-th (1-based) element e of a path.
func checkElement(n int, e string, lim Limits) *Rejection {
	bad := func(what string) *Rejection {
		return reject(RulePath, 0, fmt.Sprintf("Path element %d %s.", n, what), pathHint)
	}
	switch {
	case e == "":
		return bad("is empty (a double slash)")
	case e == ".":
		return bad(`is "." (a ./ segment)`)
	case e == "..":
		return reject(RulePath, 0, fmt.Sprintf(`Path element %d is ".."; paths cannot leave or walk back up the memory directory.`, n), pathHint)
	case strings.EqualFold(e, ".git") || isGitShortName(e):
		return reject(RulePath, 0, fmt.Sprintf("Path element %d names the git directory, which the store manages itself.", n), pathHint)
	case e[0] == '.':
		return bad("is hidden (starts with a dot)")
	case strings.Contains(e, ".."):
		return bad(`contains ".."`)
	case len(e) > lim.MaxNameBytes:
		return reject(RulePath, 0, fmt.Sprintf("Path element %d is %d bytes long; the limit is %d bytes.", n, len(e), lim.MaxNameBytes), "Use a shorter name.")
	case e[0] == ' ':
		return bad("starts with a space")
	case strings.HasSuffix(e, " ") || strings.HasSuffix(e, "."):
		return bad("ends with a space or a dot")
	case strings.ContainsAny(e, `<>:"|?*`):
		return bad(`contains a character some systems cannot store (one of < > : " | ? *)`)
	case isWindowsReserved(e):
		return bad("is a reserved device name (CON, PRN, AUX, NUL, COM1-9, LPT1-9)")
	case !norm.NFC.IsNormalString(e):
		return bad("is not in Unicode normalization form NFC")
	}
	return nil
}

// badRune says why r may not appear in a path, or returns "".
func badRune(r rune) string {
	switch {
	case r == 0:
		return "a NUL character"
	case r == '\\':
		return "a backslash; separate elements with /"
	case r < 0x80:
		if unicode.IsControl(r) {
			return "a control character"
		}
		return ""
	case unicode.Is(unicode.Cc, r):
		return "a control character"
	case unicode.Is(unicode.Cf, r):
		return "an invisible formatting character (a bidi control or zero-width character)"
	case unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp):
		return "a non-ASCII space or separator"
	case unicode.In(r, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point):
		return "an invisible character"
	case unicode.Is(unicode.Co, r) || r == utf8.RuneError || !unicode.In(r, assigned...):
		return "a private-use, replacement or unassigned character"
	case lookalikes[r] || strings.ContainsAny(norm.NFKC.String(string(r)), `./\`):
		return "a look-alike of a dot, slash or backslash"
	}
	return ""
}

// FoldCase returns the key under which path elements that differ only in
// letter case are equal, whichever letters a case-insensitive file system
// (macOS, Windows) takes to be one: name in NFKD, folded with Unicode full
// case folding (golang.org/x/text/cases.Fold), then in NFC. Compatibility
// forms fold too: fullwidth ＳＡＬＥＳ, SALES and sales share a key, and
// so do ΟΔΟΣ and οδος (final sigma) and Straße and STRASSE.
func FoldCase(name string) string {
	if !hasNonASCII(name) {
		return strings.ToLower(name)
	}
	return norm.NFC.String(cases.Fold().String(norm.NFKD.String(name)))
}

// Skeleton returns the key under which path elements that read as one
// another are equal: name in NFKD (fullwidth and other compatibility forms
// become plain letters, accents come apart from their letters), each
// Cyrillic or Greek letter that looks like a Latin one replaced by that
// letter (the confusables the content scan uses), then case-folded and in
// NFC as by [FoldCase]. ｓａｌｅｓ, sаlеs with a Cyrillic а and е, and
// SALES all have the skeleton sales; Cyrillic ё that of Latin ë.
//
// Unlike the content scan, which folds only words that disguise a Latin
// one, Skeleton folds every look-alike letter, so a name in another script
// with one letter swapped for a Latin twin (прoдажи with a Latin o) has the
// skeleton of the original too. Letters that look like no Latin letter are
// kept, so names written in Cyrillic or Greek keep distinct skeletons:
// продажи and маркетинг stay apart.
//
// Two names that differ only in case can still differ in skeleton
// (Cyrillic Н looks like H, its lower case н like no Latin letter), so a
// caller that refuses look-alikes compares the [FoldCase] keys too.
func Skeleton(name string) string {
	if !hasNonASCII(name) {
		return strings.ToLower(name)
	}
	return norm.NFC.String(cases.Fold().String(strings.Map(latinLookalike, norm.NFKD.String(name))))
}

// assigned lists the categories of assigned, non-surrogate characters.
var assigned = []*unicode.RangeTable{unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.C}

// lookalikes holds confusables of '.', '/' and '\' whose NFKC form does not
// contain them. Middle dots and letters of other scripts that merely
// resemble a slash (such as KATAKANA LETTER NO) are allowed: they occur in
// ordinary names and no path API treats them as separators. (Characters such as U+FF0E FULLWIDTH FULL STOP, U+2024 ONE
// DOT LEADER, U+2025, U+FE52, U+FF0F and U+FE68 are caught through NFKC.)
var lookalikes = map[rune]bool{
	0x2215:  true, // DIVISION SLASH
	0x2044:  true, // FRACTION SLASH
	0x29F8:  true, // BIG SOLIDUS
	0x29F9:  true, // BIG REVERSE SOLIDUS
	0x29F5:  true, // REVERSE SOLIDUS OPERATOR
	0x2216:  true, // SET MINUS
	0x27CB:  true, // MATHEMATICAL RISING DIAGONAL
	0x27CD:  true, // MATHEMATICAL FALLING DIAGONAL
	0x2571:  true, // BOX DRAWINGS LIGHT DIAGONAL UPPER RIGHT TO LOWER LEFT
	0x2572:  true, // BOX DRAWINGS LIGHT DIAGONAL UPPER LEFT TO LOWER RIGHT
	0x1735:  true, // PHILIPPINE SINGLE PUNCTUATION
	0x3002:  true, // IDEOGRAPHIC FULL STOP
	0xFF61:  true, // HALFWIDTH IDEOGRAPHIC FULL STOP
	0x06D4:  true, // ARABIC FULL STOP
	0x0701:  true, // SYRIAC SUPRALINEAR FULL STOP
	0x0702:  true, // SYRIAC SUBLINEAR FULL STOP
	0xA4F8:  true, // LISU LETTER TONE MYA TI
	0xA60E:  true, // VAI FULL STOP
	0x10A50: true, // KHAROSHTHI PUNCTUATION DOT
	0x0589:  true, // ARMENIAN FULL STOP
	0x2E3C:  true, // STENOGRAPHIC FULL STOP
	0x1362:  true, // ETHIOPIC FULL STOP
	0x2E4F:  true, // CORNISH VERSE DIVIDER
}

// hasPercentEscape reports whether s holds '%' followed by two hex digits.
func hasPercentEscape(s string) bool {
	for i := 0; i+2 < len(s); i++ {
		if s[i] == '%' && isHex(s[i+1]) && isHex(s[i+2]) {
			return true
		}
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// isGitShortName reports the 8.3 short names Windows gives ".git" (GIT~1).
func isGitShortName(e string) bool {
	if len(e) < 5 || !strings.EqualFold(e[:4], "git~") {
		return false
	}
	for _, c := range []byte(e[4:]) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isWindowsReserved reports device names Windows reserves, with or without
// an extension.
func isWindowsReserved(e string) bool {
	base, _, _ := strings.Cut(e, ".")
	base = strings.ToUpper(strings.TrimRight(base, " "))
	switch base {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if len(base) == 4 && (strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT")) && base[3] >= '0' && base[3] <= '9' {
		return true
	}
	return false
}

// allowedExt lists the extensions a memory file may have, in the order shown
// to the model.
var allowedExt = []string{".md", ".yaml", ".yml", ".json", ".txt", ".csv", ".html", ".js", ".css", ".svg"}

const extHint = "Memory files must end in one of .md, .yaml, .yml, .json, .txt, .csv, or for artifacts .html, .js, .css, .svg."

// FilePath checks that the repository-relative path rel, as returned by
// [Path], may hold a memory file: it is not the root and its extension,
// compared case-insensitively, is one of .md .yaml .yml .json .txt .csv or,
// for artifact files, .html .js .css .svg. It refuses with Rule "extension"
// and the allowed list in the Hint. FilePath does not repeat the checks of
// [Path].
func FilePath(rel string) error {
	if rel == "" {
		return reject(RuleExtension, 0, "/memories is the memory directory, not a file.", "Name a file below it, e.g. /memories/notes/topic.md.")
	}
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	ext := strings.ToLower(filepath.Ext(name))
	for _, a := range allowedExt {
		if ext == a {
			return nil
		}
	}
	if ext == "" || ext == name {
		return reject(RuleExtension, 0, "The file name has no extension.", extHint)
	}
	if !isPlainExt(ext) {
		return reject(RuleExtension, 0, "The file extension is not allowed.", extHint)
	}
	return reject(RuleExtension, 0, fmt.Sprintf("The file extension %s is not allowed.", ext), extHint)
}

// isPlainExt reports whether ext is short and made of ASCII letters and
// digits, so it is safe to repeat in a message.
func isPlainExt(ext string) bool {
	if len(ext) > 17 {
		return false
	}
	for _, c := range []byte(ext[1:]) {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// NoSymlinks checks that no existing element of the repository-relative path
// rel under the directory root is a symbolic link. It calls os.Lstat on each
// prefix of rel in turn; a missing element ends the walk successfully. A link
// is refused with Rule "path"; other Lstat failures are returned wrapped and
// may name host paths, so callers must not show them to a model.
func NoSymlinks(root, rel string) error {
	if rel == "" {
		return nil
	}
	p := root
	elems := strings.Split(rel, "/")
	for i, e := range elems {
		p = filepath.Join(p, e)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("gate: checking path element %d for symbolic links: %w", i+1, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return reject(RulePath, 0,
				fmt.Sprintf("%s/%s is a symbolic link; memory is never written through links.", Root, strings.Join(elems[:i+1], "/")),
				"Write to a path without links, or ask a workspace owner to replace the link by a directory or file.")
		}
	}
	return nil
}

// pathSecret refuses a path whose elements hold a credential. Each element
// is scanned on its own line, so a finding names the element by its
// position.
func pathSecret(elems []string) *Rejection {
	f := findSecret(strings.Join(elems, "\n"))
	if f == nil {
		return nil
	}
	return reject(RuleSecret, 0,
		fmt.Sprintf("Path element %d holds what looks like %s.", f.line, f.kind.shortWhat()),
		"Nothing was written. Name files and directories after their topic, never after a credential, and keep the secret in the environment or a secret manager.")
}

// HoldsSecret reports whether value holds what looks like a credential to
// the detectors of [Content]: for text written elsewhere than the memory,
// such as a data profile, that must show nothing a write would refuse.
func HoldsSecret(value string) bool { return findSecret(value) != nil }

// Text checks a short value that is stored outside any file, such as a
// commit's author, tool or source trailer, for a credential, with the
// detectors of [Content]. field names the value in the message ("author",
// "tool"); it is a constant of the caller, never user input. Text returns
// a [*Rejection] of Rule "secret", or nil.
func Text(field, value string) error {
	f := findSecret(value)
	if f == nil {
		return nil
	}
	return reject(RuleSecret, 0,
		fmt.Sprintf("The %s holds what looks like %s.", field, f.kind.shortWhat()),
		"Nothing was written. Give a name or description there, never a credential.")
}

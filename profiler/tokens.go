package profiler

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// Counter counts tokens with the cl100k_base encoding. The BPE ranks are
// embedded in the binary (offline loader); nothing is downloaded.
type Counter struct {
	enc *tiktoken.Tiktoken

	mu     sync.Mutex
	pieces map[string]int32 // a piece's token count
}

var (
	counterOnce sync.Once
	counter     *Counter
	counterErr  error
)

// NewCounter returns the shared cl100k_base counter.
func NewCounter() (*Counter, error) {
	counterOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		enc, err := tiktoken.GetEncoding("cl100k_base")
		if err != nil {
			counterErr = err
			return
		}
		counter = &Counter{enc: enc, pieces: map[string]int32{}}
	})
	return counter, counterErr
}

// Count returns the number of cl100k_base tokens in s. Text that looks
// like a special token ("<|endoftext|>") counts as ordinary text, as it
// does in a prompt.
//
// The encoder splits text into pieces with a regular expression and
// encodes each piece on its own; that expression, run by a backtracking
// engine, took most of the time. Count splits the text the same way with
// forEachPiece and looks each piece's count up in a table shared by all
// counts (profiles and context budgets repeat the same words, digits and
// punctuation), encoding only the pieces it has not seen.
func (c *Counter) Count(s string) int {
	if !utf8.ValidString(s) {
		s = string([]rune(s)) // as the encoder reads it: U+FFFD per bad byte
	}
	n := 0
	c.mu.Lock()
	defer c.mu.Unlock()
	forEachPiece(s, func(piece string) {
		k, ok := c.pieces[piece]
		if !ok {
			k = int32(len(c.enc.EncodeOrdinary(piece)))
			if len(c.pieces) >= maxCountedPieces {
				clear(c.pieces)
			}
			c.pieces[strings.Clone(piece)] = k
		}
		n += int(k)
	})
	return n
}

// maxCountedPieces bounds Counter's table of pieces (a few megabytes).
const maxCountedPieces = 1 << 16

// forEachPiece calls fn with each piece cl100k_base's pre-tokenizer splits
// s (valid UTF-8) into, in order: the matches of
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//	 ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// taken left to right, the first alternative that matches winning, with
// the classes as the encoder's engine has them (\s is unicode.IsSpace).
// TestForEachPiece and FuzzForEachPiece hold it to the pattern.
func forEachPiece(s string, fn func(piece string)) {
	at := func(i int) (rune, int) {
		if i >= len(s) {
			return -1, 0
		}
		return utf8.DecodeRuneInString(s[i:])
	}
	lower := func(i int) rune {
		r, _ := at(i)
		return unicode.ToLower(r)
	}
	// run returns the end of the run of runes from i that ok accepts.
	run := func(i int, ok func(rune) bool) int {
		for i < len(s) {
			r, w := at(i)
			if !ok(r) {
				break
			}
			i += w
		}
		return i
	}
	for i := 0; i < len(s); {
		r, w := at(i)
		end := i
		switch {
		case r == '\'' && contraction(lower(i+1), lower(i+2)) > 0:
			end = i + 1 + contraction(lower(i+1), lower(i+2))
		case unicode.IsLetter(r):
			end = run(i, unicode.IsLetter)
		case r != '\r' && r != '\n' && !unicode.IsNumber(r) && isLetterAt(s, i+w):
			end = run(i+w, unicode.IsLetter)
		case unicode.IsNumber(r):
			end = i + w
			for k := 1; k < 3; k++ {
				if r2, w2 := at(end); w2 > 0 && unicode.IsNumber(r2) {
					end += w2
				} else {
					break
				}
			}
		case r == ' ' && isSymbolAt(s, i+w):
			end = run(run(i+w, isSymbol), isLineBreak)
		case isSymbol(r):
			end = run(run(i, isSymbol), isLineBreak)
		default: // white space
			j := run(i, unicode.IsSpace)
			lastBreak, last := -1, i
			for k := i; k < j; {
				r2, w2 := at(k)
				if isLineBreak(r2) {
					lastBreak = k + w2
				}
				last = k
				k += w2
			}
			switch {
			case lastBreak > 0: // \s*[\r\n]+
				end = lastBreak
			case j == len(s) || last == i: // \s+(?!\S) at the end, or \s+
				end = j
			default: // \s+(?!\S): all but the space before the next word
				end = last
			}
		}
		fn(s[i:end])
		i = end
	}
}

// contraction returns the length of the contraction ('s, 't, 're, 've,
// 'm, 'll, 'd) whose letters after the apostrophe, lower-cased, begin
// with a and b; 0 for none.
func contraction(a, b rune) int {
	switch {
	case a == 's' || a == 't' || a == 'm' || a == 'd':
		return 1
	case (a == 'r' || a == 'v') && b == 'e', a == 'l' && b == 'l':
		return 2
	}
	return 0
}

// isSymbol reports whether r is none of white space, letter and number.
func isSymbol(r rune) bool {
	return !unicode.IsSpace(r) && !unicode.IsLetter(r) && !unicode.IsNumber(r)
}

func isLineBreak(r rune) bool { return r == '\r' || r == '\n' }

// isLetterAt and isSymbolAt report whether s holds a letter, a symbol, at
// byte i.
func isLetterAt(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r)
}

func isSymbolAt(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return isSymbol(r)
}

// Tokens counts cl100k_base tokens in s. It panics only if the embedded
// encoding cannot be loaded, which is a build defect.
func Tokens(s string) int {
	c, err := NewCounter()
	if err != nil {
		panic("profiler: loading embedded cl100k_base: " + err.Error())
	}
	return c.Count(s)
}

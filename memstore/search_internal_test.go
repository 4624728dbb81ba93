package memstore

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFirstWords(t *testing.T) {
	many := func(n int) []string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = "w" + strings.Repeat("x", i)
		}
		return ws
	}
	tests := []struct {
		name, text, want string
	}{
		{"short, unchanged", "Retention policy, please!", "Retention policy, please!"},
		{"32 words, unchanged", strings.Join(many(32), " ") + "?", strings.Join(many(32), " ") + "?"},
		{"33 words", strings.Join(many(33), ", "), strings.Join(many(32), " ")},
		{"repeats and stop words do not count",
			"The " + strings.Repeat("w ", 40) + strings.Join(many(33), " and "),
			"the " + strings.Repeat("w ", 40) + strings.Join(many(32), " and ") + " and"},
		{"normalised when cut", "Café " + strings.Join(many(32), " "), "cafe " + strings.Join(many(31), " ")},
		{"256 words, unchanged", strings.Repeat("w, ", 256), strings.Repeat("w, ", 256)},
		{"257 words", strings.Repeat("w, ", 257), strings.TrimSpace(strings.Repeat("w ", 256))},
		{"a few words repeated to the body cap", "Retention policy. " + strings.Repeat("Weekly reports! ", 4<<20/16),
			"retention policy" + strings.Repeat(" weekly reports", 127)},
		{"cut at a rune boundary", strings.Repeat(" ", maxQueryBytes-1) + "é retention", ""},
		{"only the first 64 KiB is read", strings.Repeat(" ", maxQueryBytes-3) + "é retention", "e"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := firstWords(tt.text); got != tt.want {
				t.Errorf("firstWords(%.60q…) = %.80q…, want %.80q…", tt.text, got, tt.want)
			}
		})
	}
}

// FuzzFirstWords checks that a query keeps the first MaxQueryWords
// distinct words of its first maxQueryTokens words, in order, and no
// other, and that cutting it again changes nothing.
func FuzzFirstWords(f *testing.F) {
	f.Add("retention policy")
	f.Add(strings.Repeat("a b c d e f g h i j k l m n o p q r s t u v w x y z aa bb cc dd ee ff gg hh ", 3))
	f.Add("Ünïcode wörds, ﬁ ligatures and 🙂")
	f.Add(strings.Repeat("same words again ", 100))
	f.Fuzz(func(t *testing.T, text string) {
		got := firstWords(text)
		var head []string
		Words(text[:min(len(text), maxQueryBytes)], func(w string) {
			if len(head) < maxQueryTokens {
				head = append(head, w)
			}
		})
		want := distinctWords(strings.Join(head, " "))
		want = want[:min(len(want), MaxQueryWords)]
		if d := distinctWords(got); !slices.Equal(d, want) {
			t.Errorf("firstWords(%q) has words %q, want %q", text, d, want)
		}
		if again := firstWords(got); again != got {
			t.Errorf("firstWords is not idempotent: %q, then %q", got, again)
		}
	})
}

// distinctWords returns text's distinct words that are not stop words, in
// order of first use.
func distinctWords(text string) []string {
	var out []string
	TermWords(text, func(w, _ string) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	})
	return out
}

// TestSnippet: a snippet centres on the first of the query's words the
// text holds, and only the words a search reads count, however long the
// query.
func TestSnippet(t *testing.T) {
	text := strings.Repeat("Keep weekly reports for a year. ", 20) + "Then archive them, and keep the index. " +
		strings.Repeat("Old drafts go after a month. ", 20)
	fillers := strings.Repeat("alpha beta ", maxQueryTokens/2)
	tests := []struct {
		name, query string
		want        string // the snippet holds it
		not         string // and not this
	}{
		{"short text, whole", "archive", "", ""},
		{"around the word", "Archive!", "archive them", "Keep weekly reports for a year. Keep"},
		{"the word held earliest in the text", "drafts index", "keep the index", ""},
		{"no word held: the start", "xylophone", "Keep weekly reports", "archive"},
		{"a word repeated to the body cap", strings.Repeat("archive ", 4<<20/8), "archive them", ""},
		{"a word after the words a search reads", fillers + "archive", "Keep weekly reports", "archive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := text
			if tt.want == "" {
				in = "Then archive them."
				tt.want = in
			}
			got := Snippet(in, tt.query, 120)
			if !strings.Contains(got, tt.want) || (tt.not != "" && strings.Contains(got, tt.not)) {
				t.Errorf("Snippet(…, %.40q) = %q, want it to hold %q and not %q", tt.query, got, tt.want, tt.not)
			}
			if n := utf8.RuneCountInString(got); n > 122 {
				t.Errorf("snippet of %d runes, want at most 120 and two marks", n)
			}
		})
	}
}

package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPrefixSuffix(t *testing.T) {
	for _, tc := range []struct {
		s            string
		n            int
		prefix, suff string
	}{
		{"", 3, "", ""},
		{"abc", 3, "abc", "abc"},
		{"abc", 5, "abc", "abc"},
		{"abc", 2, "ab", "bc"},
		{"abc", 0, "", ""},
		{"abc", -1, "", ""},
		{"aé", 2, "a", "é"}, // é is two bytes
		{"éa", 2, "é", "a"},
		{"日本", 4, "日", "本"}, // three bytes each
		{"日本", 2, "", ""},
		{"\xff\xfe", 1, "\xff", "\xfe"}, // invalid bytes are boundaries
	} {
		if got := Prefix(tc.s, tc.n); got != tc.prefix {
			t.Errorf("Prefix(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.prefix)
		}
		if got := Suffix(tc.s, tc.n); got != tc.suff {
			t.Errorf("Suffix(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.suff)
		}
	}
}

func FuzzPrefixSuffix(f *testing.F) {
	f.Add("héllo wörld", 4)
	f.Add("日本語", 5)
	f.Fuzz(func(t *testing.T, s string, n int) {
		p, q := Prefix(s, n), Suffix(s, n)
		for _, cut := range []string{p, q} {
			if len(cut) > max(n, 0) && len(cut) != len(s) {
				t.Fatalf("%q is longer than %d bytes", cut, n)
			}
			if utf8.ValidString(s) && !utf8.ValidString(cut) {
				t.Fatalf("%q of valid %q is not valid", cut, s)
			}
		}
		if !strings.HasPrefix(s, p) || !strings.HasSuffix(s, q) {
			t.Fatalf("Prefix %q or Suffix %q is not of %q", p, q, s)
		}
		// A valid string loses less than one rune.
		if utf8.ValidString(s) && n < len(s) && n >= 0 && (n-len(p) >= utf8.UTFMax || n-len(q) >= utf8.UTFMax) {
			t.Fatalf("cut %q / %q lost a whole rune from %q at %d", p, q, s, n)
		}
	})
}

package memstore_test

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/selmem/selmem/memstore"
)

func TestTerms(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"When did Caroline go to the support group?", []string{"carolin", "go", "support", "group"}},
		{"Retention policies: retained RECORDS", []string{"retent", "polici", "retain", "record"}},
		{"Café crème, naïve", []string{"cafe", "creme", "naiv"}},
		{"ISO 8601 dates, v2 api", []string{"iso", "8601", "date", "v2", "api"}},
		{"The children ran; we bought what they made.", []string{"child", "run", "buy", "make"}},
		{"the and of", nil},
		{"", nil},
	}
	for _, tt := range tests {
		var got []string
		memstore.Terms(tt.text, func(term string) { got = append(got, term) })
		if !slices.Equal(got, tt.want) {
			t.Errorf("Terms(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestStem(t *testing.T) {
	tests := []struct{ word, want string }{
		{"running", "run"},
		{"ran", "run"}, // irregular: its base form's stem
		{"went", "go"}, // likewise, three letters or fewer after all
		{"taught", "teach"},
		{"children", "child"},
		{"found", "found"}, // a verb of its own, not only "find"
		{"saw", "saw"},     // a noun too
		{"lives", "live"},  // "live", not "life"
		{"v2", "v2"},
		{"ran2", "ran2"},
	}
	for _, tt := range tests {
		if got := memstore.Stem(tt.word); got != tt.want {
			t.Errorf("Stem(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

func TestEditVariants(t *testing.T) {
	vs := memstore.EditVariants("polcy")
	for _, want := range []string{"policy", "plcy", "pocly", "polcey", "polcyx"} {
		if !slices.Contains(vs, want) {
			t.Errorf("EditVariants(polcy) lacks %q", want)
		}
	}
	for _, v := range vs {
		if v == "polcy" || v[0] != 'p' {
			t.Errorf("EditVariants(polcy) holds %q: the word itself, or another first letter", v)
		}
	}
	if got := memstore.EditVariants("café"); slices.ContainsFunc(got, func(v string) bool { return !utf8.ValidString(v) }) {
		t.Errorf("EditVariants(café) holds invalid UTF-8")
	}
	// A word longer than any mistyped one has none: a query's 64 KiB
	// word would otherwise have millions, each 64 KiB long.
	long := strings.Repeat("a", memstore.MaxTypoWordLen)
	if got := memstore.EditVariants(long); len(got) == 0 {
		t.Errorf("EditVariants of a word of %d bytes has none", len(long))
	}
	for _, w := range []string{long + "b", "p" + strings.Repeat("olicy", 20_000)} {
		if got := memstore.EditVariants(w); got != nil {
			t.Errorf("EditVariants of a word of %d bytes has %d variants, want none", len(w), len(got))
		}
		if got := memstore.TypoStemVariants(w + "s"); got != nil {
			t.Errorf("TypoStemVariants of a word of %d bytes has %d variants, want none", len(w)+1, len(got))
		}
	}
}

func TestTypoPrefixes(t *testing.T) {
	tests := []struct {
		word string
		want []string
	}{
		{"visits", []string{"visits", "visit"}}, // the stem begins "visitor"
		{"visit", []string{"visit"}},            // its own stem
		{"runs", []string{"runs"}},              // stem "run" shorter than the minimum
		{"policies", []string{"policies", "polici"}},
	}
	for _, tt := range tests {
		if got := memstore.TypoPrefixes(tt.word, 4); !slices.Equal(got, tt.want) {
			t.Errorf("TypoPrefixes(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

func TestTypoStemVariants(t *testing.T) {
	tests := []struct {
		word    string
		want    []string // must be among the variants
		notWant []string
		none    bool
	}{
		{word: "segmentts", want: []string{"segment"}, notWant: []string{"tegment"}}, // stem "segmentt", one edit from the term "segment"; first letter kept
		{word: "visitt", none: true}, // its own stem: EditVariants covers it
		{word: "cnsider", none: true},
	}
	for _, tt := range tests {
		got := memstore.TypoStemVariants(tt.word)
		if tt.none {
			if len(got) != 0 {
				t.Errorf("TypoStemVariants(%q) = %d variants, want none", tt.word, len(got))
			}
			continue
		}
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("TypoStemVariants(%q) lacks %q", tt.word, w)
			}
		}
		for _, w := range tt.notWant {
			if slices.Contains(got, w) {
				t.Errorf("TypoStemVariants(%q) holds %q", tt.word, w)
			}
		}
	}
}

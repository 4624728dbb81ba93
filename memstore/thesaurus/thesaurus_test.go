package thesaurus

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/selmem/selmem/memstore"
)

func TestWordNet_Related(t *testing.T) {
	tests := []struct {
		word string
		want []string // each must be among the related words
		not  []string // none may be
		none bool     // no related words at all
	}{
		{word: "client", want: []string{"customer"}},
		{word: "Client", want: []string{"customer"}},
		{word: "clients", want: []string{"customer"}},
		// A lemma with no related word is not read as an inflection
		// ("custom" + "er").
		{word: "customer", none: true},
		{word: "despises", want: []string{"scorn"}},
		// "get" has too many meanings to stand for "receive".
		{word: "receive", not: []string{"get"}},
		{word: "ceases", want: []string{"discontinue"}},
		{word: "buys", want: []string{"purchase"}},
		// "electric" is first of all "using electricity"; galvanic and
		// electric share only a rarer sense of each.
		{word: "galvanic", want: []string{"voltaic"}, not: []string{"electric"}},
		{word: "blorfix", none: true},
		{word: "", none: true},
		{word: "s", none: true},
	}
	for _, tc := range tests {
		got := WordNet{}.Related(tc.word)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("Related(%q) = %q, want %q among them", tc.word, got, w)
			}
		}
		for _, w := range tc.not {
			if slices.Contains(got, w) {
				t.Errorf("Related(%q) = %q, want no %q", tc.word, got, w)
			}
		}
		if tc.none && len(got) > 0 {
			t.Errorf("Related(%q) = %q, want none", tc.word, got)
		}
	}
}

// TestTable checks the embedded table's form (gen.go): sorted lines of a
// lemma, a tab, its related lemmas, a tab and its other spellings, all of
// two or more letters a-z, none the lemma itself or repeated, each
// spelling one edit from the lemma.
func TestTable(t *testing.T) {
	if !strings.HasSuffix(table, "\n") {
		t.Fatal("the table does not end with a newline") // find relies on it
	}
	plain := regexp.MustCompile(`^[a-z][a-z]+$`)
	var lemmas []string
	for line := range strings.Lines(table) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(f) != 3 || !plain.MatchString(f[0]) {
			t.Fatalf("line %q: want a lemma, related lemmas and spellings, tab-separated", line)
		}
		lemma := f[0]
		for _, words := range [][]string{strings.Fields(f[1]), strings.Fields(f[2])} {
			for i, w := range words {
				if !plain.MatchString(w) || w == lemma || slices.Contains(words[:i], w) {
					t.Fatalf("line %q: %q is not a new lemma of letters a-z", line, w)
				}
			}
		}
		for _, w := range strings.Fields(f[2]) {
			if !slices.Contains(memstore.EditVariants(lemma), w) && !slices.Contains(memstore.EditVariants(w), lemma) {
				t.Fatalf("line %q: spelling %q is not one edit from the lemma", line, w)
			}
		}
		lemmas = append(lemmas, lemma)
	}
	if !slices.IsSorted(lemmas) || len(slices.Compact(slices.Clone(lemmas))) != len(lemmas) {
		t.Fatal("lemmas are not sorted and unique")
	}
	// The binary search finds every lemma, and nothing between two.
	for i, l := range lemmas {
		if _, ok := find(l); !ok {
			t.Fatalf("find(%q): not found", l)
		}
		if _, ok := find(l + "\x00"); ok && (i+1 == len(lemmas) || lemmas[i+1] != l+"\x00") {
			t.Fatalf("find(%q): found", l+"\x00")
		}
	}
	for _, w := range []string{"", "\x00", "zzzzzzzz", "\xff"} {
		if _, ok := find(w); ok {
			t.Errorf("find(%q): found", w)
		}
	}
	if len(lemmas) < 50000 {
		t.Errorf("%d lemmas, want WordNet's tens of thousands", len(lemmas))
	}
}

func TestWordNet_Spellings(t *testing.T) {
	tests := []struct {
		word  string
		want  []string
		known bool
	}{
		{"color", []string{"colour"}, true},
		{"favourites", []string{"favorite"}, true}, // the base form's
		{"organize", []string{"organise"}, true},
		{"rain", nil, true},
		{"blorfix", nil, false},
		{"", nil, false},
	}
	for _, tc := range tests {
		got, known := WordNet{}.Spellings(tc.word)
		if !slices.Equal(got, tc.want) || known != tc.known {
			t.Errorf("Spellings(%q) = %q, %v; want %q, %v", tc.word, got, known, tc.want, tc.known)
		}
	}
}

func FuzzRelated(f *testing.F) {
	for _, s := range []string{"client", "clients", "ies", "men", "Ünïcode", "es", "\xff", "a\tb", "zzzzzz", "\n"} {
		f.Add(s)
	}
	plain := regexp.MustCompile(`^[a-z][a-z]+$`)
	f.Fuzz(func(t *testing.T, word string) {
		spellings, _ := WordNet{}.Spellings(word)
		for _, w := range append(WordNet{}.Related(word), spellings...) {
			if !plain.MatchString(w) {
				t.Fatalf("Related or Spellings(%q) returned %q", word, w)
			}
		}
	})
}

// BenchmarkWordNet_Spellings looks up a query's words: known, inflected
// and unknown.
func BenchmarkWordNet_Spellings(b *testing.B) {
	words := []string{"client", "clients", "favourites", "considered", "blorfix", "retension"}
	for b.Loop() {
		for _, w := range words {
			WordNet{}.Spellings(w)
		}
	}
}

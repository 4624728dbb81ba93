package thesaurus

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/selmem/selmem/memstore"
)

// wordsCase is a word and what a lookup of it must return.
type wordsCase struct {
	word string
	want []string // each must be among the words returned
	not  []string // none may be
	none bool     // no words at all
}

// checkWords checks the lookup name of each case's word.
func checkWords(t *testing.T, name string, lookup func(string) []string, tests []wordsCase) {
	t.Helper()
	for _, tc := range tests {
		got := lookup(tc.word)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%s(%q) = %q, want %q among them", name, tc.word, got, w)
			}
		}
		for _, w := range tc.not {
			if slices.Contains(got, w) {
				t.Errorf("%s(%q) = %q, want no %q", name, tc.word, got, w)
			}
		}
		if tc.none && len(got) > 0 {
			t.Errorf("%s(%q) = %q, want none", name, tc.word, got)
		}
	}
}

func TestWordNet_Related(t *testing.T) {
	checkWords(t, "Related", WordNet{}.Related, []wordsCase{
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
	})
}

// TestTable checks the embedded table's form (gen.go): sorted lines of a
// lemma, a tab, its related lemmas, a tab and its other spellings, all of
// two or more letters a-z, none the lemma itself or repeated, each
// spelling one edit from the lemma.
func TestTable(t *testing.T) {
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
	checkKeys(t, table, lemmas)
	if len(lemmas) < 50000 {
		t.Errorf("%d lemmas, want WordNet's tens of thousands", len(lemmas))
	}
}

func TestGloVe_Associated(t *testing.T) {
	checkWords(t, "Associated", GloVe{}.Associated, []wordsCase{
		{word: "visit", want: []string{"trip"}},
		{word: "Visit", want: []string{"trip"}},
		{word: "study", want: []string{"research"}, not: []string{"studies", "studying"}},
		// Stop words are left out: full text never searches them.
		{word: "course", not: []string{"just", "so", "this"}},
		{word: "blorfix", none: true},
		{word: "", none: true},
		{word: "\xff", none: true},
	})
}

// TestGloVeTable checks the embedded table's form (glovegen.go): sorted
// lines of a word, a tab and one to eight associated words, all of two or
// more letters a-z, none a stop word, of the word's stem or repeated.
func TestGloVeTable(t *testing.T) {
	plain := regexp.MustCompile(`^[a-z][a-z]+$`)
	var words []string
	for line := range strings.Lines(gloveTable) {
		word, rest, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		assoc := strings.Fields(rest)
		if !ok || !plain.MatchString(word) || len(assoc) == 0 || len(assoc) > 8 || strings.Join(assoc, " ") != rest {
			t.Fatalf("line %q: want a word, a tab and one to eight words, space-separated", line)
		}
		for i, w := range assoc {
			terms := 0
			memstore.Terms(w, func(string) { terms++ })
			if !plain.MatchString(w) || terms == 0 || memstore.Stem(w) == memstore.Stem(word) || slices.Contains(assoc[:i], w) {
				t.Fatalf("line %q: %q is not a new word of letters a-z, of another stem", line, w)
			}
		}
		words = append(words, word)
	}
	checkKeys(t, gloveTable, words)
	if len(words) < 20000 {
		t.Errorf("%d words, want tens of thousands", len(words))
	}
}

// checkKeys checks that tbl, whose lines begin with keys, ends with a
// newline and lists its keys sorted and once each, and that find finds
// every key and nothing between two.
func checkKeys(t *testing.T, tbl string, keys []string) {
	t.Helper()
	if !strings.HasSuffix(tbl, "\n") {
		t.Fatal("the table does not end with a newline") // find relies on it
	}
	if !slices.IsSorted(keys) || len(slices.Compact(slices.Clone(keys))) != len(keys) {
		t.Fatal("keys are not sorted and unique")
	}
	for i, k := range keys {
		if _, ok := find(tbl, k); !ok {
			t.Fatalf("find(%q): not found", k)
		}
		if _, ok := find(tbl, k+"\x00"); ok && (i+1 == len(keys) || keys[i+1] != k+"\x00") {
			t.Fatalf("find(%q): found", k+"\x00")
		}
	}
	for _, w := range []string{"", "\x00", "zzzzzzzz", "\xff"} {
		if _, ok := find(tbl, w); ok {
			t.Errorf("find(%q): found", w)
		}
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
		words := append(WordNet{}.Related(word), spellings...)
		for _, w := range append(words, GloVe{}.Associated(word)...) {
			if !plain.MatchString(w) {
				t.Fatalf("Related, Spellings or Associated(%q) returned %q", word, w)
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

// TestGloVe_Vector checks the vectors: unit length, ranked by frequency,
// nearer for words used alike than for unrelated ones, none for words
// outside the vocabulary.
func TestGloVe_Vector(t *testing.T) {
	cos := func(a, b string) float64 {
		x, _ := GloVe{}.Vector(a)
		y, _ := GloVe{}.Vector(b)
		var c float64
		for k := range x {
			c += float64(x[k]) * float64(y[k])
		}
		return c
	}
	for _, w := range []string{"the", "trip", "invoice", "embryo"} {
		v, rank := GloVe{}.Vector(w)
		if rank == 0 {
			t.Fatalf("Vector(%q): no vector", w)
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-5 {
			t.Errorf("Vector(%q): squared length %v, want 1", w, n)
		}
	}
	if _, the := (GloVe{}).Vector("the"); the != 1 {
		t.Errorf("rank of %q = %d, want 1", "the", the)
	}
	if _, trip := (GloVe{}).Vector("trip"); trip < 100 || trip > 10000 {
		t.Errorf("rank of %q = %d, want a common word's", "trip", trip)
	}
	for _, w := range []string{"zorblax", "", "Trip", "trip2", "café"} {
		if v, rank := (GloVe{}).Vector(w); rank != 0 || v != [VectorDim]float32{} {
			t.Errorf("Vector(%q) = rank %d, want no vector", w, rank)
		}
	}
	for _, tt := range []struct{ word, near, far string }{
		{"trip", "vacation", "invoice"},
		{"ankle", "knee", "revenue"},
		{"customer", "client", "mountain"},
	} {
		if n, f := cos(tt.word, tt.near), cos(tt.word, tt.far); n <= f+0.2 {
			t.Errorf("cos(%s, %s) = %.2f, cos(%s, %s) = %.2f: want the first well above", tt.word, tt.near, n, tt.word, tt.far, f)
		}
	}
}

// TestGloVe_CommonDirection checks that the direction is a unit vector
// the vocabulary leans along, and that without it the vectors of
// unrelated words are nearer orthogonal: their mean cosine falls from
// 0.12 to 0.08.
func TestGloVe_CommonDirection(t *testing.T) {
	u := GloVe{}.CommonDirection()
	var n2 float64
	for _, x := range u {
		n2 += x * x
	}
	if math.Abs(n2-1) > 1e-9 {
		t.Errorf("squared length %v, want 1", n2)
	}
	if again := (GloVe{}).CommonDirection(); again != u {
		t.Error("CommonDirection differs between calls")
	}
	unrelated := []string{"carpenter", "invoice", "tortoise", "quarter", "pottery", "golf",
		"remote", "interview", "canyon", "receipt", "winter", "dashboard"}
	// vec returns word's vector, without its part along u when drop.
	vec := func(word string, drop bool) [VectorDim]float64 {
		v, rank := GloVe{}.Vector(word)
		if rank == 0 {
			t.Fatalf("Vector(%q): no vector", word)
		}
		var x [VectorDim]float64
		var along float64
		for k := range v {
			x[k] = float64(v[k])
			along += x[k] * u[k]
		}
		if along <= 0 {
			t.Errorf("%q does not lean along the common direction: %.3f", word, along)
		}
		if drop {
			for k := range x {
				x[k] -= along * u[k]
			}
		}
		return x
	}
	cos := func(a, b [VectorDim]float64) float64 {
		var d, na, nb float64
		for k := range a {
			d, na, nb = d+a[k]*b[k], na+a[k]*a[k], nb+b[k]*b[k]
		}
		return d / math.Sqrt(na*nb)
	}
	var with, without float64
	pairs := 0
	for i, a := range unrelated {
		for _, b := range unrelated[i+1:] {
			with += cos(vec(a, false), vec(b, false))
			without += cos(vec(a, true), vec(b, true))
			pairs++
		}
	}
	with, without = with/float64(pairs), without/float64(pairs)
	if without >= with-0.03 || without > 0.1 {
		t.Errorf("mean cosine of unrelated words %.3f with the common direction, %.3f without: want it well under 0.1 without", with, without)
	}
}

// TestGloVeVectors checks glovevec.bin's form: records of a word of two
// or more letters a-z and VectorDim bytes, each word once, none all zero,
// glovegen's whole vocabulary.
func TestGloVeVectors(t *testing.T) {
	plain := regexp.MustCompile(`^[a-z][a-z]+$`)
	seen := map[string]bool{}
	for i := 0; i < len(gloveVectors); {
		n := int(gloveVectors[i])
		if i+1+n+VectorDim > len(gloveVectors) {
			t.Fatalf("record at %d runs past the end", i)
		}
		w := gloveVectors[i+1 : i+1+n]
		if !plain.MatchString(w) || seen[w] {
			t.Fatalf("record at %d: word %q is not plain or seen before", i, w)
		}
		seen[w] = true
		if strings.Trim(gloveVectors[i+1+n:i+1+n+VectorDim], "\x00") == "" {
			t.Errorf("%q: zero vector", w)
		}
		i += 1 + n + VectorDim
	}
	if len(seen) != 50000 || len(vectorIndex()) != len(seen) {
		t.Errorf("%d words, %d indexed; want 50000", len(seen), len(vectorIndex()))
	}
}

package embedder_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/selmem/selmem/memstore/embedder"
)

// embedOne embeds text with the built-in embedder.
func embedOne(t *testing.T, text string) []float32 {
	t.Helper()
	vecs, err := embedder.NewBuiltin().Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatalf("Embed(%q): %v", text, err)
	}
	return vecs[0]
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestBuiltin_IDAndDim(t *testing.T) {
	b := embedder.NewBuiltin()
	if got, want := b.ID(), "builtin-hash-glove-v3-484"; got != want {
		t.Errorf("ID() = %q, want %q", got, want)
	}
	if got, want := b.Dim(), 484; got != want {
		t.Errorf("Dim() = %d, want %d", got, want)
	}
}

func TestBuiltin_Vectors(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		wantLen float64 // L2 norm
		maxNZ   int     // most non-zero dimensions allowed
		meaning bool    // whether the semantic part (the last 100) is set
	}{
		{"empty", "", 0, 0, false},
		{"punctuation only", `"*:-'();`, 0, 0, false},
		{"two words", "retention policy", 1, 140, true},
		{"two long words", "customer invoices", 1, 140, true},
		{"paragraph", "Customer records are kept for seven years; invoices for ten.", 1, 484, true},
		{"words GloVe lacks", "zorblax quillfeather", 1, 40, false},
		{"stop words only", "the and of", 1, 40, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := embedOne(t, tt.text)
			if got, want := len(v), 484; got != want {
				t.Fatalf("len = %d, want %d", got, want)
			}
			if got := math.Sqrt(dot(v, v)); math.Abs(got-tt.wantLen) > 1e-5 {
				t.Errorf("norm = %v, want %v", got, tt.wantLen)
			}
			nz := 0
			for _, x := range v {
				if x != 0 {
					nz++
				}
			}
			if nz > tt.maxNZ {
				t.Errorf("%d non-zero dimensions, want at most %d", nz, tt.maxNZ)
			}
			if got := dot(v[384:], v[384:]) > 0; got != tt.meaning {
				t.Errorf("semantic part set: %v, want %v", got, tt.meaning)
			}
		})
	}
}

func TestBuiltin_Deterministic(t *testing.T) {
	const text = "Sales figures are reported in EUR, rounded to thousands."
	a, b := embedOne(t, text), embedOne(t, text)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("dimension %d differs between runs: %v vs %v", i, a[i], b[i])
		}
	}
}

func TestBuiltin_Normalisation(t *testing.T) {
	tests := []struct{ a, b string }{
		{"Café Crème", "cafe creme"},
		{"RETENTION-Policy", "retention policy"},
		{"ﬁle", "file"}, // NFKD ligature
	}
	for _, tt := range tests {
		if got := dot(embedOne(t, tt.a), embedOne(t, tt.b)); got < 0.9999 {
			t.Errorf("cos(%q, %q) = %v, want 1", tt.a, tt.b, got)
		}
	}
}

func TestBuiltin_Similarity(t *testing.T) {
	const target = "Retention policy: customer data is deleted after 90 days."
	distractors := []string{
		"Revenue is reported per quarter in the sales dashboard.",
		"Use the staging database for tests, never production.",
		"Dates are formatted as ISO 8601 in every export.",
		"The retail team owns the pricing spreadsheet.",
	}
	tests := []struct{ name, query string }{
		{"exact", "retention policy"},
		{"typo", "retension polcy"},
		{"partial word", "retent"},
		{"case and accents", "RÉTENTION"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := embedOne(t, tt.query)
			want := dot(q, embedOne(t, target))
			for _, d := range distractors {
				if got := dot(q, embedOne(t, d)); got >= want {
					t.Errorf("cos(%q, %q) = %v >= cos with target %v", tt.query, d, got, want)
				}
			}
		})
	}
}

// TestBuiltin_Meaning checks the semantic part: texts that share no word
// but are about the same thing are nearer than texts about other things.
func TestBuiltin_Meaning(t *testing.T) {
	tests := []struct{ query, near, far string }{
		{"vacation abroad", "Our trip to Lisbon was lovely.", "The invoice is due on Friday."},
		{"car repair", "The mechanic fixed the engine of my truck.", "Use ISO 8601 dates in exports."},
		{"sprained ankle", "I hurt my knee playing soccer.", "The quarterly revenue grew by 4%."},
	}
	for _, tt := range tests {
		q := embedOne(t, tt.query)
		near, far := dot(q, embedOne(t, tt.near)), dot(q, embedOne(t, tt.far))
		if near <= far || near < embedder.NewBuiltin().SimilarityFloor() {
			t.Errorf("%q: cos with %q %.3f, with %q %.3f; want the first above the floor and the second",
				tt.query, tt.near, near, tt.far, far)
		}
	}
}

// TestBuiltin_UnrelatedTexts checks that the semantic part of texts about
// unrelated things keeps them apart: averaging GloVe vectors keeps the
// direction they all lean along, which put these texts' semantic parts
// at a mean cosine of 0.52; without it, 0.41.
func TestBuiltin_UnrelatedTexts(t *testing.T) {
	texts := []string{
		"Dad walked him round the golf course every evening.",
		"The invoice is due on Friday and the accountant wants the receipts.",
		"I finally finished the pottery class and the bowl came out lopsided.",
		"We moved the standup to Tuesdays because half the team is remote.",
		"She got the job at the design studio after three interviews.",
		"Revenue is reported per quarter in the sales dashboard.",
		"The tortoise sleeps in the fridge all winter.",
		"Never print personal data such as customer emails.",
	}
	vecs, err := embedder.NewBuiltin().Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	// The semantic part follows the 384 lexical dimensions.
	semantic := func(v []float32) []float32 { return v[384:] }
	var sum float64
	pairs := 0
	for i := range vecs {
		for j := i + 1; j < len(vecs); j++ {
			a, b := semantic(vecs[i]), semantic(vecs[j])
			sum += dot(a, b) / math.Sqrt(dot(a, a)*dot(b, b))
			pairs++
		}
	}
	if mean := sum / float64(pairs); mean > 0.45 {
		t.Errorf("mean cosine of unrelated texts' semantic parts %.3f, want at most 0.45", mean)
	}
}

func TestBuiltin_ContextCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := embedder.NewBuiltin().Embed(ctx, []string{"x"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Embed with canceled context: err = %v, want context.Canceled", err)
	}
}

// FuzzBuiltin_Embed embeds any text: one vector of Dim dimensions, of
// unit length or zero, the same each time, with a semantic part only
// beside a lexical one.
func FuzzBuiltin_Embed(f *testing.F) {
	for _, s := range []string{"", "retention policy", "Café ﬁle", "the and of", "zorblax", "trip\x00vacation", "\xff\xfe", strings.Repeat("word ", 1000)} {
		f.Add(s)
	}
	b := embedder.NewBuiltin()
	f.Fuzz(func(t *testing.T, text string) {
		vecs, err := b.Embed(context.Background(), []string{text, text})
		if err != nil {
			t.Fatal(err)
		}
		v := vecs[0]
		if len(v) != b.Dim() {
			t.Fatalf("len %d, want %d", len(v), b.Dim())
		}
		if n := dot(v, v); n != 0 && math.Abs(n-1) > 1e-4 {
			t.Fatalf("squared length %v, want 0 or 1", n)
		}
		if dot(v[:384], v[:384]) == 0 && dot(v[384:], v[384:]) != 0 {
			t.Fatal("a semantic part without a lexical one")
		}
		for i := range v {
			if v[i] != vecs[1][i] || math.IsNaN(float64(v[i])) {
				t.Fatalf("dimension %d: %v, then %v", i, v[i], vecs[1][i])
			}
		}
	})
}

package profiler

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dlclark/regexp2"
)

// TestCounter_OrdinaryMatchesEncode checks that Count, which takes the
// encoder's ordinary path, counts what the full encoder counts when no
// special token is allowed, special-token text included.
func TestCounter_OrdinaryMatchesEncode(t *testing.T) {
	c, err := NewCounter()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"",
		"- region (string, 4 values): EMEA 25.1%, AMER 24.9%",
		"amount: min 10.00, p50 512.25, max 8,991.00\n\n## Samples\n",
		"text with <|endoftext|> and <|fim_prefix|> inside",
		"ünïcödé — 東京 12345678 it's we'll   \t\r\n",
		"    leading spaces and trailing   ",
	} {
		if got, want := c.Count(s), len(c.enc.Encode(s, nil, nil)); got != want {
			t.Errorf("Count(%q) = %d, the full encoder counts %d", s, got, want)
		}
	}
}

func FuzzCounter_OrdinaryMatchesEncode(f *testing.F) {
	f.Add("a <|endoftext|> b")
	f.Add("12345 it's\r\n  x")
	c, err := NewCounter()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := c.Count(s), len(c.enc.Encode(s, nil, nil)); got != want {
			t.Fatalf("Count(%q) = %d, the full encoder counts %d", s, got, want)
		}
	})
}

// cl100kPattern is the pre-tokenizer of cl100k_base, as the encoder
// compiles it (tiktoken-go, encoding.go).
const cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

var cl100kRegexp = regexp2.MustCompile(cl100kPattern, regexp2.None)

// regexPieces splits s as the encoder does: the pattern's matches over
// its runes.
func regexPieces(t testing.TB, s string) []string {
	runes := []rune(s)
	var out []string
	m, err := cl100kRegexp.FindStringMatch(s)
	for ; m != nil && err == nil; m, err = cl100kRegexp.FindNextMatch(m) {
		out = append(out, string(runes[m.Index:m.Index+m.Length]))
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func pieces(s string) []string {
	var out []string
	forEachPiece(s, func(p string) { out = append(out, p) })
	return out
}

// TestForEachPiece checks the pieces of texts that exercise each
// alternative of the pattern against the pattern itself.
func TestForEachPiece(t *testing.T) {
	for _, s := range []string{
		"",
		"it's we'll THEY'RE I'M you'VE he'd 'sa 'hello '",
		"(hello) [x] +word \"quoted\" x's",
		"12345 1,234.56 ١٢٣ ⅷ 2026-11-02",
		"a  b   c\t\td \u00a0e \u3000f",
		"line\n\nnext\r\n  \n  indented\n",
		"trailing spaces   ",
		"   leading",
		" +-* !!\n\n?? \t!",
		"ünïcödé — 東京 наш café\u0301 🙂🙂 x",
		"- region (string, 4 values): EMEA 25.1%, AMER 24.9%",
		"\r\r\n\n \r x",
		" \n",
		"\u0085\u2028x\u2029 y",
	} {
		got, want := pieces(s), regexPieces(t, s)
		if !slices.Equal(got, want) {
			t.Errorf("pieces of %q:\n got %q\nwant %q", s, got, want)
		}
	}
}

// FuzzForEachPiece holds forEachPiece to the encoder's pattern on any
// text (as the encoder reads it: invalid bytes become U+FFFD).
func FuzzForEachPiece(f *testing.F) {
	f.Add("it's 12345 (x) \r\n  y\t")
	f.Add("a\u00a0 'LL b\n \n")
	f.Fuzz(func(t *testing.T, s string) {
		s = string([]rune(s))
		if got, want := pieces(s), regexPieces(t, s); !slices.Equal(got, want) {
			t.Fatalf("pieces of %q:\n got %q\nwant %q", s, got, want)
		}
	})
}

// BenchmarkCount counts the tokens of a golden profile with Count, with
// its table of pieces cleared each time (cold) and kept (warm), and with
// the encoder alone (the baseline), and reports each median's ratio to
// the baseline's.
func BenchmarkCount(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "golden", "customers-20000.md"))
	if err != nil {
		b.Fatal(err)
	}
	text := string(data)
	c, err := NewCounter()
	if err != nil {
		b.Fatal(err)
	}
	if c.Count(text) != len(c.enc.EncodeOrdinary(text)) {
		b.Fatal("Count and the encoder disagree")
	}
	median := func(f func()) float64 {
		var ds []float64
		for range 31 {
			t0 := time.Now()
			f()
			ds = append(ds, float64(time.Since(t0).Nanoseconds()))
		}
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	for b.Loop() {
		base := median(func() { c.enc.EncodeOrdinary(text) })
		cold := median(func() {
			c.mu.Lock()
			clear(c.pieces)
			c.mu.Unlock()
			c.Count(text)
		})
		warm := median(func() { c.Count(text) })
		b.ReportMetric(base/1e3, "encoder-us")
		b.ReportMetric(cold/1e3, "cold-us")
		b.ReportMetric(warm/1e3, "warm-us")
		b.ReportMetric(base/cold, "x-cold")
		b.ReportMetric(base/warm, "x-warm")
	}
}

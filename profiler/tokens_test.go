package profiler

import "testing"

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

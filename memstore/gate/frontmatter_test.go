package gate

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func ptr(f float64) *float64 { return &f }

func TestParseFrontMatter(t *testing.T) {
	day := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		in       string
		want     FrontMatter
		body     string
		bodyLine int
	}{
		{"none", "# Title\nbody\n", FrontMatter{}, "# Title\nbody\n", 1},
		{"empty file", "", FrontMatter{}, "", 1},
		{"horizontal rule later", "text\n---\nmore\n", FrontMatter{}, "text\n---\nmore\n", 1},
		{"empty header", "---\n---\nbody\n", FrontMatter{Present: true}, "body\n", 3},
		{"comment only", "---\n# nothing\n---\nbody\n", FrontMatter{Present: true}, "body\n", 4},
		{"all fields", "---\ntype: task_rule\nsource: user_confirmed\nconfidence: 0.9\nvalid_from: 2026-01-02\ninvalid_at: 2026-02-01T10:00:00Z\nexpires_at: \"2026-12-31T23:59:59+02:00\"\nsuperseded_by: task.md#rule-3\n---\n- rule\n",
			FrontMatter{Present: true, Type: "task_rule", Source: "user_confirmed", Confidence: ptr(0.9), ValidFrom: day,
				InvalidAt: time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC), ExpiresAt: time.Date(2026, 12, 31, 21, 59, 59, 0, time.UTC), SupersededBy: "task.md#rule-3"},
			"- rule\n", 10},
		{"quoted date", "---\nvalid_from: \"2026-01-02\"\n---\n", FrontMatter{Present: true, ValidFrom: day}, "", 4},
		{"yaml timestamp with space", "---\nvalid_from: 2026-01-02 10:00:00\n---\n", FrontMatter{Present: true, ValidFrom: day.Add(10 * time.Hour)}, "", 4},
		{"confidence int", "---\nconfidence: 1\n---\n", FrontMatter{Present: true, Confidence: ptr(1)}, "", 4},
		{"confidence zero", "---\nconfidence: 0\n---\n", FrontMatter{Present: true, Confidence: ptr(0)}, "", 4},
		{"nulls", "---\nsource:\nconfidence: ~\ninvalid_at: null\n---\n", FrontMatter{Present: true}, "", 6},
		{"extra kept", "---\ntype: schema\nrows: 1200\nfingerprint: abc\ncolumns: [a, b]\n---\n", FrontMatter{Present: true, Type: "schema",
			Extra: map[string]any{"rows": 1200, "fingerprint": "abc", "columns": []any{"a", "b"}}}, "", 7},
		{"crlf", "---\r\ntype: note\r\n---\r\nbody\r\n", FrontMatter{Present: true, Type: "note"}, "body\r\n", 4},
		{"fence trailing space", "--- \ntype: note\n---  \nbody", FrontMatter{Present: true, Type: "note"}, "body", 4},
		{"closing at eof", "---\ntype: note\n---", FrontMatter{Present: true, Type: "note"}, "", 4},
		{"equal validity", "---\nvalid_from: 2026-01-02\ninvalid_at: 2026-01-02\n---\n", FrontMatter{Present: true, ValidFrom: day, InvalidAt: day}, "", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm, body, line, err := ParseFrontMatter([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseFrontMatter: %v", err)
			}
			if diff := cmp.Diff(tt.want, fm); diff != "" {
				t.Errorf("front matter (-want +got):\n%s", diff)
			}
			if got, want := string(body), tt.body; got != want {
				t.Errorf("body = %q, want %q", got, want)
			}
			if got, want := line, tt.bodyLine; got != want {
				t.Errorf("bodyLine = %d, want %d", got, want)
			}
		})
	}
}

func TestParseFrontMatter_Errors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		line int
	}{
		{"unterminated", "---\ntype: note\nbody\n", 1},
		{"unterminated bare", "---", 1},
		{"bad yaml", "---\ntype: note\nsource: a: b\n---\n", 3},
		{"tab indent", "---\ntags:\n\t- a\n---\n", 3},
		{"not a mapping", "---\n- a\n- b\n---\n", 2},
		{"scalar header", "---\njust text\n---\n", 2},
		{"bad source", "---\ntype: note\nsource: guessed\n---\n", 3},
		{"source list", "---\nsource: [inferred]\n---\n", 2},
		{"confidence high", "---\nconfidence: 1.5\n---\n", 2},
		{"confidence negative", "---\nconfidence: -0.1\n---\n", 2},
		{"confidence string", "---\nconfidence: \"0.5\"\n---\n", 2},
		{"confidence word", "---\nconfidence: high\n---\n", 2},
		{"confidence nan", "---\nconfidence: .nan\n---\n", 2},
		{"date words", "---\nvalid_from: yesterday\n---\n", 2},
		{"date us format", "---\nvalid_from: 01/02/2026\n---\n", 2},
		{"date number", "---\nexpires_at: 20260102\n---\n", 2},
		{"date no zone string", "---\ninvalid_at: \"2026-01-02T10:00:00\"\n---\n", 2},
		{"invalid before valid", "---\nvalid_from: 2026-02-01\ninvalid_at: 2026-01-01\n---\n", 3},
		{"duplicate key", "---\ntype: a\ntype: b\n---\n", 3},
		{"merge key", "---\nbase: &b {x: 1}\n<<: *b\n---\n", 3},
		{"type mapping", "---\ntype: {a: 1}\n---\n", 2},
		{"complex key", "---\n? [a, b]\n: c\n---\n", 2},
	}
	var golden strings.Builder
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, body, line, err := ParseFrontMatter([]byte(tt.in))
			var rej *Rejection
			if !errors.As(err, &rej) {
				t.Fatalf("ParseFrontMatter = %v, want a *Rejection", err)
			}
			if got, want := rej.Rule, RuleFrontMatter; got != want {
				t.Errorf("Rule = %q, want %q", got, want)
			}
			if got, want := rej.Line, tt.line; got != want {
				t.Errorf("Line = %d, want %d (%v)", got, want, err)
			}
			if got, want := string(body), tt.in; got != want || line != 1 {
				t.Errorf("on error body, bodyLine = %q, %d; want the whole content and 1", got, line)
			}
			if !strings.Contains(rej.Msg, fmt.Sprint(tt.line)) {
				t.Errorf("Msg %q does not name line %d", rej.Msg, tt.line)
			}
			fmt.Fprintf(&golden, "%s\t%s\n", tt.name, rej.Error())
		})
	}
	checkGolden(t, "frontmatter", golden.String())
}

package gate

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestContent(t *testing.T) {
	small := Limits{MaxFileBytes: 10}
	tests := []struct {
		name string
		rel  string
		in   string
		lim  Limits
		rule string // "" when accepted
		line int
	}{
		{"plain note", "notes/a.md", "# Rules\n\n- EMEA totals exclude VAT.\n", DefaultLimits(), "", 0},
		{"empty", "notes/a.md", "", DefaultLimits(), "", 0},
		{"at limit", "notes/a.txt", strings.Repeat("a", 10), small, "", 0},
		{"over limit", "notes/a.txt", strings.Repeat("a", 11), small, RuleSize, 0},
		{"over default", "notes/a.txt", strings.Repeat("a", 256<<10+1), Limits{}, RuleSize, 0},
		{"size before secret", "notes/a.txt", "password: hunter2Q9\n", small, RuleSize, 0},
		{"invalid utf8", "notes/a.md", "ok\nbad \xff byte\n", DefaultLimits(), RuleEncoding, 2},
		{"nul", "notes/a.txt", "a\nb\nc\x00\n", DefaultLimits(), RuleEncoding, 3},
		{"encoding before secret", "notes/a.txt", "password: hunter2Q9\n\xff", DefaultLimits(), RuleEncoding, 2},
		{"secret before transcript", "notes/a.md", "User: a\nAssistant: b\nUser: c password=hunter2Q9\nAssistant: d\n", DefaultLimits(), RuleSecret, 3},
		{"transcript before front matter", "notes/a.md", "---\nsource: bogus\n---\nUser: a\nAssistant: b\nUser: c\nAssistant: d\n", DefaultLimits(), RuleTranscript, 4},
		{"front matter", "notes/a.md", "---\nsource: bogus\n---\nbody\n", DefaultLimits(), RuleFrontMatter, 2},
		{"front matter upper ext", "notes/a.MD", "---\nconfidence: 2\n---\n", DefaultLimits(), RuleFrontMatter, 2},
		{"front matter only for md", "notes/a.txt", "---\nsource: bogus\n", DefaultLimits(), "", 0},
		{"yaml ok", "tools/db.yaml", "kind: postgres\nparams:\n  - name: region\n", DefaultLimits(), "", 0},
		{"yaml multi doc", "tools/db.yml", "a: 1\n---\nb: 2\n", DefaultLimits(), "", 0},
		{"yaml bad", "tools/db.yaml", "kind: postgres\n  endpoint: x: y\n", DefaultLimits(), RuleSyntax, 2},
		{"yaml empty", "tools/db.yaml", "", DefaultLimits(), "", 0},
		{"json ok", "schemas/x.json", "{\"a\": [1, 2]}\n", DefaultLimits(), "", 0},
		{"json bad", "schemas/x.json", "{\n  \"a\": 1,\n  \"b\": hunter\n}\n", DefaultLimits(), RuleSyntax, 3},
		{"json empty", "schemas/x.json", "", DefaultLimits(), RuleSyntax, 1},
		{"csv not parsed", "artifacts/r/data/x.csv", "a,b\n\"unterminated\n", DefaultLimits(), "", 0},
		{"secret in csv", "artifacts/r/data/x.csv", "a,b\n1,AKIA" + "EXAMPLEFAKEKEY01\n", DefaultLimits(), RuleSecret, 2},
		{"secret in js", "artifacts/r/app.js", "const token = \"c0ffee15bad00d1234abcd\";\n", DefaultLimits(), RuleSecret, 1},
	}
	var golden strings.Builder
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Content(tt.rel, []byte(tt.in), tt.lim)
			if tt.rule == "" {
				if err != nil {
					t.Fatalf("Content = %v, want nil", err)
				}
				return
			}
			var rej *Rejection
			if !errors.As(err, &rej) {
				t.Fatalf("Content = %v, want a *Rejection", err)
			}
			if got, want := rej.Rule, tt.rule; got != want {
				t.Errorf("Rule = %q, want %q (%v)", got, want, err)
			}
			if got, want := rej.Line, tt.line; got != want {
				t.Errorf("Line = %d, want %d (%v)", got, want, err)
			}
			if strings.Contains(err.Error(), "hunter") {
				t.Errorf("message repeats content: %q", err)
			}
			assertSafeMessage(t, err.Error())
			fmt.Fprintf(&golden, "%s\t%s\n", tt.name, err)
		})
	}
	checkGolden(t, "content", golden.String())
}

// benchContent is about 256 KiB of a realistic memory file: prose rules,
// YAML-ish settings with references, URLs, hashes and a few look-alikes, so
// every prefilter fires and the detectors run.
func benchContent() []byte {
	var b strings.Builder
	b.WriteString("---\ntype: task_rule\nsource: user_confirmed\nconfidence: 0.9\nvalid_from: 2026-01-02\n---\n")
	for i := 0; b.Len() < 256<<10-400; i++ {
		fmt.Fprintf(&b, "- Rule %d: the api_key is read from the environment; token budget is %d.\n", i, i*7)
		fmt.Fprintf(&b, "  password: ${DB_PASSWORD_%d} # see https://example.com/docs?page=%d\n", i, i)
		fmt.Fprintf(&b, "  commit 3f786850e387550fdab836ed7e6dc881de23001b at 2026-01-02 for user %d\n", i)
		b.WriteString("  User: asks for the monthly EMEA totals excluding VAT, rounded to thousands.\n")
	}
	return []byte(b.String())[:256<<10-400]
}

func BenchmarkContent(b *testing.B) {
	content := benchContent()
	lim := DefaultLimits()
	if err := Content("notes/rules.md", content, lim); err != nil {
		b.Fatalf("benchmark content is rejected: %v", err)
	}
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Content("notes/rules.md", content, lim); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPath(b *testing.B) {
	for b.Loop() {
		if _, err := Path("/memories/workspaces/sales/schemas/orders.md", DefaultLimits()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkContent_Transcript measures the refusal of a transcript of
// growing size: its MB/s stays level when the work grows with the size
// alone (a transcript of 250 KiB took over two minutes while every
// line's check re-read the whole content).
func BenchmarkContent_Transcript(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10, 256 << 10} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			content := []byte(strings.Repeat("User: can you check the totals?\nAssistant: I checked them, thanks.\n", size/67))
			lim := DefaultLimits()
			lim.MaxFileBytes = 1 << 20
			if err := Content("notes/chat.md", content, lim); err == nil {
				b.Fatal("the transcript was accepted")
			}
			b.SetBytes(int64(len(content)))
			for b.Loop() {
				_ = Content("notes/chat.md", content, lim)
			}
		})
	}
}

// TestYAMLLine: the YAML parser also breaks lines at a lone \r; a
// rejection counts lines at \n, and never past the content's last line.
func TestYAMLLine(t *testing.T) {
	for _, tc := range []struct {
		content string
		n, want int
	}{
		{"a\nb\nc", 3, 3},
		{"a\r\nb\r\nc", 3, 3},
		{"a\rb\rc", 3, 1},
		{"a\rb\nc\rd", 4, 2},
		{"\"\r0", 2, 1},
		{"a\nb", 9, 2},
		{"a", 0, 0},
	} {
		if got := yamlLine([]byte(tc.content), tc.n); got != tc.want {
			t.Errorf("yamlLine(%q, %d) = %d, want %d", tc.content, tc.n, got, tc.want)
		}
	}
}

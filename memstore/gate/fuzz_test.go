package gate

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gopkg.in/yaml.v3"
)

func FuzzPath(f *testing.F) {
	for _, s := range []string{
		"/memories", "/memories/", "/memories/a/b.md", "/memories/../etc", "/memories/%2e%2e/x",
		"/memories/a\\b", "/memories/\uff0e\uff0e/x", "/memories/.git/config", "/memories/a//b",
		"/memories/a\u202eb.md", "/memories/\xff", "/memoriesX", "/memories/notes/café.md",
		"/memories/workspaces/\uff53\uff41\uff4c\uff45\uff53/task.md", "/memories/workspaces/\u0455\u0430l\u0435\u0455/x.md",
		"/memories/\u03a0\u03a9\u039b\u0389\u03a3/\u0451\u0301.md",
	} {
		f.Add(s)
	}
	lim := DefaultLimits()
	f.Fuzz(func(t *testing.T, in string) {
		rel, err := Path(in, lim)
		if err != nil {
			if _, ok := err.(*Rejection); !ok {
				t.Fatalf("Path(%q) returned %T, want *Rejection", in, err)
			}
			return
		}
		again, err := Path(Root+"/"+rel, lim)
		if err != nil || again != rel {
			t.Fatalf("Path(%q) = %q, but Path(/memories/%s) = %q, %v", in, rel, rel, again, err)
		}
		if strings.Contains(rel, "..") || strings.Contains(rel, `\`) || strings.HasPrefix(rel, "/") || strings.HasSuffix(rel, "/") {
			t.Fatalf("Path(%q) = %q, not canonical", in, rel)
		}
		if !utf8.ValidString(rel) {
			t.Fatalf("Path(%q) = %q, invalid UTF-8", in, rel)
		}
		for _, r := range rel {
			if r < 0x20 || r == 0x7f || badRune(r) != "" {
				t.Fatalf("Path(%q) = %q, holds %U", in, rel, r)
			}
		}
		if rel == "" {
			return
		}
		elems := strings.Split(rel, "/")
		if len(elems) > lim.MaxDepth {
			t.Fatalf("Path(%q) = %q, deeper than %d", in, rel, lim.MaxDepth)
		}
		for _, e := range elems {
			if e == "" || strings.HasPrefix(e, ".") || len(e) > lim.MaxNameBytes {
				t.Fatalf("Path(%q) = %q, bad element %q", in, rel, e)
			}
		}
		// The store keys whole paths: a key must be the keys of the
		// elements joined by slashes.
		for name, key := range map[string]func(string) string{"FoldCase": FoldCase, "Skeleton": Skeleton} {
			keys := make([]string, len(elems))
			for i, e := range elems {
				keys[i] = key(e)
			}
			if got, want := key(rel), strings.Join(keys, "/"); got != want {
				t.Fatalf("%s(%q) = %q, want the elements' keys %q", name, rel, got, want)
			}
		}
	})
}

func FuzzFrontMatter(f *testing.F) {
	for _, s := range []string{
		"", "# x\n", "---\n---\n", "---\ntype: task_rule\nsource: user_confirmed\nconfidence: 0.9\nvalid_from: 2026-01-02\n---\nbody\n",
		"---\ninvalid_at: 2026-01-01T00:00:00Z\nvalid_from: 2025-01-01\nrows: 10\ntags: [a, b]\n---\n",
		"---\nsource: x\n---\n", "---\nconfidence: 2\n", "---\na: &x [1]\nb: *x\n---\n", "---\r\ntype: a\r\n---\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		fm, body, bodyLine, err := ParseFrontMatter(content)
		if err != nil {
			if _, ok := err.(*Rejection); !ok {
				t.Fatalf("error is %T, want *Rejection", err)
			}
			return
		}
		if bodyLine < 1 {
			t.Fatalf("bodyLine = %d", bodyLine)
		}
		if !fm.Present {
			if string(body) != string(content) || bodyLine != 1 {
				t.Fatalf("without a header, body and bodyLine must be the content and 1")
			}
			return
		}
		if !strings.HasSuffix(string(content), string(body)) {
			t.Fatalf("body is not a suffix of the content")
		}
		if c := fm.Confidence; c != nil && (*c < 0 || *c > 1 || math.IsNaN(*c)) {
			t.Fatalf("confidence %v accepted", *c)
		}
		if !fm.InvalidAt.IsZero() && !fm.ValidFrom.IsZero() && fm.InvalidAt.Before(fm.ValidFrom) {
			t.Fatalf("invalid_at before valid_from accepted")
		}
		header, err := renderFrontMatter(fm)
		if err != nil {
			t.Skipf("cannot render: %v", err)
		}
		fm2, body2, _, err := ParseFrontMatter([]byte(header + "body\n"))
		if err != nil {
			t.Fatalf("re-parsing the rendered header %q: %v", header, err)
		}
		if string(body2) != "body\n" {
			t.Fatalf("re-parsed body = %q", body2)
		}
		if diff := cmp.Diff(normalizeFM(fm), normalizeFM(fm2), cmpopts.EquateNaNs()); diff != "" {
			t.Fatalf("front matter does not round-trip through %q (-first +second):\n%s", header, diff)
		}
	})
}

// renderFrontMatter writes fm back as a header.
func renderFrontMatter(fm FrontMatter) (string, error) {
	m := map[string]any{}
	for k, v := range fm.Extra {
		m[k] = v
	}
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set("type", fm.Type)
	set("source", fm.Source)
	set("superseded_by", fm.SupersededBy)
	if fm.Confidence != nil {
		m["confidence"] = *fm.Confidence
	}
	for k, t := range map[string]time.Time{"valid_from": fm.ValidFrom, "invalid_at": fm.InvalidAt, "expires_at": fm.ExpiresAt} {
		if !t.IsZero() {
			m[k] = t.Format(time.RFC3339Nano)
		}
	}
	var b strings.Builder
	b.WriteString("---\n")
	if len(m) > 0 {
		out, err := yaml.Marshal(m)
		if err != nil {
			return "", err
		}
		b.Write(out)
	}
	b.WriteString("---\n")
	return b.String(), nil
}

// normalizeFM maps values yaml.v3 does not round-trip exactly to comparable
// forms: a tagged !!timestamp decodes to time.Time in Extra but is written
// back untagged, and float64(8) is written as 8, which decodes as int.
func normalizeFM(fm FrontMatter) FrontMatter {
	if fm.Extra != nil {
		fm.Extra = normalizeValue(fm.Extra).(map[string]any)
	}
	return fm
}

func normalizeValue(v any) any {
	switch v := v.(type) {
	case int:
		return float64(v)
	case int64:
		return float64(v)
	case uint64:
		return float64(v)
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = normalizeValue(x)
		}
		return out
	case map[any]any:
		out := make(map[any]any, len(v))
		for k, x := range v {
			out[normalizeValue(k)] = normalizeValue(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalizeValue(x)
		}
		return out
	}
	return v
}

func FuzzContent(f *testing.F) {
	for _, s := range []string{
		"# Rules\n- a\n", "password: hunter2Q9x\n", "User: a\nAssistant: b\nUser: c\nAssistant: d\n",
		"---\nsource: bogus\n---\n", "{\"a\": 1}", "a: [", "\xff", "AKIA" + "EXAMPLEFAKEKEY01",
		"user: run the export\nbot: done\n", "Us\u0435r: a\n\uff21\uff29: b\n", "Log in with admin/Fake2Synth!\n",
		"if (strcmp(password, \"Fake2Synth\") == 0)\n", "1,a b, c\n2,d\n", "- name: a\n  on: true\n",
	} {
		f.Add("notes/a.md", []byte(s))
		f.Add("tools/a.yaml", []byte(s))
	}
	rules := map[string]bool{RuleSize: true, RuleEncoding: true, RuleSecret: true, RuleTranscript: true, RuleRawData: true, RuleFrontMatter: true, RuleSyntax: true}
	f.Fuzz(func(t *testing.T, rel string, content []byte) {
		err := Content(rel, content, DefaultLimits())
		if err == nil {
			return
		}
		r, ok := err.(*Rejection)
		if !ok {
			t.Fatalf("Content returned %T, want *Rejection", err)
		}
		if !rules[r.Rule] {
			t.Fatalf("unexpected rule %q", r.Rule)
		}
		if r.Line < 0 || r.Line > strings.Count(string(content), "\n")+1 {
			t.Fatalf("line %d out of range", r.Line)
		}
		msg := r.Error()
		if !utf8.ValidString(msg) {
			t.Fatalf("message is not valid UTF-8: %q", msg)
		}
		for _, c := range msg {
			if c < 0x20 || c == 0x7f {
				t.Fatalf("message holds a control character: %q", msg)
			}
		}
	})
}

// FuzzNormalizedViews checks that the normaliser never panics, is
// deterministic, and maps every line of a view to a line of its input.
func FuzzNormalizedViews(f *testing.F) {
	for _, s := range []string{
		"token: ghp_abc\n  def\n", "key: >-\n  abc\n  def\n", "a\\\nb\n", "\"ab\" + \"cd\"",
		"\u200bgh\u00adp_x", "ｇｈｐ＿", "%2570%41", "\\u0067hp", "&#103;&amp;", "Z2hwX2FiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6",
		"0x6768705f616263646566676869", "", "\n\n", "=\n==\n", "key: |\n\n  x\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, b := normalizedViews(s), normalizedViews(s)
		if len(a) != len(b) {
			t.Fatalf("views differ between runs: %d and %d", len(a), len(b))
		}
		lines := strings.Count(s, "\n") + 1
		for i := range a {
			if a[i].text != b[i].text || len(a[i].origin) != len(b[i].origin) {
				t.Fatalf("view %d differs between runs", i)
			}
			for j, o := range a[i].origin {
				if o < 1 || o > lines || o != b[i].origin[j] {
					t.Fatalf("view %d line %d maps to line %d of %d", i, j+1, o, lines)
				}
			}
		}
	})
}

// FuzzFindTranscript checks that the transcript detectors never panic,
// are deterministic and name a line of the content.
func FuzzFindTranscript(f *testing.F) {
	for _, s := range []string{
		"User: a\nAssistant: b\nUser: c\nAssistant: d\n", `[{"role":"user"},{"role":"assistant"},{"role":"user"}]`,
		"<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n", "$ ls\na\nb\n$ pwd\n/\n", "● Read(x)\n  ⎿  ok\n● done\n",
		"[10:00] <a> hi\n[10:01] <b> yo\n[10:02] <a> ok\n", "q: can you help me?\na: sure, I can\nq: thanks\na: you are welcome\n",
		"Traceback (most recent call last):\n  File \"a\", line 1\n  File \"b\", line 2\n  File \"c\", line 3\n",
		"role,content\nuser,a\nassistant,b\nuser,c\n", "<p><b>User:</b> a</p>", "",
		"user: run the export\nbot: done\n", "> 🧑 export it\n> 🤖 done\n", "Us\u0435r: hi\n\u0391\u0399: done\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		lower := asciiLower(content)
		a, b := findTranscript(content, lower), findTranscript(content, lower)
		if (a == nil) != (b == nil) || a != nil && *a != *b {
			t.Fatalf("findTranscript differs between runs: %v and %v", a, b)
		}
		if a != nil && (a.Line < 0 || a.Line > bytes.Count(content, []byte("\n"))+1) {
			t.Fatalf("line %d out of range", a.Line)
		}
		if v := labelView(content); v != nil && utf8.Valid(content) && bytes.Count(v, []byte("\n")) != bytes.Count(content, []byte("\n")) {
			t.Fatalf("labelView changes the number of lines")
		}
	})
}

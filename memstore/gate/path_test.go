package gate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPath(t *testing.T) {
	lim := DefaultLimits()
	long := strings.Repeat("a", 129)
	deep := "/memories/" + strings.Repeat("d/", 8) + "f.md"
	tests := []struct {
		name    string
		in      string
		want    string // accepted: the rel path
		wantErr string // rejected: the rule
	}{
		// Accepted.
		{"root", "/memories", "", ""},
		{"root slash", "/memories/", "", ""},
		{"file", "/memories/a/b.md", "a/b.md", ""},
		{"task", "/memories/workspaces/sales/task.md", "workspaces/sales/task.md", ""},
		{"dir trailing slash", "/memories/notes/", "notes", ""},
		{"dots inside name", "/memories/notes/v1.2.3.md", "notes/v1.2.3.md", ""},
		{"space inside name", "/memories/notes/my notes.md", "notes/my notes.md", ""},
		{"unicode letters", "/memories/notes/café-日本語.md", "notes/café-日本語.md", ""},
		{"percent without hex", "/memories/notes/100%-done.md", "notes/100%-done.md", ""},
		{"git inside name", "/memories/notes/git.md", "notes/git.md", ""},
		{"depth 8", "/memories/" + strings.Repeat("d/", 7) + "f.md", strings.Repeat("d/", 7) + "f.md", ""},
		{"name 128 bytes", "/memories/" + strings.Repeat("a", 125) + ".md", strings.Repeat("a", 125) + ".md", ""},
		{"katakana no", "/memories/notes/ノート.md", "notes/ノート.md", ""},
		// Look-alike letters are the store's to refuse next to their twin.
		{"fullwidth letters", "/memories/workspaces/\uff53\uff41\uff4c\uff45\uff53/task.md", "workspaces/\uff53\uff41\uff4c\uff45\uff53/task.md", ""},
		{"fullwidth digits", "/memories/notes/\uff12\uff10\uff12\uff14\u5e74.md", "notes/\uff12\uff10\uff12\uff14\u5e74.md", ""},
		{"cyrillic look-alikes", "/memories/workspaces/\u0455\u0430l\u0435\u0455/task.md", "workspaces/\u0455\u0430l\u0435\u0455/task.md", ""},
		{"cyrillic", "/memories/workspaces/продажи/task.md", "workspaces/продажи/task.md", ""},
		{"greek", "/memories/workspaces/πωλήσεις/task.md", "workspaces/πωλήσεις/task.md", ""},

		// Outside /memories.
		{"empty", "", "", RulePath},
		{"relative", "memories/a.md", "", RulePath},
		{"prefix lookalike", "/memoriesX/a.md", "", RulePath},
		{"etc passwd", "/etc/passwd", "", RulePath},
		{"capital root", "/Memories/a.md", "", RulePath},
		{"leading double slash", "//memories/a.md", "", RulePath},

		// Traversal.
		{"dotdot", "/memories/../etc/passwd", "", RulePath},
		{"dotdot inside", "/memories/a/../../etc", "", RulePath},
		{"dotdot last", "/memories/a/..", "", RulePath},
		{"dot segment", "/memories/./a.md", "", RulePath},
		{"double dot inside name", "/memories/notes/a..b.md", "", RulePath},
		{"triple dot", "/memories/.../etc", "", RulePath},
		{"encoded dotdot", "/memories/%2e%2e/etc", "", RulePath},
		{"encoded mixed case", "/memories/%2E./etc", "", RulePath},
		{"double encoded", "/memories/%252e%252e/etc", "", RulePath},
		{"encoded slash", "/memories/..%2fetc", "", RulePath},
		{"backslash traversal", `/memories/..\..\etc`, "", RulePath},
		{"backslash", `/memories/a\b.md`, "", RulePath},
		{"fullwidth dots", "/memories/\uff0e\uff0e/etc", "", RulePath},
		{"one dot leader", "/memories/\u2024\u2024/etc", "", RulePath},
		{"two dot leader", "/memories/\u2025/etc", "", RulePath},
		{"small full stop", "/memories/\ufe52\ufe52/etc", "", RulePath},
		{"fullwidth slash", "/memories/a\uff0fb.md", "", RulePath},
		{"division slash", "/memories/..\u2215etc", "", RulePath},
		{"fraction slash", "/memories/a\u2044b.md", "", RulePath},
		{"big solidus", "/memories/a\u29f8b.md", "", RulePath},
		{"fullwidth backslash", "/memories/a\uff3cb.md", "", RulePath},
		{"ellipsis", "/memories/\u2026/etc", "", RulePath},
		{"ideographic full stop", "/memories/a\u3002md", "", RulePath},

		// Invisible and control characters.
		{"nul", "/memories/a\x00.md", "", RulePath},
		{"newline", "/memories/a\nb.md", "", RulePath},
		{"tab", "/memories/a\tb.md", "", RulePath},
		{"del", "/memories/a\x7fb.md", "", RulePath},
		{"c1 control", "/memories/a\u0085b.md", "", RulePath},
		{"bidi override", "/memories/notes/evil\u202egpj.md", "", RulePath},
		{"bidi isolate", "/memories/notes/a\u2066b.md", "", RulePath},
		{"zero width space", "/memories/.\u200bgit/config", "", RulePath},
		{"zero width joiner", "/memories/a\u200db.md", "", RulePath},
		{"bom", "/memories/\ufeffa.md", "", RulePath},
		{"nbsp", "/memories/a\u00a0b.md", "", RulePath},
		{"variation selector", "/memories/a\ufe0fb.md", "", RulePath},
		{"private use", "/memories/a\ue000b.md", "", RulePath},
		{"replacement char", "/memories/a\ufffdb.md", "", RulePath},
		{"invalid utf8", "/memories/a\xffb.md", "", RulePath},
		{"overlong utf8 slash", "/memories/a\xc0\xafb.md", "", RulePath},

		// Git and hidden.
		{"git dir", "/memories/.git", "", RulePath},
		{"git config", "/memories/.git/config", "", RulePath},
		{"GIT upper", "/memories/.GIT/config", "", RulePath},
		{"git nested", "/memories/a/.Git/hooks/pre-commit", "", RulePath},
		{"git 8.3", "/memories/GIT~1/config", "", RulePath},
		{"hidden file", "/memories/.env", "", RulePath},
		{"hidden dir", "/memories/notes/.cache/a.md", "", RulePath},

		// Form.
		{"double slash", "/memories/a//b.md", "", RulePath},
		{"double trailing slash", "/memories/a//", "", RulePath},
		{"trailing dot", "/memories/notes./a.md", "", RulePath},
		{"trailing space", "/memories/notes /a.md", "", RulePath},
		{"leading space", "/memories/ notes/a.md", "", RulePath},
		{"colon stream", "/memories/a.md:stream", "", RulePath},
		{"windows con", "/memories/CON.md", "", RulePath},
		{"windows com1", "/memories/notes/com1.txt", "", RulePath},
		{"not nfc", "/memories/cafe\u0301.md", "", RulePath},
		{"too deep", deep, "", RulePath},
		{"name too long", "/memories/" + long, "", RulePath},
		{"path too long", "/memories/" + strings.Repeat("a/", 1000), "", RulePath},
	}
	var golden strings.Builder
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Path(tt.in, lim)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Path(%q) = %v, want %q", tt.in, err, tt.want)
				}
				if got != tt.want {
					t.Errorf("Path(%q) = %q, want %q", tt.in, got, tt.want)
				}
				return
			}
			var rej *Rejection
			if !errors.As(err, &rej) {
				t.Fatalf("Path(%q) = %q, %v; want a *Rejection", tt.in, got, err)
			}
			if got, want := rej.Rule, tt.wantErr; got != want {
				t.Errorf("Path(%q) rule = %q, want %q", tt.in, got, want)
			}
			assertSafeMessage(t, rej.Error())
			fmt.Fprintf(&golden, "%s\t%s\n", tt.name, rej.Error())
		})
	}
	checkGolden(t, "path", golden.String())
}

// assertSafeMessage checks that a message shown to a model is printable
// ASCII or ordinary text: no control, format or invalid bytes.
func assertSafeMessage(t *testing.T, msg string) {
	t.Helper()
	for _, r := range msg {
		if r != '\n' && badRune(r) != "" {
			t.Errorf("message holds %U: %q", r, msg)
		}
	}
}

func TestPath_LimitsHonoured(t *testing.T) {
	lim := Limits{MaxDepth: 2, MaxNameBytes: 4}
	tests := []struct {
		in   string
		want bool
	}{
		{"/memories/a/b.md", true},
		{"/memories/a/b/c.md", false},
		{"/memories/abcd", true},
		{"/memories/abcde", false},
	}
	for _, tt := range tests {
		_, err := Path(tt.in, lim)
		if got := err == nil; got != tt.want {
			t.Errorf("Path(%q, %+v) accepted = %v, want %v (err %v)", tt.in, lim, got, tt.want, err)
		}
	}
	// The zero Limits means the defaults.
	if _, err := Path("/memories/"+strings.Repeat("d/", 7)+"f.md", Limits{}); err != nil {
		t.Errorf("Path with zero Limits: %v", err)
	}
}

func TestFilePath(t *testing.T) {
	tests := []struct {
		rel  string
		want bool
	}{
		{"task.md", true},
		{"notes/a.MD", true},
		{"tools/db.yaml", true},
		{"tools/db.yml", true},
		{"schemas/x.json", true},
		{"notes/a.txt", true},
		{"artifacts/r/data/sales.csv", true},
		{"artifacts/r/index.html", true},
		{"artifacts/r/app.js", true},
		{"artifacts/r/style.CSS", true},
		{"artifacts/r/logo.svg", true},
		{"", false},
		{"notes", false},
		{"notes/a.exe", false},
		{"notes/a.md.sh", false},
		{"notes/a.pem", false},
		{"notes/a.", false},
		{"notes/a.tar.gz", false},
		{"notes/a.md~", false},
	}
	var golden strings.Builder
	for _, tt := range tests {
		err := FilePath(tt.rel)
		if got := err == nil; got != tt.want {
			t.Errorf("FilePath(%q) = %v, want accepted %v", tt.rel, err, tt.want)
			continue
		}
		if err != nil {
			var rej *Rejection
			if !errors.As(err, &rej) || rej.Rule != RuleExtension {
				t.Errorf("FilePath(%q) = %#v, want Rule %q", tt.rel, err, RuleExtension)
				continue
			}
			if tt.rel != "" && !strings.Contains(rej.Hint, ".md, .yaml, .yml, .json, .txt, .csv") {
				t.Errorf("FilePath(%q) hint %q lacks the allowed list", tt.rel, rej.Hint)
			}
			fmt.Fprintf(&golden, "%q\t%s\n", tt.rel, rej.Error())
		}
	}
	checkGolden(t, "filepath", golden.String())
}

func TestNoSymlinks(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "notes", "deep"), 0o755))
	must(os.WriteFile(filepath.Join(root, "notes", "a.md"), []byte("x"), 0o644))
	must(os.Symlink(outside, filepath.Join(root, "escape")))
	must(os.Symlink(filepath.Join(root, "notes", "a.md"), filepath.Join(root, "notes", "link.md")))

	tests := []struct {
		rel     string
		wantErr bool
	}{
		{"", false},
		{"notes/a.md", false},
		{"notes/deep/new.md", false},
		{"missing/dir/x.md", false},
		{"notes/missing/x.md", false},
		{"escape", true},
		{"escape/x.md", true},
		{"escape/missing/x.md", true},
		{"notes/link.md", true},
	}
	var golden strings.Builder
	for _, tt := range tests {
		err := NoSymlinks(root, tt.rel)
		if got := err != nil; got != tt.wantErr {
			t.Errorf("NoSymlinks(root, %q) = %v, want error %v", tt.rel, err, tt.wantErr)
			continue
		}
		if err == nil {
			continue
		}
		var rej *Rejection
		if !errors.As(err, &rej) || rej.Rule != RulePath {
			t.Errorf("NoSymlinks(root, %q) = %#v, want Rule %q", tt.rel, err, RulePath)
			continue
		}
		if strings.Contains(err.Error(), root) || strings.Contains(err.Error(), outside) {
			t.Errorf("NoSymlinks message names a host path: %q", err)
		}
		fmt.Fprintf(&golden, "%q\t%s\n", tt.rel, err)
	}
	checkGolden(t, "nosymlinks", golden.String())
}

func TestLimits_Validate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Limits)
		want string
	}{
		{"defaults", func(*Limits) {}, ""},
		{"file", func(l *Limits) { l.MaxFileBytes = 0 }, "limits.max_file_bytes must be > 0"},
		{"workspace", func(l *Limits) { l.MaxWorkspaceBytes = -1 }, "limits.max_workspace_bytes must be > 0"},
		{"file over workspace", func(l *Limits) { l.MaxFileBytes = l.MaxWorkspaceBytes + 1 }, "limits.max_file_bytes (8388609) must be <= limits.max_workspace_bytes (8388608)"},
		{"depth", func(l *Limits) { l.MaxDepth = 0 }, "limits.max_depth must be > 0"},
		{"name", func(l *Limits) { l.MaxNameBytes = 0 }, "limits.max_name_bytes must be > 0"},
		{"name ceiling", func(l *Limits) { l.MaxNameBytes = 256 }, "limits.max_name_bytes must be <= 255"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := DefaultLimits()
			tt.mod(&l)
			got := ""
			if err := l.Validate(); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Validate() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDefaultLimits(t *testing.T) {
	if got, want := DefaultLimits(), (Limits{MaxFileBytes: 256 << 10, MaxWorkspaceBytes: 8 << 20, MaxDepth: 8, MaxNameBytes: 128}); got != want {
		t.Errorf("DefaultLimits() = %+v, want %+v", got, want)
	}
}

func TestRejection_Error(t *testing.T) {
	if got, want := (&Rejection{Msg: "a.", Hint: "b."}).Error(), "a. b."; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := (&Rejection{Msg: "a."}).Error(), "a."; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestText(t *testing.T) {
	tests := []struct {
		value string
		want  bool // refused
	}{
		{"claude-code", false},
		{"Alice Example", false},
		{"trusted_tool_result", false},
		{"AKIAIOSFODNN7EXAMPLE", false},
		{"bot ghp_" + fake(36), true},
		{"deploy AKIA" + "EXAMPLEFAKEKEY01", true},
		{"password=" + fake(16), true},
	}
	for _, tt := range tests {
		err := Text("author", tt.value)
		var r *Rejection
		if got := errors.As(err, &r); got != tt.want {
			t.Errorf("Text(%q) = %v, want refused %v", tt.value, err, tt.want)
			continue
		}
		if r == nil {
			continue
		}
		if r.Rule != RuleSecret || !strings.HasPrefix(r.Msg, "The author holds") || strings.Contains(r.Error(), tt.value) {
			t.Errorf("Text(%q) = %q (rule %s)", tt.value, r.Error(), r.Rule)
		}
	}
}

func TestPath_Secret(t *testing.T) {
	for _, p := range []string{
		"/memories/tokens/ghp_" + fake(36) + ".md",
		"/memories/aws/AKIA" + "EXAMPLEFAKEKEY01/notes.md",
	} {
		_, err := Path(p, DefaultLimits())
		var r *Rejection
		if !errors.As(err, &r) || r.Rule != RuleSecret {
			t.Errorf("Path(%q) = %v, want a secret rejection", p, err)
			continue
		}
		if strings.Contains(r.Error(), "AKIA") || strings.Contains(r.Error(), "ghp_") {
			t.Errorf("message repeats the path: %s", r.Error())
		}
	}
	for _, p := range []string{"/memories/notes/token-rotation.md", "/memories/aws/AKIAIOSFODNN7EXAMPLE.md"} {
		if _, err := Path(p, DefaultLimits()); err != nil {
			t.Errorf("Path(%q) = %v, want nil", p, err)
		}
	}
}

// TestFoldCase_Skeleton checks which pairs of path elements share a
// letter-case key and which a look-alike skeleton: the store refuses a new
// name that shares either with a sibling.
func TestFoldCase_Skeleton(t *testing.T) {
	tests := []struct {
		name       string
		a, b       string
		fold, skel bool // a and b share FoldCase, Skeleton
	}{
		{"equal", "sales", "sales", true, true},
		{"case only", "sales", "SaLeS", true, true},
		{"fullwidth", "sales", "\uff53\uff41\uff4c\uff45\uff53", true, true},
		{"fullwidth capitals", "sales", "\uff33\uff21\uff2c\uff25\uff33", true, true},
		{"mathematical bold", "sales", "\U0001d42c\U0001d41a\U0001d425\U0001d41e\U0001d42c", true, true},
		{"cyrillic", "sales", "\u0455\u0430l\u0435\u0455", false, true},           // ѕ а е ѕ
		{"cyrillic only", "sales", "\u0455\u0430\u04cf\u0435\u0455", false, true}, // with palochka
		{"cyrillic capitals", "SALES", "\u0405\u0410L\u0415\u0405", false, true},  // Ѕ А Е Ѕ
		{"cyrillic capitals, latin lower", "sales", "\u0405\u0410L\u0415\u0405", false, true},
		{"greek", "sales", "s\u03b1l\u03b5s", false, true},                    // α ε
		{"greek capitals", "notes", "\u039d\u039f\u03a4\u0395S", false, true}, // Ν Ο Τ Ε
		{"mixed", "sales", "S\u0430\uff4c\u03b5s", false, true},               // Cyrillic а, fullwidth l, Greek ε
		{"accented twin", "\u00eb", "\u0451", false, true},                    // Latin ë, Cyrillic ё
		{"latin letter in a cyrillic name", "продажи", "прoдажи", false, true},
		{"cyrillic case", "продажи", "ПРОДАЖИ", true, true},
		{"cyrillic case, no latin twin", "нота", "НОТА", true, false},
		{"greek final sigma", "πωλήσεις", "ΠΩΛΉΣΕΙΣ", true, false},
		{"full case folding", "straße", "STRASSE", true, true},
		{"distinct cyrillic", "продажи", "маркетинг", false, false},
		{"distinct cyrillic, one letter", "сок", "сор", false, false},
		{"distinct greek", "πωλήσεις", "λογιστική", false, false},
		{"cyrillic not a latin word", "продажи", "prodazhi", false, false},
		{"accent", "sales", "s\u00e1les", false, false},
		{"capital nu is not v", "van", "\u039dan", false, false},
		{"distinct latin", "sales", "sale", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FoldCase(tt.a) == FoldCase(tt.b); got != tt.fold {
				t.Errorf("FoldCase(%q) = %q, FoldCase(%q) = %q; equal %v, want %v", tt.a, FoldCase(tt.a), tt.b, FoldCase(tt.b), got, tt.fold)
			}
			if got := Skeleton(tt.a) == Skeleton(tt.b); got != tt.skel {
				t.Errorf("Skeleton(%q) = %q, Skeleton(%q) = %q; equal %v, want %v", tt.a, Skeleton(tt.a), tt.b, Skeleton(tt.b), got, tt.skel)
			}
		})
	}
}

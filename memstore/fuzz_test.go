package memstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/selmem/selmem/memstore"
)

// FuzzStore_StrReplaceInsert checks the edit commands against a plain-string
// model: a successful edit changes the file exactly as the model says, a
// failed one changes nothing.
func FuzzStore_StrReplaceInsert(f *testing.F) {
	f.Add("a\nb\nc\n", "b", "B", 1, "x")
	f.Add("a\na\n", "a", "", 0, "")
	f.Add("", "z", "y", 0, "line\n\nmore")
	f.Add("no newline", "newline", "\n", 1, "\r\n")
	s, err := memstore.Open(context.Background(), f.TempDir(), nil)
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	p := "/memories/fuzz.md"
	f.Fuzz(func(t *testing.T, content, old, new string, line int, text string) {
		s.Delete(ctx, p, nil)
		if _, err := s.Create(ctx, p, content, nil); err != nil {
			return // refused by the gate; not what this target explores
		}
		_, err := s.StrReplace(ctx, p, old, new, nil)
		got, _, _ := s.Read(ctx, p)
		switch n := strings.Count(content, old); {
		case err == nil:
			if old == "" || n != 1 || string(got) != strings.Replace(content, old, new, 1) {
				t.Fatalf("StrReplace(%q, %q) on %q gave %q", old, new, content, got)
			}
		case errors.Is(err, memstore.ErrRejected):
		default:
			if string(got) != content || (n == 1 && old != "") {
				t.Fatalf("failed StrReplace (%v) changed %q to %q", err, content, got)
			}
		}
		before := string(got)
		lines := 0
		if before != "" {
			lines = len(strings.Split(strings.TrimSuffix(before, "\n"), "\n"))
		}
		_, err = s.Insert(ctx, p, line, text, nil)
		got, _, _ = s.Read(ctx, p)
		switch {
		case err == nil:
			if line < 0 || line > lines || !strings.HasSuffix(string(got), "\n") || !strings.Contains(string(got), strings.TrimSuffix(text, "\n")) {
				t.Fatalf("Insert(%d, %q) into %q gave %q", line, text, before, got)
			}
		case errors.Is(err, memstore.ErrRejected):
		default:
			if string(got) != before || (line >= 0 && line <= lines) {
				t.Fatalf("failed Insert(%d) (%v) changed %q to %q", line, err, before, got)
			}
		}
	})
}

package lemma

import (
	"regexp"
	"strings"
	"testing"
)

func TestBase(t *testing.T) {
	tests := []struct {
		word, want string
		ok         bool
	}{
		{"ran", "run", true},
		{"bought", "buy", true},
		{"children", "child", true},
		{"made", "make", true}, // an adjective only: a participle
		{"run", "", false},
		{"found", "", false},  // a verb of its own
		{"left", "", false},   // a noun and an adjective
		{"lives", "", false},  // stems to "live", a verb
		{"walked", "", false}, // regular: the stemmer's job
		{"Ran", "", false},    // lower-case only
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := Base(tt.word)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Base(%q) = %q, %v; want %q, %v", tt.word, got, ok, tt.want, tt.ok)
		}
	}
}

// TestTable checks the embedded table's form: sorted lines of two plain
// words, a form never its own base and never another form's base, so
// that one lookup gives the base.
func TestTable(t *testing.T) {
	plain := regexp.MustCompile(`^[a-z][a-z]+\t[a-z][a-z]+\n$`)
	var prev string
	n := 0
	for line := range strings.Lines(table) {
		if !plain.MatchString(line) {
			t.Fatalf("line %q is not form<TAB>base", line)
		}
		form, base, _ := strings.Cut(strings.TrimSpace(line), "\t")
		if form <= prev {
			t.Errorf("form %q after %q: the table is not sorted", form, prev)
		}
		if form == base {
			t.Errorf("form %q is its own base", form)
		}
		if b, ok := Base(base); ok {
			t.Errorf("base %q of %q is itself a form of %q", base, form, b)
		}
		prev = form
		n++
	}
	if n < 1000 {
		t.Errorf("%d forms, want the table whole", n)
	}
}

package memstore_test

import (
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/selmem/selmem/memstore"
)

func TestTerms(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"When did Caroline go to the support group?", []string{"carolin", "go", "support", "group"}},
		{"Retention policies: retained RECORDS", []string{"retent", "polici", "retain", "record"}},
		{"Café crème, naïve", []string{"cafe", "creme", "naiv"}},
		{"ISO 8601 dates, v2 api", []string{"iso", "8601", "date", "v2", "api"}},
		{"the and of", nil},
		{"", nil},
	}
	for _, tt := range tests {
		var got []string
		memstore.Terms(tt.text, func(term string) { got = append(got, term) })
		if !slices.Equal(got, tt.want) {
			t.Errorf("Terms(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestEditVariants(t *testing.T) {
	vs := memstore.EditVariants("polcy")
	for _, want := range []string{"policy", "plcy", "pocly", "polcey", "polcyx"} {
		if !slices.Contains(vs, want) {
			t.Errorf("EditVariants(polcy) lacks %q", want)
		}
	}
	for _, v := range vs {
		if v == "polcy" || v[0] != 'p' {
			t.Errorf("EditVariants(polcy) holds %q: the word itself, or another first letter", v)
		}
	}
	if got := memstore.EditVariants("café"); slices.ContainsFunc(got, func(v string) bool { return !utf8.ValidString(v) }) {
		t.Errorf("EditVariants(café) holds invalid UTF-8")
	}
}

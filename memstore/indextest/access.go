package indextest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
)

// area builds a one-chunk file at path with text, its workspace, scope
// and context derived from the path as the store derives them.
func (s *suite) area(t *testing.T, path, text string) memstore.Chunk {
	t.Helper()
	c := s.chunk(t, path, 0, text)
	c.Workspace, c.Scope = "", memstore.ScopeOther
	switch a := access.Classify(path); a.Kind {
	case access.AreaWorkspace:
		c.Workspace, c.Scope = a.Workspace, memstore.ScopeWorkspace
	case access.AreaUser:
		c.Scope = memstore.ScopeUser
	case access.AreaOrg:
		c.Scope = memstore.ScopeOrg
	}
	c.Context = strings.TrimPrefix(path, access.Root+"/")
	s.embed(t, &c)
	return c
}

// Paths of the access tests: two workspaces vic may read, one he may not,
// his user directory and another user's, org and another path.
const (
	pSales   = "/memories/workspaces/sales/ledger.md"
	pHR      = "/memories/workspaces/hr/ledger.md"
	pFinance = "/memories/workspaces/finance/ledger.md"
	pVic     = "/memories/users/vic/ledger.md"
	pOtto    = "/memories/users/otto/ledger.md"
	pOrg     = "/memories/org/ledger.md"
	pOther   = "/memories/ledger.md"
	// pMislabelled lies in finance but claims to be in sales: the path,
	// not the chunk's Workspace field, decides who may read it.
	pMislabelled = "/memories/workspaces/finance/mislabelled.md"
)

// vic may read sales and hr, and his own directory.
var vic = access.Filter{Workspaces: []string{"hr", "sales"}, User: "vic"}

// testAccessFilter checks that a search returns only chunks the filter
// lets through, in every mode, with the query's own filters on top: the
// workspaces it names, the principal's own user directory (not another
// user's), org and other paths; the zero Filter only org and other paths.
func testAccessFilter(t *testing.T, s *suite) {
	for _, p := range []string{pSales, pHR, pFinance, pVic, pOtto, pOrg, pOther} {
		s.put(t, s.area(t, p, "The quarterly ledger is closed on the fifth working day."))
	}
	mis := s.area(t, pMislabelled, "The quarterly ledger is closed on the fifth working day.")
	mis.Workspace = "sales"
	s.put(t, mis)
	everything := []string{pOther, pOrg, pOtto, pVic, pFinance, pMislabelled, pHR, pSales}
	// Many workspaces nobody but the unrestricted principal reads, so that
	// a filter lets through a small share of the chunks, as in a large
	// organisation.
	for i := range 40 {
		p := fmt.Sprintf("/memories/workspaces/team%02d/ledger.md", i)
		s.put(t, s.area(t, p, "The quarterly ledger is closed on the fifth working day."))
		everything = append(everything, p)
	}
	tests := []struct {
		name      string
		filter    access.Filter
		workspace string
		want      []string
	}{
		{"all", access.Filter{All: true}, "", everything},
		{"viewer of two workspaces", vic, "", []string{pOther, pOrg, pVic, pHR, pSales}},
		{"no workspace", access.Filter{User: "otto"}, "", []string{pOther, pOrg, pOtto}},
		{"zero filter", access.Filter{}, "", []string{pOther, pOrg}},
		{"workspace asked for, readable", vic, "sales", []string{pSales}},
		{"workspace asked for, not readable", vic, "finance", nil},
	}
	for _, mode := range []struct {
		name       string
		text, vect bool
	}{{"hybrid", true, true}, {"text only", true, false}, {"vector only", false, true}} {
		for _, tt := range tests {
			t.Run(mode.name+"/"+tt.name, func(t *testing.T) {
				q := s.modeQuery(t, "quarterly ledger", mode.text, mode.vect)
				q.Limit = 100
				q.Filter, q.Workspace = tt.filter, tt.workspace
				want := slices.Sorted(slices.Values(tt.want))
				if diff := cmp.Diff(want, pathSet(s.search(t, q))); diff != "" {
					t.Errorf("paths (-want +got):\n%s", diff)
				}
				q.Text = "quartely ledgr" // typos stand in only for readable words
				if !mode.text {
					return
				}
				if diff := cmp.Diff(want, pathSet(s.search(t, q))); diff != "" {
					t.Errorf("with typos: paths (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// hiddenTexts are what the leakage test puts where vic may not look: words
// found nowhere else, a word one edit from a query's typo, and words vic
// can find in his own workspaces.
var hiddenTexts = []string{
	"Project zorblax: the acquisition of Quillfeather closes in March.",
	"Zorblax budget: retention bonuses for the Quillfeather team.",
	"The quarterly ledger of project zorblax stays sealed.",
}

// testAccessLeakage checks that what a principal cannot read leaves no
// trace in their results: a term found only in an unreadable workspace or
// another user's directory yields no hit, no snippet and the same number
// of hits as a term found nowhere, and every query returns exactly what it
// returned before the unreadable chunks existed (hits, ranks and scores:
// the fused score depends on ranks alone).
func testAccessLeakage(t *testing.T, s *suite) {
	s.putTexts(t, append([]string{retention}, distractors...)...)
	queries := []string{
		"zorblax",             // only in an unreadable workspace
		"quillfeather",        // only in another user's directory
		"zorblex",             // a typo of a word only unreadable chunks hold
		"flimwhistle",         // nowhere
		"zorblax acquisition", // unreadable and nowhere
		"retention",           // readable, and unreadable too
		"quarterly ledger",
	}
	type result struct {
		Keys          []string
		Ranks, Scores []string
	}
	run := func() map[string][]result {
		out := map[string][]result{}
		for _, text := range queries {
			for _, floor := range []bool{true, false} {
				q := s.hybrid(t, text)
				q.Filter = access.Filter{Workspaces: []string{ws}, User: "vic"}
				q.Limit = 100
				if !floor {
					q.MinSimilarity = -1 // every readable chunk is a vector hit
				}
				var r result
				for _, h := range s.search(t, q) {
					if !q.Filter.Allows(h.Path) {
						t.Errorf("%q: hit %s, which vic may not read", text, h.Path)
					}
					for _, w := range []string{"zorblax", "quillfeather"} {
						if strings.Contains(strings.ToLower(memstore.Snippet(h.Text, text, 240)), w) {
							t.Errorf("%q: snippet of %s shows %q", text, h.Path, w)
						}
					}
					r.Keys = append(r.Keys, fmt.Sprintf("%s#%d", h.Path, h.Seq))
					r.Ranks = append(r.Ranks, fmt.Sprintf("%d/%d", h.TextRank, h.VectorRank))
					r.Scores = append(r.Scores, fmt.Sprintf("%.12f", h.Score))
				}
				out[text] = append(out[text], r)
			}
		}
		return out
	}
	before := run()
	for i, text := range hiddenTexts {
		s.put(t, s.area(t, fmt.Sprintf("/memories/workspaces/secret/notes/%02d.md", i), text))
	}
	s.put(t, s.area(t, "/memories/users/otto/notes.md", "Quillfeather owes me lunch."))
	after := run()
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("results changed when unreadable chunks were added (-before +after):\n%s", diff)
	}
	for _, text := range []string{"zorblax", "quillfeather", "zorblex"} {
		for k, floor := range []string{"with the relevance floor", "without it"} {
			if got, want := len(after[text][k].Keys), len(after["flimwhistle"][k].Keys); got != want {
				t.Errorf("%q %s: %d hits, a word found nowhere %d", text, floor, got, want)
			}
		}
		if n := len(after[text][0].Keys); n != 0 {
			t.Errorf("%q: %d hits, want none", text, n)
		}
	}
	// The unrestricted principal finds the hidden chunks: the test hid
	// something.
	q := s.hybrid(t, "zorblax")
	q.Filter = access.Filter{All: true}
	if hits := s.search(t, q); len(hits) != 3 {
		t.Errorf("zorblax unfiltered: %d hits, want 3", len(hits))
	}
}

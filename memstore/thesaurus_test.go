package memstore_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/thesaurus"
)

// synonyms is a memstore.Thesaurus from a table that knows no word,
// recording the words it was asked to relate.
type synonyms struct {
	table map[string][]string
	asked []string
}

func (s *synonyms) Spellings(string) ([]string, bool) { return nil, false }

func (s *synonyms) Related(word string) []string {
	s.asked = append(s.asked, word)
	return s.table[word]
}

// TestStore_SearchThesaurus checks that the thesaurus's related words
// stand in for the query's words the memory does not hold, within what the
// principal may read, below the words it holds, which are never widened;
// and that a query only related words the searched memory lacks would
// match keeps only what its vector finds above the floor.
func TestStore_SearchThesaurus(t *testing.T) {
	vic := access.WithPrincipal(context.Background(), access.Principal{User: "vic", Kind: access.KindPerson})
	const (
		churn   = "/memories/workspaces/finance/churn.md"
		invoice = "/memories/workspaces/sales/invoices.md"
	)
	tests := []struct {
		name       string
		ctx        context.Context
		query      string
		table      map[string][]string // nil: no thesaurus
		first      string              // the first hit; "" for no hits at all, unless vectorOnly
		vectorOnly bool                // every hit found by its vector alone
		absent     string              // a path that must not be a hit
		wantAsked  []string            // words the thesaurus was asked about
	}{
		{name: "other words for the memory's", ctx: context.Background(), query: "when is a client gone",
			table: map[string][]string{"client": {"customer"}, "gone": {"departed"}},
			first: churn, wantAsked: []string{"client", "gone"}},
		{name: "an inflection of a related word", ctx: context.Background(), query: "clients",
			table: map[string][]string{"clients": {"customers"}},
			first: churn, wantAsked: []string{"clients"}},
		// Without one, the vector's semantic part alone finds the churn
		// rule: "client" and "customer" are used alike.
		{name: "no thesaurus", ctx: context.Background(), query: "when is a client gone", first: churn, vectorOnly: true},
		// No word matches, but the invoices come close by vector: the
		// related words' match ranks above them.
		{name: "related words above a vector hit", ctx: context.Background(), query: "invoiceless client",
			table: map[string][]string{"client": {"customer"}, "invoiceless": {"paid"}},
			first: churn, wantAsked: []string{"invoiceless", "client"}},
		{name: "no related word matches: the vector hit stays", ctx: context.Background(), query: "unpaid bills",
			table: map[string][]string{"bills": {"tabs"}},
			first: invoice, vectorOnly: true, wantAsked: []string{"unpaid", "bills"}},
		{name: "no related word the memory holds", ctx: context.Background(), query: "xylophone quasar",
			table:     map[string][]string{"xylophone": {"marimba"}},
			wantAsked: []string{"xylophone", "quasar"}},
		{name: "a word the memory holds is not widened", ctx: context.Background(), query: "invoices",
			table: map[string][]string{"invoices": {"customers"}},
			first: invoice, absent: churn, wantAsked: []string{"invoices"}},
		{name: "a related word ranks below a word the memory holds", ctx: context.Background(), query: "invoices client",
			table: map[string][]string{"client": {"customer"}},
			first: invoice, wantAsked: []string{"invoices", "client"}},
		// vic reads sales only: finance's customer is none of vic's
		// business, and widening the query does not reach it.
		{name: "related words only in what the principal cannot read", ctx: vic, query: "when is a client gone",
			table:  map[string][]string{"client": {"customer"}},
			absent: churn, vectorOnly: true, wantAsked: []string{"client", "gone"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var th *synonyms
			var opt memstore.Thesaurus // nil, not a nil *synonyms
			if tc.table != nil {
				th = &synonyms{table: tc.table}
				opt = th
			}
			s := openThesaurusStore(t, opt)
			for p, text := range map[string]string{
				"/memories/workspaces/finance/workspace.yaml": "acl:\n  owners: [fay]\n",
				churn: "# Churn definition\n\n- A customer is lost after 90 days without a paid order.\n",
				"/memories/workspaces/sales/workspace.yaml": "acl:\n  owners: [olga]\n  viewers: [vic]\n",
				invoice: "# Invoices\n\n- Invoices are due in 30 days.\n",
			} {
				mustCreate(t, s, p, text)
			}
			res, err := s.Search(tc.ctx, memstore.SearchRequest{Query: tc.query})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.first == "" && !tc.vectorOnly && len(res.Hits) > 0:
				t.Errorf("%d hits, first %q; want none", len(res.Hits), res.Hits[0].Path)
			case tc.first != "" && (len(res.Hits) == 0 || res.Hits[0].Path != tc.first):
				var got []string
				for _, h := range res.Hits {
					got = append(got, h.Path)
				}
				t.Errorf("hits %q, want %q first", got, tc.first)
			}
			for _, h := range res.Hits {
				if tc.vectorOnly && h.TextRank > 0 {
					t.Errorf("%s is a hit by full text (rank %d), want by vector alone", h.Path, h.TextRank)
				}
				if h.Path == tc.absent {
					t.Errorf("%s is a hit (text rank %d, vector rank %d)", h.Path, h.TextRank, h.VectorRank)
				}
			}
			if th != nil && !slices.Equal(th.asked, tc.wantAsked) {
				t.Errorf("thesaurus asked about %q, want %q", th.asked, tc.wantAsked)
			}
		})
	}
}

// openThesaurusStore opens a store with the embedded index and th in a
// fresh directory.
func openThesaurusStore(t testing.TB, th memstore.Thesaurus) *memstore.Store {
	t.Helper()
	return openStoreWith(t, t.TempDir(), nil, func(o *memstore.Options) { o.Thesaurus = th })
}

// FuzzStore_SearchThesaurus runs any query through a store with WordNet's
// thesaurus: the search never fails on a non-empty query, and returns
// only chunks of the memory's files, at most the limit.
func FuzzStore_SearchThesaurus(f *testing.F) {
	for _, q := range []string{"when is a client gone", "favorite colours", "xylophone quasar", "raise", "ies es s", "Ünïcode clients\x00", "a the of"} {
		f.Add(q)
	}
	s := openThesaurusStore(f, thesaurus.WordNet{})
	files := map[string]string{
		"/memories/workspaces/w/churn.md":  "# Churn\n\n- A customer is lost after 90 days without a paid order.\n",
		"/memories/workspaces/w/colour.md": "# Colours\n\n- Her favourite colour is green.\n",
	}
	for p, text := range files {
		mustCreate(f, s, p, text)
	}
	f.Fuzz(func(t *testing.T, query string) {
		res, err := s.Search(context.Background(), memstore.SearchRequest{Query: query, Limit: 5})
		if strings.TrimSpace(query) == "" {
			if !errors.Is(err, memstore.ErrInvalid) {
				t.Fatalf("empty query %q: %v, want ErrInvalid", query, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Search(%q): %v", query, err)
		}
		if len(res.Hits) > 5 {
			t.Fatalf("Search(%q): %d hits, limit 5", query, len(res.Hits))
		}
		for _, h := range res.Hits {
			if _, ok := files[h.Path]; !ok {
				t.Fatalf("Search(%q): hit %q is no file of the memory", query, h.Path)
			}
		}
	})
}

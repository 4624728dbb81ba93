package indextest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/embedder"
)

// Run runs the contract suite. newIndex returns a fresh, empty index for one
// subtest; the suite closes it.
func Run(t *testing.T, newIndex func(t *testing.T) memstore.Index) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s *suite)
	}{
		{"ExactRuleFirst", testExactRuleFirst},
		{"TypoTolerance", testTypoTolerance},
		{"TypoOfInflection", testTypoOfInflection},
		{"PartialWord", testPartialWord},
		{"SpelledWords", testSpelledWords},
		{"RelatedWords", testRelatedWords},
		{"Guesses", testGuesses},
		{"Filters", testFilters},
		{"Validity", testValidity},
		{"Replace", testReplace},
		{"ReplaceMany", testReplaceMany},
		{"DeletePath", testDeletePath},
		{"State", testState},
		{"Reset", testReset},
		{"HitFields", testHitFields},
		{"RRFFusion", testRRFFusion},
		{"NothingMatched", testNothingMatched},
		{"FloorScope", testFloorScope},
		{"NeighbourShare", testNeighbourShare},
		{"HostileQueries", testHostileQueries},
		{"ManyWords", testManyWords},
		{"IrregularForms", testIrregularForms},
		{"ConcurrentSearchDuringReplace", testConcurrent},
		{"DeterministicTies", testTies},
		{"AccessFilter", testAccessFilter},
		{"AccessLeakage", testAccessLeakage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx := newIndex(t)
			t.Cleanup(func() {
				if err := idx.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			s := &suite{idx: idx, emb: embedder.NewBuiltin()}
			if err := idx.Reset(context.Background(), memstore.IndexState{Embedder: s.emb.ID(), Dim: s.emb.Dim()}); err != nil {
				t.Fatalf("Reset: %v", err)
			}
			tt.fn(t, s)
		})
	}
}

// suite is one subtest's index and embedder.
type suite struct {
	idx memstore.Index
	emb *embedder.Builtin
}

// ws is the workspace of chunks built by chunk unless changed.
const ws = "sales"

// chunk builds chunk seq of path in workspace ws with text, embedded like
// the store embeds: Context + "\n" + Text.
func (s *suite) chunk(t *testing.T, path string, seq int, text string) memstore.Chunk {
	t.Helper()
	c := memstore.Chunk{
		Path:      path,
		Seq:       seq,
		Workspace: ws,
		Scope:     memstore.ScopeWorkspace,
		Type:      "note",
		StartLine: 1 + 10*seq,
		EndLine:   9 + 10*seq,
		Context:   ws + " › " + path[strings.LastIndex(path, "/")+1:],
		Text:      text,
	}
	s.embed(t, &c)
	return c
}

// embed sets c.Embedding from its Context and Text.
func (s *suite) embed(t *testing.T, c *memstore.Chunk) {
	t.Helper()
	c.Embedding = s.vector(t, c.Context+"\n"+c.Text)
}

// vector embeds text.
func (s *suite) vector(t *testing.T, text string) []float32 {
	t.Helper()
	v, err := s.emb.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatalf("Embed(%q): %v", text, err)
	}
	return v[0]
}

// put stores chunks, one Replace per path.
func (s *suite) put(t *testing.T, chunks ...memstore.Chunk) {
	t.Helper()
	var order []string
	byPath := map[string][]memstore.Chunk{}
	for _, c := range chunks {
		if _, ok := byPath[c.Path]; !ok {
			order = append(order, c.Path)
		}
		byPath[c.Path] = append(byPath[c.Path], c)
	}
	for _, p := range order {
		if err := s.idx.Replace(context.Background(), p, byPath[p]); err != nil {
			t.Fatalf("Replace(%s): %v", p, err)
		}
	}
}

// putTexts stores one single-chunk file per text, at path "notes/<i>.md" for
// text i, and returns the paths.
func (s *suite) putTexts(t *testing.T, texts ...string) []string {
	t.Helper()
	var paths []string
	for i, text := range texts {
		p := fmt.Sprintf("/memories/workspaces/%s/notes/%02d.md", ws, i)
		s.put(t, s.chunk(t, p, 0, text))
		paths = append(paths, p)
	}
	return paths
}

// hybrid is the query a store sends for text: its vector, and the
// embedder's relevance floor.
func (s *suite) hybrid(t *testing.T, text string) memstore.Query {
	t.Helper()
	return memstore.Query{Filter: access.Filter{All: true}, Text: text, Vector: s.vector(t, text), MinSimilarity: s.emb.SimilarityFloor()}
}

// search runs q and fails the test on error.
func (s *suite) search(t *testing.T, q memstore.Query) []memstore.Hit {
	t.Helper()
	hits, err := s.idx.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("Search(%q): %v", q.Text, err)
	}
	return hits
}

// keys lists hits as "path#seq".
func keys(hits []memstore.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = fmt.Sprintf("%s#%d", h.Path, h.Seq)
	}
	return out
}

// pathSet returns the distinct paths of hits, sorted.
func pathSet(hits []memstore.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Path)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// distractors are rules that share vocabulary with the targets but are not
// them.
var distractors = []string{
	"Revenue is reported per quarter in the sales dashboard, in EUR.",
	"Use the staging database for tests, never production.",
	"Dates are formatted as ISO 8601 in every export.",
	"The retail team owns the pricing spreadsheet and its policy notes.",
	"Retry failed API calls three times with exponential backoff.",
	"Customer names are never shown in charts; use customer ids.",
	"Round monetary amounts to two decimals.",
	"Quarterly reports go to the finance channel on Mondays.",
}

// retention is the target rule of the ranking tests.
const retention = "Retention policy: customer records are deleted 90 days after the contract ends."

func testExactRuleFirst(t *testing.T, s *suite) {
	texts := append([]string{retention}, distractors...)
	paths := s.putTexts(t, texts...)
	for i, text := range texts {
		hits := s.search(t, s.hybrid(t, text))
		if len(hits) == 0 || hits[0].Path != paths[i] {
			t.Errorf("query %q: top hits %v, want %s first", text, keys(hits), paths[i])
		}
	}
}

// wantFirst checks that query ranks the retention rule first.
func wantRetentionFirst(t *testing.T, s *suite, queries ...string) {
	t.Helper()
	paths := s.putTexts(t, append([]string{retention}, distractors...)...)
	for _, q := range queries {
		hits := s.search(t, s.hybrid(t, q))
		if len(hits) == 0 || hits[0].Path != paths[0] {
			t.Errorf("query %q: top hits %v, want %s first", q, keys(hits), paths[0])
		}
	}
}

func testTypoTolerance(t *testing.T, s *suite) {
	wantRetentionFirst(t, s, "retension polcy", "retention polciy", "custmer recrods")
}

// testTypoOfInflection: a query word no chunk holds finds, by full text,
// the indexed words its stem begins and the terms one edit from its stem.
func testTypoOfInflection(t *testing.T, s *suite) {
	paths := s.putTexts(t,
		"Each visitor gets a hashed cookie id.",
		"Every customer has one segment: retail or wholesale.",
		"Invoices are archived after ten years.")
	tests := []struct {
		query string
		want  string
	}{
		{"visits", paths[0]},    // stem "visit" begins "visitor"
		{"segmentts", paths[1]}, // stem "segmentt" is one edit from "segment"
	}
	for _, tt := range tests {
		s.wantFirstByText(t, tt.query, tt.want)
	}
}

// wantFirstByText checks that query, searched by a principal who may read
// everything, ranks path first by full text.
func (s *suite) wantFirstByText(t *testing.T, query, path string) {
	t.Helper()
	hits := s.search(t, memstore.Query{Filter: access.Filter{All: true}, Text: query})
	if len(hits) == 0 || hits[0].Path != path || hits[0].TextRank != 1 {
		t.Errorf("%q: hits %v, want %s first by full text", query, keys(hits), path)
	}
}

// testSpelledWords: a query word spelled right (Query.Spelled) is a typo
// only of its other spellings, not of the other indexed words one edit
// from it or from its stem, and still stands for the words it begins.
func testSpelledWords(t *testing.T, s *suite) {
	paths := s.putTexts(t,
		"Rain delays deliveries in the north.",
		"Each visitor gets a hashed cookie id.",
		"Her favourite dish is ramen.")
	tests := []struct {
		query   string
		spelled map[string][]string
		want    string // the first hit by full text; "" for no full-text hit
	}{
		// The stem "rais" is one edit from "rain".
		{"raise", nil, paths[0]},
		// A word in its own right; an edit of its stem is never another
		// spelling.
		{"raise", map[string][]string{"raise": {}}, ""},
		{"raise", map[string][]string{"raise": {"rain"}}, ""},
		// Only the words listed are spelled.
		{"rainn", map[string][]string{"raise": {}}, paths[0]},
		// The stem "visit" begins "visitor".
		{"visits", map[string][]string{"visits": {}}, paths[1]},
		// "favourite" is another word, unless it is another spelling.
		{"favorite", map[string][]string{"favorite": {}}, ""},
		{"favorite", map[string][]string{"favorite": {"favourit"}}, paths[2]},
	}
	for _, tt := range tests {
		hits := s.search(t, memstore.Query{Filter: access.Filter{All: true}, Text: tt.query, Spelled: tt.spelled})
		switch {
		case tt.want == "" && len(hits) > 0:
			t.Errorf("%q spelled %q: hits %v, want none", tt.query, tt.spelled, keys(hits))
		case tt.want != "" && (len(hits) == 0 || hits[0].Path != tt.want || hits[0].TextRank != 1):
			t.Errorf("%q spelled %q: hits %v, want %s first by full text", tt.query, tt.spelled, keys(hits), tt.want)
		}
	}
}

// testRelatedWords: the words of like meaning of a query word no chunk
// holds (Query.Related) stand in for it, below the words matching
// exactly; a word a chunk holds is never widened; and a query whose only
// terms are related ones that match nothing in the searched workspace is
// nothing the memory knows, so its vector hits must pass the relevance
// floor. Associated words (Query.Associated) stand in likewise, but only
// beside a term of the query's own words: alone, or beside related
// terms only, they are not searched.
func testRelatedWords(t *testing.T, s *suite) {
	paths := s.putTexts(t,
		"A customer is lost after ninety days.",
		"Invoices are due within thirty days.",
		"Each visitor gets a hashed cookie.")
	other := "/memories/workspaces/other/notes/churn.md"
	c := s.chunk(t, other, 0, "Patrons churn after a price rise.")
	c.Workspace = "other"
	s.put(t, c)
	client := map[string][]string{"client": {"custom", "patron"}}
	clientCustom := map[string][]string{"client": {"custom"}}
	tests := []struct {
		name                string
		query               string
		related, associated map[string][]string
		ws                  string
		want                []string // the hits by full text, best first
	}{
		{"stand-in", "client", client, nil, ws, paths[:1]},
		{"no related words", "client", nil, nil, ws, nil},
		{"related words the memory lacks", "client", map[string][]string{"client": {"purchas"}}, nil, ws, nil},
		{"a held word is not widened", "invoices", map[string][]string{"invoices": {"custom"}}, nil, ws, paths[1:2]},
		{"below the exact word", "client invoices", client, nil, ws, []string{paths[1], paths[0]}},
		{"only outside the workspace", "client", map[string][]string{"client": {"patron"}}, nil, ws, nil},
		{"associated alone", "client", nil, clientCustom, ws, nil},
		{"associated beside a held word", "client invoices", nil, clientCustom, ws, []string{paths[1], paths[0]}},
		{"associated beside related only", "client guest caller", map[string][]string{"guest": {"visitor"}, "caller": {"visitor"}}, clientCustom, ws, paths[2:3]},
		{"a held word is not associated", "invoices", nil, map[string][]string{"invoices": {"custom"}}, ws, paths[1:2]},
		{"associated and held", "client customer", nil, clientCustom, ws, paths[:1]},
		// A query the memory holds none of the words of matches through
		// stand-ins only when most of its words have one.
		{"one word of two stands in", "client zorblat", client, nil, ws, nil},
		{"two words of three stand in", "client buyer zorblat", map[string][]string{"client": {"custom"}, "buyer": {"custom"}}, nil, ws, paths[:1]},
		{"a typo of the only word", "invoicse", nil, nil, ws, paths[1:2]},
		{"a typo of one word of two", "invoicse zorblat", nil, nil, ws, nil},
		{"a typo beside a held word", "invoicse days", nil, nil, ws, []string{paths[1], paths[0]}},
	}
	for _, tt := range tests {
		q := s.hybrid(t, tt.query)
		q.Related, q.Associated, q.Workspace = tt.related, tt.associated, tt.ws
		// Above any similarity: a query that matches nothing by full text
		// keeps no vector hit.
		q.MinSimilarity = 2
		var got []string
		for _, h := range s.search(t, q) {
			if h.TextRank == 0 {
				if len(tt.want) > 0 {
					continue // a query that matched keeps its vector hits
				}
				t.Errorf("%s: %q related %q associated %q: vector-only hit %s#%d passed the floor", tt.name, tt.query, tt.related, tt.associated, h.Path, h.Seq)
				continue
			}
			got = append(got, h.Path)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q related %q associated %q: full-text hits %v, want %v", tt.name, tt.query, tt.related, tt.associated, got, tt.want)
		}
	}
}

// testGuesses checks memstore.Ranking.GuessShare: of a query the memory
// holds none of the words of, a full-text hit holding stand-ins for no
// more than half its words stays only when its vector similarity reaches
// GuessShare times the floor, even when most words have a stand-in
// somewhere; a hit holding stand-ins for most of them stays whatever its
// similarity.
func testGuesses(t *testing.T, s *suite) {
	share := memstore.DefaultRanking().GuessShare
	if share == 0 {
		t.Skip("the default ranking keeps every full-text hit")
	}
	paths := s.putTexts(t,
		"A customer is lost after ninety days.",
		"Invoices are due within thirty days.")
	apart := map[string][]string{"client": {"custom"}, "buyer": {"invoic"}}
	together := map[string][]string{"client": {"custom"}, "buyer": {"custom"}}
	tests := []struct {
		name    string
		related map[string][]string
		// near: the query's vector is the first chunk's, and the floor
		// above any similarity but with the guesses' share below 1.
		near bool
		want []string // the hits by full text, best first
	}{
		{"each chunk holds one word's stand-in", apart, false, nil},
		{"a guess near the query", apart, true, paths[:1]},
		{"one chunk holds two words' stand-ins", together, false, paths[:1]},
	}
	for _, tt := range tests {
		q := s.hybrid(t, "client buyer zorblat")
		q.Related = tt.related
		q.MinSimilarity = 2
		if tt.near {
			q.Vector = s.chunk(t, paths[0], 0, "A customer is lost after ninety days.").Embedding
			q.MinSimilarity = 0.99 / share
		}
		var got []string
		for _, h := range s.search(t, q) {
			if h.TextRank == 0 {
				t.Errorf("%s: vector-only hit %s#%d passed the floor", tt.name, h.Path, h.Seq)
				continue
			}
			got = append(got, h.Path)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: full-text hits %v, want %v", tt.name, got, tt.want)
		}
	}
}

func testPartialWord(t *testing.T, s *suite) {
	wantRetentionFirst(t, s, "retent", "retention pol", "contr")
}

// corpus for the filter tests: path, workspace, scope, type.
var filterCorpus = []struct{ path, workspace, scope, typ string }{
	{"/memories/org/rules.md", "", memstore.ScopeOrg, "task"},
	{"/memories/users/ann/prefs.md", "", memstore.ScopeUser, "note"},
	{"/memories/workspaces/sales/task.md", "sales", memstore.ScopeWorkspace, "task"},
	{"/memories/workspaces/sales/output.md", "sales", memstore.ScopeWorkspace, "output"},
	{"/memories/workspaces/sales/schemas/orders.md", "sales", memstore.ScopeWorkspace, "schema"},
	{"/memories/workspaces/ops/task.md", "ops", memstore.ScopeWorkspace, "task"},
	{"/memories/workspaces/ops/tools/db.yaml", "ops", memstore.ScopeWorkspace, "tool"},
}

// queryModes are the ways a query can drive ranking; filters apply to each.
var queryModes = []struct {
	name       string
	text, vect bool
}{
	{"hybrid", true, true},
	{"text only", true, false},
	{"vector only", false, true},
}

// modeQuery returns the query for text in a mode.
func (s *suite) modeQuery(t *testing.T, text string, withText, withVector bool) memstore.Query {
	t.Helper()
	q := memstore.Query{Filter: access.Filter{All: true}}
	if withText {
		q.Text = text
	}
	if withVector {
		q.Vector = s.vector(t, text)
	}
	q.Limit = 100
	return q
}

func testFilters(t *testing.T, s *suite) {
	for _, f := range filterCorpus {
		c := s.chunk(t, f.path, 0, "Shared rule about invoices for "+f.typ)
		c.Workspace, c.Scope, c.Type = f.workspace, f.scope, f.typ
		s.embed(t, &c)
		s.put(t, c)
	}
	tests := []struct {
		name      string
		workspace string
		scope     string
		types     []string
		want      []int // indexes into filterCorpus
	}{
		{"none", "", "", nil, []int{0, 1, 2, 3, 4, 5, 6}},
		{"workspace", "sales", "", nil, []int{2, 3, 4}},
		{"scope", "", memstore.ScopeOrg, nil, []int{0}},
		{"scope workspace", "", memstore.ScopeWorkspace, nil, []int{2, 3, 4, 5, 6}},
		{"one type", "", "", []string{"task"}, []int{0, 2, 5}},
		{"several types", "", "", []string{"task", "schema", "tool"}, []int{0, 2, 4, 5, 6}},
		{"workspace and type", "ops", "", []string{"task"}, []int{5}},
		{"unknown workspace", "nope", "", nil, nil},
		{"unknown type", "", "", []string{"nope"}, nil},
		{"known and unknown type", "", "", []string{"nope", "output"}, []int{3}},
	}
	for _, mode := range queryModes {
		for _, tt := range tests {
			t.Run(mode.name+"/"+tt.name, func(t *testing.T) {
				q := s.modeQuery(t, "invoices rule", mode.text, mode.vect)
				q.Workspace, q.Scope, q.Types = tt.workspace, tt.scope, tt.types
				var want []string
				for _, i := range tt.want {
					want = append(want, filterCorpus[i].path)
				}
				slices.Sort(want)
				if diff := cmp.Diff(want, pathSet(s.search(t, q))); diff != "" {
					t.Errorf("paths (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func testValidity(t *testing.T, s *suite) {
	now := time.Now().UTC().Truncate(time.Second)
	past, future := now.Add(-24*time.Hour), now.Add(24*time.Hour)
	items := []struct {
		name               string
		invalidAt, expires time.Time
		visible            bool // by default, at now
	}{
		{"valid", time.Time{}, time.Time{}, true},
		{"invalidated", past, time.Time{}, false},
		{"expired", time.Time{}, past, false},
		{"invalid in future", future, time.Time{}, true},
		{"expires in future", time.Time{}, future, true},
		{"invalidated exactly now", now, time.Time{}, false},
	}
	var all, visible []string
	for i, it := range items {
		c := s.chunk(t, fmt.Sprintf("/memories/workspaces/sales/notes/%d.md", i), 0, "Validity rule about invoices: "+it.name)
		c.ValidFrom, c.InvalidAt, c.ExpiresAt = past.Add(-time.Hour), it.invalidAt, it.expires
		s.put(t, c)
		all = append(all, c.Path)
		if it.visible {
			visible = append(visible, c.Path)
		}
	}
	for _, mode := range queryModes {
		for _, tt := range []struct {
			name           string
			now            time.Time
			includeInvalid bool
			want           []string
		}{
			{"default", now, false, visible},
			{"include invalid", now, true, all},
			{"zero now means the current time", time.Time{}, false, visible},
			{"before everything", past.Add(-time.Minute), false, all},
		} {
			t.Run(mode.name+"/"+tt.name, func(t *testing.T) {
				q := s.modeQuery(t, "validity invoices", mode.text, mode.vect)
				q.Now, q.IncludeInvalid = tt.now, tt.includeInvalid
				if diff := cmp.Diff(tt.want, pathSet(s.search(t, q))); diff != "" {
					t.Errorf("paths (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func testReplace(t *testing.T, s *suite) {
	const p = "/memories/workspaces/sales/task.md"
	textHits := func(text string) []string {
		t.Helper()
		return keys(s.search(t, memstore.Query{Filter: access.Filter{All: true}, Text: text, Limit: 100}))
	}
	s.put(t, s.chunk(t, p, 0, "Alpha rule: old wording."), s.chunk(t, p, 1, "Gamma rule: second section."))
	if got, want := textHits("alpha"), []string{p + "#0"}; !slices.Equal(got, want) {
		t.Fatalf("before Replace: alpha hits %v, want %v", got, want)
	}

	replacement := []memstore.Chunk{s.chunk(t, p, 0, "Beta rule: new wording.")}
	for range 2 { // idempotent
		if err := s.idx.Replace(context.Background(), p, replacement); err != nil {
			t.Fatalf("Replace: %v", err)
		}
		if got := textHits("alpha"); len(got) != 0 {
			t.Errorf("after Replace: old text still found: %v", got)
		}
		if got := textHits("gamma"); len(got) != 0 {
			t.Errorf("after Replace: dropped chunk still found: %v", got)
		}
		hits := s.search(t, s.hybrid(t, "beta rule wording"))
		if got, want := keys(hits), []string{p + "#0"}; !slices.Equal(got, want) {
			t.Errorf("after Replace: hits %v, want %v", got, want)
		} else if got, want := hits[0].Text, replacement[0].Text; got != want {
			t.Errorf("after Replace: text %q, want %q", got, want)
		}
	}

	if err := s.idx.Replace(context.Background(), p, nil); err != nil {
		t.Fatalf("Replace with no chunks: %v", err)
	}
	if got := keys(s.search(t, s.hybrid(t, "beta rule wording"))); len(got) != 0 {
		t.Errorf("after Replace with no chunks: hits %v, want none", got)
	}
}

// testReplaceMany checks the batch write of an index that has one: every
// path of the batch gets its new set (none removes it), visible to both
// rankings, and a batch with an invalid chunk writes nothing.
func testReplaceMany(t *testing.T, s *suite) {
	b, ok := s.idx.(memstore.BatchIndex)
	if !ok {
		t.Skipf("%T has no ReplaceMany", s.idx)
	}
	ctx := context.Background()
	const a, c = "/memories/workspaces/sales/a.md", "/memories/workspaces/sales/c.md"
	err := b.ReplaceMany(ctx, map[string][]memstore.Chunk{
		a: {s.chunk(t, a, 0, "Alpha rule: invoices close monthly.")},
		c: {s.chunk(t, c, 0, "Gamma rule: refunds need approval."), s.chunk(t, c, 1, "Delta rule: quotes expire.")},
	})
	if err != nil {
		t.Fatalf("ReplaceMany: %v", err)
	}
	if got, want := keys(s.search(t, s.hybrid(t, "gamma refunds approval"))), c+"#0"; len(got) == 0 || got[0] != want {
		t.Errorf("after the first batch: hits %v, want %s first", got, want)
	}
	err = b.ReplaceMany(ctx, map[string][]memstore.Chunk{
		a: nil,
		c: {s.chunk(t, c, 0, "Epsilon rule: discounts cap at ten percent.")},
	})
	if err != nil {
		t.Fatalf("ReplaceMany: %v", err)
	}
	vectorOnly := memstore.Query{Filter: access.Filter{All: true}, Vector: s.vector(t, "epsilon discounts cap"), Limit: 10}
	if got, want := keys(s.search(t, vectorOnly)), []string{c + "#0"}; !slices.Equal(got, want) {
		t.Errorf("after the second batch: vector hits %v, want %v", got, want)
	}
	if got := keys(s.search(t, memstore.Query{Filter: access.Filter{All: true}, Text: "alpha delta gamma", Limit: 10})); len(got) != 0 {
		t.Errorf("after the second batch: replaced text still found: %v", got)
	}

	const d = "/memories/workspaces/sales/d.md"
	bad := s.chunk(t, a, 0, "Zeta rule: filed under the wrong path.")
	err = b.ReplaceMany(ctx, map[string][]memstore.Chunk{
		d: {s.chunk(t, d, 0, "Zeta rule: valid chunk.")},
		c: {bad},
	})
	if !errors.Is(err, memstore.ErrInvalid) {
		t.Errorf("batch with a chunk of another path: %v, want ErrInvalid", err)
	}
	if got := keys(s.search(t, memstore.Query{Filter: access.Filter{All: true}, Text: "zeta", Limit: 10})); len(got) != 0 {
		t.Errorf("a refused batch wrote %v", got)
	}
	if got, want := keys(s.search(t, vectorOnly)), []string{c + "#0"}; !slices.Equal(got, want) {
		t.Errorf("after a refused batch: vector hits %v, want %v", got, want)
	}
}

func testDeletePath(t *testing.T, s *suite) {
	const root = "/memories/workspaces/sales/"
	all := []string{"dir/sub/y.md", "dir/x.md", "dir2/z.md", "notes/a.md", "notes/ab.md", "notes/b.md"}
	tests := []struct {
		name   string
		delete string
		want   []string
	}{
		{"file", "notes/a.md", []string{"dir/sub/y.md", "dir/x.md", "dir2/z.md", "notes/ab.md", "notes/b.md"}},
		{"directory", "dir", []string{"dir2/z.md", "notes/a.md", "notes/ab.md", "notes/b.md"}},
		{"directory with slash", "dir/", []string{"dir2/z.md", "notes/a.md", "notes/ab.md", "notes/b.md"}},
		{"nested directory", "dir/sub", []string{"dir/x.md", "dir2/z.md", "notes/a.md", "notes/ab.md", "notes/b.md"}},
		{"missing", "nothing.md", all},
		{"string prefix of a file", "notes/a", all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.idx.Reset(context.Background(), memstore.IndexState{Embedder: s.emb.ID(), Dim: s.emb.Dim()}); err != nil {
				t.Fatalf("Reset: %v", err)
			}
			for _, p := range all {
				s.put(t, s.chunk(t, root+p, 0, "Memo one"), s.chunk(t, root+p, 1, "Memo two"))
			}
			if err := s.idx.DeletePath(context.Background(), root+tt.delete); err != nil {
				t.Fatalf("DeletePath: %v", err)
			}
			var want []string
			for _, p := range tt.want {
				want = append(want, root+p)
			}
			got := pathSet(s.search(t, memstore.Query{Filter: access.Filter{All: true}, Text: "memo", Limit: 100}))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("paths after DeletePath(%q) (-want +got):\n%s", tt.delete, diff)
			}
		})
	}
}

func testState(t *testing.T, s *suite) {
	ctx := context.Background()
	want := memstore.IndexState{Commit: "0123abc", Embedder: s.emb.ID(), Dim: s.emb.Dim()}
	for _, st := range []memstore.IndexState{want, {Commit: "fedcba9", Embedder: s.emb.ID(), Dim: s.emb.Dim()}} {
		if err := s.idx.SetState(ctx, st); err != nil {
			t.Fatalf("SetState: %v", err)
		}
		got, err := s.idx.State(ctx)
		if err != nil {
			t.Fatalf("State: %v", err)
		}
		if diff := cmp.Diff(st, got); diff != "" {
			t.Errorf("State (-want +got):\n%s", diff)
		}
	}
}

func testReset(t *testing.T, s *suite) {
	ctx := context.Background()
	s.putTexts(t, retention, distractors[0])
	want := memstore.IndexState{Commit: "", Embedder: "test-8", Dim: 8}
	if err := s.idx.Reset(ctx, want); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	got, err := s.idx.State(ctx)
	if err != nil {
		t.Fatalf("State: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("State after Reset (-want +got):\n%s", diff)
	}
	if hits := s.search(t, memstore.Query{Filter: access.Filter{All: true}, Text: "retention policy"}); len(hits) != 0 {
		t.Errorf("after Reset: hits %v, want none", keys(hits))
	}

	// The new dimension is in force.
	c := memstore.Chunk{Path: "/memories/org/x.md", Scope: memstore.ScopeOrg, Type: "note", Text: "Retention policy again",
		Embedding: []float32{0, 0, 1, 0, 0, 0, 0, 0}}
	if err := s.idx.Replace(ctx, c.Path, []memstore.Chunk{c}); err != nil {
		t.Fatalf("Replace with an 8-dim embedding after Reset: %v", err)
	}
	hits := s.search(t, memstore.Query{Filter: access.Filter{All: true}, Text: "retention", Vector: []float32{0, 0, 1, 0, 0, 0, 0, 0}})
	if got, want := keys(hits), []string{c.Path + "#0"}; !slices.Equal(got, want) {
		t.Fatalf("hits %v, want %v", got, want)
	}
	if got, want := hits[0].Score, wantScore(hits[0], memstore.DefaultRanking().VectorWeight); math.Abs(got-want) > 1e-12 {
		t.Errorf("score %v, want %v", got, want)
	}
}

// wantScore is the fused score of h by definition, the vector ranking
// weighted by vectorWeight.
func wantScore(h memstore.Hit, vectorWeight float64) float64 {
	var want float64
	if h.TextRank > 0 {
		want += 1 / float64(memstore.RRFK+h.TextRank)
	}
	if h.VectorRank > 0 {
		want += vectorWeight / float64(memstore.RRFK+h.VectorRank)
	}
	return want
}

func testHitFields(t *testing.T, s *suite) {
	c := s.chunk(t, "/memories/workspaces/sales/task.md", 3, "Every field survives the index.")
	c.Heading = "Rules › Fields"
	c.Source = "user_confirmed"
	c.Confidence = 0.75
	c.Commit = "c0ffee0"
	c.ValidFrom = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	c.InvalidAt = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	c.ExpiresAt = time.Date(2099, 6, 1, 12, 0, 0, 0, time.UTC)
	s.put(t, c)
	hits := s.search(t, s.hybrid(t, "every field survives"))
	if len(hits) != 1 {
		t.Fatalf("hits %v, want one", keys(hits))
	}
	want := c
	want.Embedding = nil
	if diff := cmp.Diff(want, hits[0].Chunk); diff != "" {
		t.Errorf("hit chunk (-want +got):\n%s", diff)
	}
}

// testRRFFusion checks the weighted fusion: a query whose words the index
// all knows weighs the vector ranking by Ranking.VectorWeight, ranking
// only its full-text hits with Ranking.Rerank; one with a word no chunk
// holds weighs it by Ranking.UnknownVectorWeight, every chunk ranked.
func testRRFFusion(t *testing.T, s *suite) {
	paths := s.putTexts(t,
		"Zebra crossings need a second look.",
		"Invoices are numbered per year.",
		"Dates use ISO 8601.",
	)
	first := s.chunk(t, paths[0], 0, "Zebra crossings need a second look.")
	rk := memstore.DefaultRanking()
	for _, tt := range []struct {
		text   string
		weight float64
		among  bool // the vector ranking covers the full-text hits alone
	}{
		{"zebra", rk.VectorWeight, rk.Rerank},
		{"zebra quagga", rk.UnknownVectorWeight, false},
	} {
		hits := s.search(t, memstore.Query{Filter: access.Filter{All: true}, Text: tt.text, Vector: first.Embedding})
		want := 3
		if tt.weight == 0 || tt.among {
			want = 1
		}
		if len(hits) != want {
			t.Fatalf("%q: hits %v, want %d", tt.text, keys(hits), want)
		}
		if got, want := hits[0].Path, paths[0]; got != want {
			t.Fatalf("%q: first hit %s, want %s", tt.text, got, want)
		}
		if got := hits[0].TextRank; got != 1 {
			t.Errorf("%q: first hit text rank %d, want 1", tt.text, got)
		}
		var vecRanks []int
		for _, h := range hits {
			if want := wantScore(h, tt.weight); math.Abs(h.Score-want) > 1e-12 {
				t.Errorf("%q: %s: score %v, want %v from ranks (%d, %d)", tt.text, h.Path, h.Score, want, h.TextRank, h.VectorRank)
			}
			vecRanks = append(vecRanks, h.VectorRank)
			if h.Path != paths[0] && h.TextRank != 0 {
				t.Errorf("%q: %s: text rank %d, want 0 (no zebra)", tt.text, h.Path, h.TextRank)
			}
		}
		if tt.weight > 0 {
			if got, want := vecRanks, []int{1, 2, 3}[:want]; !slices.Equal(got, want) {
				t.Errorf("%q: vector ranks in hit order = %v, want %v", tt.text, got, want)
			}
		}
	}
}

// testNothingMatched checks the relevance floor: a query none of whose
// words any chunk holds returns only chunks whose vectors reach
// MinSimilarity, so nonsense finds nothing and a typo still finds its rule.
func testNothingMatched(t *testing.T, s *suite) {
	s.putTexts(t, append([]string{retention}, distractors...)...)
	for _, text := range []string{"xylophone quasar", "blorfix zantrop quibbleworth", "🙂"} {
		if hits := s.search(t, s.hybrid(t, text)); len(hits) != 0 {
			t.Errorf("%q: hits %v, want none", text, keys(hits))
		}
	}
	q := s.hybrid(t, "xylophone quasar")
	q.MinSimilarity = -1
	if hits := s.search(t, q); len(hits) == 0 {
		t.Errorf("without a floor: no hits, want the nearest chunks")
	}
	// A known word lifts the floor: partial matches are matches.
	if hits := s.search(t, s.hybrid(t, "xylophone retention")); len(hits) == 0 || hits[0].TextRank != 1 {
		t.Errorf("xylophone retention: hits %v, want the retention rule first", keys(hits))
	}
}

// testNeighbourShare checks that a note's chunk matching the query gains
// a share of its matching neighbour's score, that a chunk matching nothing
// gains nothing, and that a chunk of task rules, whose sections stand
// alone, gains nothing either (memstore.Ranking.NeighbourTypes).
func testNeighbourShare(t *testing.T, s *suite) {
	if memstore.DefaultRanking().Neighbour == 0 {
		t.Skip("the default ranking has no neighbour share")
	}
	const p, q = "/memories/workspaces/sales/notes/talk.md", "/memories/workspaces/sales/notes/other.md"
	s.put(t,
		s.chunk(t, p, 0, "Ann: How was the pottery class on Saturday?"),
		s.chunk(t, p, 1, "Ben: Ann, I made a small bowl."),
		s.chunk(t, p, 2, "Ann: Weather is nice today."),
	)
	s.put(t, s.chunk(t, q, 0, "Ben: Ann, I bought a new lamp."))
	hits := s.search(t, memstore.Query{Filter: access.Filter{All: true}, Text: "what did ben make in the pottery class", Limit: 10})
	got := keys(hits)
	if want := []string{p + "#0", p + "#1", q + "#0"}; !slices.Equal(got, want) {
		t.Errorf("hits %v, want %v: the answer beside the question before an equal match elsewhere, no hit without a query word", got, want)
	}

	const r, u = "/memories/workspaces/sales/task.md", "/memories/workspaces/sales/output.md"
	task := func(path string, seq int, text string) memstore.Chunk {
		c := s.chunk(t, path, seq, text)
		c.Type = "task"
		return c
	}
	s.put(t, task(r, 0, "Glazing course: bring an apron."), task(r, 1, "Ben: Ann, I made a small vase."))
	s.put(t, task(u, 0, "Ben: I broke a vase."))
	hits = s.search(t, memstore.Query{Filter: access.Filter{All: true}, Text: "glazing course vase", Limit: 10})
	if got, want := keys(hits), []string{r + "#0", u + "#0", r + "#1"}; !slices.Equal(got, want) {
		t.Errorf("hits %v, want %v: a task rule gains no share of the rule before it", got, want)
	}
}

func testHostileQueries(t *testing.T, s *suite) {
	s.putTexts(t, retention, distractors[0], `Quotes "like this", stars * and NEAR(a b) - c: d`)
	texts := []string{
		`"`, `""`, `*`, `NEAR(`, `NEAR(a b)`, `-`, `-retention`, `:`, `col:retention`, `'); DROP TABLE chunks; --`,
		`retention AND`, `OR`, `NOT`, `(`, `)`, `^`, `{heading}: x`, `retention*`, "\x00", `\`, `%_`, `🙂`, "   ",
		strings.Repeat("policy ", 500),
	}
	for _, text := range texts {
		for _, withVector := range []bool{false, true} {
			q := memstore.Query{Filter: access.Filter{All: true}, Text: text}
			if withVector {
				q.Vector = s.vector(t, "retention policy")
			}
			if _, err := s.idx.Search(context.Background(), q); err != nil {
				t.Errorf("Search(%q, vector %t): %v", text, withVector, err)
			}
		}
	}
	hits := s.search(t, memstore.Query{Filter: access.Filter{All: true}, Vector: s.vector(t, "retention policy"), MinSimilarity: s.emb.SimilarityFloor()})
	if len(hits) == 0 {
		t.Errorf("vector-only query: no hits")
	}
	for _, h := range hits {
		if h.TextRank != 0 || h.VectorRank == 0 {
			t.Errorf("vector-only query: %s has ranks (text %d, vector %d), want (0, >0)", h.Path, h.TextRank, h.VectorRank)
		}
	}
	if hits := s.search(t, memstore.Query{Filter: access.Filter{All: true}}); len(hits) != 0 {
		t.Errorf("empty query: hits %v, want none", keys(hits))
	}
}

// testManyWords checks that every word of a long query counts, however
// many: the store bounds a query's words (memstore.MaxQueryWords), and
// both backends must then agree.
func testManyWords(t *testing.T, s *suite) {
	var texts, words []string
	for i := range 40 {
		w := fmt.Sprintf("w%02d", i)
		words = append(words, w)
		texts = append(texts, "A note on "+w+".")
	}
	paths := s.putTexts(t, texts...)
	q := s.hybrid(t, strings.Join(words, " "))
	q.Limit = 50
	got := pathSet(s.search(t, q))
	if want := slices.Sorted(slices.Values(paths)); !slices.Equal(got, want) {
		t.Errorf("hits %v, want every one of the %d notes", got, len(want))
	}
}

// testIrregularForms checks that an irregular inflection and its base
// form are one term (memstore.Stem): the question's "run" finds the
// note's "ran", and the other way round.
func testIrregularForms(t *testing.T, s *suite) {
	paths := s.putTexts(t,
		"Anna ran the trail race at dawn.",
		"Each child gets a badge at the door.",
		"We meet at noon.")
	s.wantFirstByText(t, "When did she run?", paths[0])
	s.wantFirstByText(t, "badges for the children", paths[1])
	s.wantFirstByText(t, "who brought the children", paths[1])
	// Three letters: too short for typo tolerance to find "meet".
	s.wantFirstByText(t, "when we met", paths[2])
}

func testConcurrent(t *testing.T, s *suite) {
	s.putTexts(t, append([]string{retention}, distractors...)...)
	const p = "/memories/workspaces/sales/hot.md"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	q := s.hybrid(t, "retention policy hot section")
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				hits, err := s.idx.Search(ctx, q)
				if err != nil {
					if ctx.Err() == nil {
						errs <- err
					}
					return
				}
				seen := map[string]bool{}
				for _, k := range keys(hits) {
					if seen[k] {
						errs <- fmt.Errorf("duplicate hit %s in %v", k, keys(hits))
						return
					}
					seen[k] = true
				}
			}
		})
	}
	for i := range 30 {
		n := 1 + i%3
		var chunks []memstore.Chunk
		for seq := range n {
			chunks = append(chunks, s.chunk(t, p, seq, fmt.Sprintf("Hot section %d, version %d, retention policy.", seq, i)))
		}
		if err := s.idx.Replace(context.Background(), p, chunks); err != nil {
			t.Fatalf("Replace %d: %v", i, err)
		}
		if i%10 == 9 {
			if err := s.idx.DeletePath(context.Background(), p); err != nil {
				t.Fatalf("DeletePath: %v", err)
			}
		}
	}
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func testTies(t *testing.T, s *suite) {
	const text = "Identical rule text for the tie test."
	var chunks []memstore.Chunk
	for _, p := range []string{"c.md", "a.md", "b.md"} {
		path := "/memories/workspaces/sales/ties/" + p
		for _, seq := range []int{1, 0} {
			c := s.chunk(t, path, seq, text)
			c.Context = "sales › ties" // identical, so both rankings tie
			s.embed(t, &c)
			chunks = append(chunks, c)
		}
	}
	s.put(t, chunks...)
	want := []string{
		"/memories/workspaces/sales/ties/a.md#0", "/memories/workspaces/sales/ties/a.md#1",
		"/memories/workspaces/sales/ties/b.md#0", "/memories/workspaces/sales/ties/b.md#1",
		"/memories/workspaces/sales/ties/c.md#0", "/memories/workspaces/sales/ties/c.md#1",
	}
	for _, mode := range queryModes {
		t.Run(mode.name, func(t *testing.T) {
			for range 3 {
				hits := s.search(t, s.modeQuery(t, "identical rule", mode.text, mode.vect))
				if diff := cmp.Diff(want, keys(hits)); diff != "" {
					t.Fatalf("order (-want +got):\n%s", diff)
				}
			}
		})
	}
}

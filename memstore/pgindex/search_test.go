package pgindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/selmem/selmem/internal/pgtest"
	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

// note is a corpus entry for builtin-embedder searches.
type note struct {
	path, ws, scope, typ, heading, text string
	invalid, expired                    bool
}

var notes = []note{
	{"/memories/workspaces/sales/task.md", "sales", memstore.ScopeWorkspace, "task", "Rules",
		"Revenue is reported in EUR, net of refunds.", false, false},
	{"/memories/workspaces/sales/output.md", "sales", memstore.ScopeWorkspace, "output", "Contract",
		"The dashboard reads data/revenue.csv with columns region, month, amount.", false, false},
	{"/memories/workspaces/hr/task.md", "hr", memstore.ScopeWorkspace, "task", "Retention",
		"Employee retention policy: exit interviews within two weeks.", false, false},
	{"/memories/workspaces/hr/notes/old.md", "hr", memstore.ScopeWorkspace, "note", "Old rule",
		"Retention reports were monthly.", true, false},
	{"/memories/workspaces/hr/notes/temp.md", "hr", memstore.ScopeWorkspace, "note", "Temporary",
		"Retention freeze until the audit ends.", false, true},
	{"/memories/org/style.md", "", memstore.ScopeOrg, "note", "Style",
		"Use ISO 8601 dates everywhere.", false, false},
	{"/memories/users/ana/prefs.md", "", memstore.ScopeUser, "note", "Preferences",
		"Ana prefers bullet lists and short answers.", false, false},
}

// loadNotes indexes notes with the builtin embedder, one file per note.
func loadNotes(t *testing.T, ix *Index, now time.Time) *embedder.Builtin {
	t.Helper()
	emb := embedder.NewBuiltin()
	ctx := context.Background()
	for _, n := range notes {
		c := memstore.Chunk{
			Path: n.path, Workspace: n.ws, Scope: n.scope, Type: n.typ, Heading: n.heading,
			Context: strings.TrimPrefix(n.path, "/memories/") + " › " + n.heading, Text: n.text,
			StartLine: 1, EndLine: 3,
		}
		if n.invalid {
			c.InvalidAt = now.Add(-time.Hour)
		}
		if n.expired {
			c.ExpiresAt = now.Add(-time.Minute)
		}
		vs, err := emb.Embed(ctx, []string{c.Context + "\n" + c.Text})
		if err != nil {
			t.Fatal(err)
		}
		c.Embedding = vs[0]
		if err := ix.Replace(ctx, c.Path, []memstore.Chunk{c}); err != nil {
			t.Fatalf("Replace(%s): %v", c.Path, err)
		}
	}
	return emb
}

func paths(hits []memstore.Hit) []string {
	var ps []string
	for _, h := range hits {
		ps = append(ps, h.Path)
	}
	return ps
}

func TestSearch_Builtin(t *testing.T) {
	t.Parallel()
	emb := embedder.NewBuiltin()
	ix, _ := newIndex(t, emb.Dim())
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	loadNotes(t, ix, now)
	ctx := context.Background()

	tests := []struct {
		name      string
		q         memstore.Query
		embed     bool // fill Vector from Text
		wantTop   string
		wantAll   []string // when set, the exact set of paths (any order)
		wantNone  []string
		textRank1 bool // the top hit must be the top text hit
	}{
		{name: "full text and vector agree", q: memstore.Query{Filter: access.Filter{All: true}, Text: "revenue refunds"}, embed: true,
			wantTop: "/memories/workspaces/sales/task.md", textRank1: true},
		{name: "stemmed full text", q: memstore.Query{Filter: access.Filter{All: true}, Text: "reporting"},
			wantTop: "/memories/workspaces/sales/task.md"},
		{name: "partial terms still match", q: memstore.Query{Filter: access.Filter{All: true}, Text: "bullet zebra"},
			wantTop: "/memories/users/ana/prefs.md"},
		{name: "typo found through vectors", q: memstore.Query{Filter: access.Filter{All: true}, Text: "retension polcy"}, embed: true,
			wantTop: "/memories/workspaces/hr/task.md"},
		{name: "workspace filter", q: memstore.Query{Filter: access.Filter{All: true}, Text: "revenue retention", Workspace: "hr"}, embed: true,
			wantAll: []string{"/memories/workspaces/hr/task.md"}},
		{name: "scope filter", q: memstore.Query{Filter: access.Filter{All: true}, Text: "dates bullet revenue", Scope: memstore.ScopeOrg}, embed: true,
			wantAll: []string{"/memories/org/style.md"}},
		{name: "types filter", q: memstore.Query{Filter: access.Filter{All: true}, Text: "revenue", Types: []string{"output"}}, embed: true,
			wantAll: []string{"/memories/workspaces/sales/output.md"}},
		{name: "invalid and expired hidden", q: memstore.Query{Filter: access.Filter{All: true}, Text: "retention", Workspace: "hr"},
			wantAll: []string{"/memories/workspaces/hr/task.md"}},
		{name: "include invalid", q: memstore.Query{Filter: access.Filter{All: true}, Text: "retention", Workspace: "hr", IncludeInvalid: true},
			wantAll: []string{"/memories/workspaces/hr/task.md", "/memories/workspaces/hr/notes/old.md",
				"/memories/workspaces/hr/notes/temp.md"}},
		{name: "vector only", q: memstore.Query{Filter: access.Filter{All: true}, Text: "exit interviews"}, embed: true,
			wantTop: "/memories/workspaces/hr/task.md"},
		{name: "limit", q: memstore.Query{Filter: access.Filter{All: true}, Text: "revenue retention dates", Limit: 2}, embed: true},
		{name: "no text, no vector", q: memstore.Query{Filter: access.Filter{All: true}, Workspace: "sales"}, wantAll: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.q
			q.Now = now
			if tt.embed {
				vs, _ := emb.Embed(ctx, []string{q.Text})
				q.Vector = vs[0]
			}
			if tt.name == "vector only" {
				q.Text = ""
			}
			hits, err := ix.Search(ctx, q)
			if err != nil {
				t.Fatalf("Search: %v", err)
			}
			got := paths(hits)
			if tt.wantTop != "" && (len(got) == 0 || got[0] != tt.wantTop) {
				t.Errorf("hits = %v, want %s first", got, tt.wantTop)
			}
			if tt.wantAll != nil {
				want := slices.Clone(tt.wantAll)
				sort.Strings(want)
				g := slices.Clone(got)
				sort.Strings(g)
				if !slices.Equal(g, want) && !(len(g) == 0 && len(want) == 0) {
					t.Errorf("hits = %v, want %v", got, tt.wantAll)
				}
			}
			if q.Limit > 0 && len(hits) > q.Limit {
				t.Errorf("%d hits, limit %d", len(hits), q.Limit)
			}
			if tt.textRank1 && hits[0].TextRank != 1 {
				t.Errorf("top hit text rank = %d, want 1", hits[0].TextRank)
			}
		})
	}
}

func TestSearch_UserTextNeverFails(t *testing.T) {
	t.Parallel()
	emb := embedder.NewBuiltin()
	ix, _ := newIndex(t, emb.Dim())
	loadNotes(t, ix, time.Now())
	texts := []string{
		`"`, `'`, `''`, `\`, `&`, `|`, `!`, `!!`, `(`, `)`, `():*`, `a & | b`, `<->`, `<2>`, `-`, `--`,
		`-revenue`, `"unterminated phrase`, `revenue OR`, `or`, `the`, `a an the of`, `:*`, `*`,
		"nul\x00byte", "bad utf8 \xff\xfe", `🙂 émoji naïve`, `DROP TABLE selmem_chunks; --`,
		strings.Repeat("revenue ", 2000), `$1`, `%`, `_`, `user@example.com`, `https://x.y/z?q=1&r=2`,
	}
	for _, text := range texts {
		if _, err := ix.Search(context.Background(), memstore.Query{Filter: access.Filter{All: true}, Text: text}); err != nil {
			t.Errorf("Search(%q): %v", text, err)
		}
	}
	// The table survived the injection attempt and still answers.
	hits, err := ix.Search(context.Background(), memstore.Query{Filter: access.Filter{All: true}, Text: "revenue"})
	if err != nil || len(hits) == 0 {
		t.Errorf("Search(revenue) = %d hits, %v", len(hits), err)
	}
}

// TestSearch_MatchesEmbedded checks that Postgres ranks as the embedded
// index does (memstore.Ranking): the same corpus in both, the same queries
// (exact words, a typo, a word fragment, a word no chunk holds, a
// workspace filter, nonsense under a floor), the same hits with the same
// ranks and fused scores.
func TestSearch_MatchesEmbedded(t *testing.T) {
	t.Parallel()
	const dim = 8
	ix, _ := newIndex(t, dim)
	emb, err := sqliteindex.Open(filepath.Join(t.TempDir(), "index.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	ctx := context.Background()
	st := memstore.IndexState{Embedder: "test", Dim: dim}
	for _, idx := range []memstore.Index{ix, emb} {
		if err := idx.Reset(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	// 40 files of three chunks: "alpha" in every third file, "beta" in
	// every fourth, with repetition varying the scores; neighbours share
	// their scores.
	files := map[string][]memstore.Chunk{}
	for i := range 40 {
		p := fmt.Sprintf("/memories/workspaces/ws%d/n%02d.md", i%2, i)
		for seq := range 3 {
			var text []string
			if i%3 == 0 && seq == 1 {
				text = append(text, strings.Repeat("alpha ", 1+i%5))
			}
			if i%4 == 0 && seq != 1 {
				text = append(text, "beta")
			}
			text = append(text, fmt.Sprintf("filler words here, section %d", seq))
			heading := fmt.Sprintf("Part %d", seq)
			files[p] = append(files[p], memstore.Chunk{Path: p, Seq: seq, Workspace: fmt.Sprintf("ws%d", i%2),
				Scope: memstore.ScopeWorkspace, Type: "note", Heading: heading,
				Context: fmt.Sprintf("ws%d › n%02d.md › %s", i%2, i, heading),
				Text:    strings.Join(text, " "), Embedding: randVec(uint64(100+3*i+seq), dim)})
		}
	}
	for _, idx := range []memstore.BatchIndex{ix, emb} {
		if err := idx.ReplaceMany(ctx, files); err != nil {
			t.Fatal(err)
		}
	}
	// Scores are summed in float32 in the embedded index: compare them
	// within rounding, and ranks exactly.
	ws0 := access.Filter{Workspaces: []string{"ws0"}}
	for _, q := range []memstore.Query{
		{Text: "alpha beta"},
		{Text: "alpha beta", Vector: randVec(7, dim)},
		{Text: "alpah", Vector: randVec(8, dim)},
		{Text: "alph fillers"},
		{Text: "beta zzyzx", Vector: randVec(9, dim)},
		{Text: "beta section", Workspace: "ws1"},
		{Vector: randVec(11, dim)},
		{Vector: randVec(12, dim), Workspace: "ws0"},
		{Text: "qwertyuiop", Vector: randVec(10, dim), MinSimilarity: 2},
		{Text: "qwertyuiop", Vector: randVec(10, dim), MinSimilarity: -1},
		// A principal who may read ws0 only.
		{Text: "alpha beta", Vector: randVec(7, dim), Filter: ws0},
		{Text: "alpah", Vector: randVec(8, dim), Filter: ws0},
		{Vector: randVec(11, dim), Filter: ws0},
		{Text: "beta section", Workspace: "ws1", Filter: ws0},
		{Text: "qwertyuiop", Vector: randVec(10, dim), MinSimilarity: -1, Filter: ws0},
	} {
		if q.Filter.Workspaces == nil {
			q.Filter.All = true
		}
		q.Limit, q.Candidates = 40, 20
		want, err := emb.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ix.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		type row struct {
			Key               string
			TextRank, VecRank int
		}
		rows := func(hs []memstore.Hit) []row {
			var out []row
			for _, h := range hs {
				out = append(out, row{fmt.Sprintf("%s#%d", h.Path, h.Seq), h.TextRank, h.VectorRank})
			}
			return out
		}
		if diff := cmp.Diff(rows(want), rows(got)); diff != "" {
			t.Errorf("%q (vector %t, workspace %q): Postgres differs from the embedded index (-embedded +postgres):\n%s",
				q.Text, q.Vector != nil, q.Workspace, diff)
			continue
		}
		for i := range got {
			if math.Abs(got[i].Score-want[i].Score) > 1e-9 {
				t.Errorf("%q: %s#%d score %v, embedded %v", q.Text, got[i].Path, got[i].Seq, got[i].Score, want[i].Score)
			}
		}
	}
}

func TestSearch_TiesByPathSeq(t *testing.T) {
	t.Parallel()
	const dim = 4
	ix, _ := newIndex(t, dim)
	ctx := context.Background()
	v := randVec(1, dim)
	// Identical chunks in several files: equal scores, so order is path, seq.
	for _, p := range []string{"/memories/c.md", "/memories/a.md", "/memories/b.md"} {
		cs := []memstore.Chunk{
			{Path: p, Seq: 1, Text: "same words", Embedding: v},
			{Path: p, Seq: 0, Text: "same words", Embedding: v},
		}
		if err := ix.Replace(ctx, p, cs); err != nil {
			t.Fatal(err)
		}
	}
	hits, err := ix.Search(ctx, memstore.Query{Filter: access.Filter{All: true}, Text: "same words", Vector: v})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, fmt.Sprintf("%s#%d", h.Path, h.Seq))
	}
	want := []string{"/memories/a.md#0", "/memories/a.md#1", "/memories/b.md#0", "/memories/b.md#1",
		"/memories/c.md#0", "/memories/c.md#1"}
	if !slices.Equal(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
}

// TestSearch_WorkspaceChunkOutsideItsDirectory checks the safety net of a
// workspace-filtered search: a chunk of the workspace stored outside the
// workspace's directory (another access zone) is read only in the other
// zones' short windows, which do not count in the bounds. Here it is the
// only chunk holding both query words, but only its common word's window
// in the other zones reaches it; its rare word's postings in the
// workspace's zone were all read (so that window has no cut) and those in
// other zones are led by chunks of another workspace. Its BM25F must
// still count both words: with one candidate scored exactly, it is the
// top hit only if the rare word is looked up for it too.
func TestSearch_WorkspaceChunkOutsideItsDirectory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t, pgtest.DSN(t))
	ix, err := New(pool, &Options{Dim: 4, TextPool: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	const stray = "/memories/notes/stray.md"
	type doc struct{ path, ws, text string }
	docs := []doc{{stray, "ws1", "quokka beta beta beta"}}
	filler := strings.Repeat(" lorem ipsum dolor", 4)
	// The rare word's chunks apart, so that no two of them are written
	// one after the other (candidates are picked with their neighbours by
	// id).
	for i := range 20 {
		docs = append(docs, doc{fmt.Sprintf("/memories/workspaces/ws1/b%02d.md", i), "ws1", "beta" + filler})
		if i%5 == 4 && i < 15 {
			docs = append(docs, doc{fmt.Sprintf("/memories/workspaces/ws1/q%d.md", i/5), "ws1", "quokka" + filler})
		}
	}
	for i := range 5 {
		docs = append(docs, doc{fmt.Sprintf("/memories/workspaces/ws2/q%d.md", i), "ws2", "quokka quokka quokka"})
	}
	for i, d := range docs {
		c := memstore.Chunk{Path: d.path, Workspace: d.ws, Scope: memstore.ScopeWorkspace, Type: "note",
			Text: d.text, StartLine: 1, EndLine: 1, Embedding: randVec(uint64(i), 4)}
		if err := ix.Replace(ctx, d.path, []memstore.Chunk{c}); err != nil {
			t.Fatal(err)
		}
	}
	if access.ZoneOf(stray) == workspaceZone("ws1") {
		t.Fatalf("%s is in ws1's zone; the test needs it outside", stray)
	}
	hits, err := ix.Search(ctx, memstore.Query{Filter: access.Filter{All: true}, Text: "quokka beta",
		Workspace: "ws1", Limit: 1, Candidates: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(hits); !slices.Equal(got, []string{stray}) {
		t.Errorf("hits = %v, want [%s]", got, stray)
	}
}

// planIndexes returns the names of the indexes a plan (EXPLAIN (ANALYZE,
// FORMAT JSON)) scans, in the nodes that ran.
func planIndexes(plan any, into map[string]bool) {
	switch p := plan.(type) {
	case map[string]any:
		if loops, ok := p["Actual Loops"].(float64); ok && loops == 0 {
			return // never executed: a branch its one-time filter skipped
		}
		if name, ok := p["Index Name"].(string); ok {
			into[name] = true
		}
		for _, v := range p {
			planIndexes(v, into)
		}
	case []any:
		for _, v := range p {
			planIndexes(v, into)
		}
	}
}

// TestSearch_ExplainUsesIndexes runs EXPLAIN (ANALYZE) of the search
// statement, with the same session settings as Search, on a corpus large
// enough for the planner to choose both the postings and the HNSW index on its
// own: enable_seqscan is left on. Only the nodes that ran count: the generic
// plan holds every branch.
func TestSearch_ExplainUsesIndexes(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 20,000 chunks")
	}
	t.Parallel()
	const dim, n = 32, 20000
	ix, pool := newIndex(t, dim)
	bulkLoad(t, ix, n, dim)

	// Each query holds a word the index lacks, so that the vector ranking
	// runs (Ranking.UnknownVectorWeight).
	tests := []struct {
		name      string
		q         memstore.Query
		want, not []string
	}{
		{"unfiltered", memstore.Query{Filter: access.Filter{All: true}, Text: "uniq123 uniq4567 zzyzx", Vector: randVec(99, dim)},
			[]string{textIndexName, vectorIndexName}, nil},
		// A workspace of 2,500 chunks: its vectors are compared one by
		// one (exactNearest), not through the HNSW index.
		{"workspace filter", memstore.Query{Filter: access.Filter{All: true}, Text: "uniq123 revenue zzyzx", Vector: randVec(98, dim), Workspace: "ws3"},
			[]string{zoneIndexName, "selmem_chunks_workspace_idx"}, []string{vectorIndexName}},
		// A principal who may read one workspace in eight: the postings
		// are read zone by zone.
		{"access filter", memstore.Query{Filter: access.Filter{Workspaces: []string{"ws3"}, User: "vic"}, Text: "uniq123 revenue zzyzx", Vector: randVec(97, dim)},
			[]string{zoneIndexName, vectorIndexName}, nil},
	}
	// Within the workspace, the nearest chunks are the exact ones.
	t.Run("workspace vectors exact", func(t *testing.T) {
		q := randVec(96, dim)
		type near struct {
			key  string
			dist float64
		}
		var all []near
		for i := 3; i < n; i += 8 {
			all = append(all, near{fmt.Sprintf("/memories/workspaces/ws3/f%d.md#%d", i/10, i%10), cosineDistance(randVec(uint64(i), dim), q)})
		}
		sort.Slice(all, func(i, j int) bool { return all[i].dist < all[j].dist })
		var want []string
		for _, x := range all[:10] {
			want = append(want, x.key)
		}
		hits, err := ix.Search(context.Background(), memstore.Query{Filter: access.Filter{All: true}, Vector: q,
			Workspace: "ws3", Limit: 10, MinSimilarity: -1})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, fmt.Sprintf("%s#%d", h.Path, h.Seq))
		}
		if !slices.Equal(got, want) {
			t.Errorf("nearest in ws3 %v, want %v", got, want)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := explain(t, ix, pool, tt.q)
			used := map[string]bool{}
			planIndexes(plan, used)
			t.Logf("indexes used: %v", used)
			for _, want := range tt.want {
				if !used[want] {
					b, _ := json.MarshalIndent(plan, "", " ")
					t.Errorf("plan does not use %s; indexes used: %v\n%s", want, used, b)
				}
			}
			for _, not := range tt.not {
				if used[not] {
					t.Errorf("plan uses %s; indexes used: %v", not, used)
				}
			}
			hits, err := ix.Search(context.Background(), tt.q)
			if err != nil || len(hits) == 0 {
				t.Errorf("Search = %d hits, %v", len(hits), err)
			}
		})
	}
}

// explain returns EXPLAIN (ANALYZE, FORMAT JSON) of q's search statement run
// with Search's transaction settings.
func explain(t *testing.T, ix *Index, pool *pgxpool.Pool, q memstore.Query) any {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	args, _ := ix.searchArgs(q)
	if err := ix.setSession(ctx, tx, args[10].(int)); err != nil {
		t.Fatal(err)
	}
	var out []byte
	if err := tx.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+searchSQL, args...).Scan(&out); err != nil {
		t.Fatalf("explain: %v", err)
	}
	var plan any
	if err := json.Unmarshal(out, &plan); err != nil {
		t.Fatal(err)
	}
	return plan
}

// TestIndex_SurvivesRestart stops Postgres under a live pool: operations
// fail promptly with ErrUnavailable instead of hanging, and succeed again
// once the server is back.
func TestIndex_SurvivesRestart(t *testing.T) {
	t.Parallel()
	c := pgtest.NewCluster(t)
	pool := newPool(t, c.NewDatabase(t))
	const timeout = 2 * time.Second
	ix, err := New(pool, &Options{Dim: 4, QueryTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v := randVec(1, 4)
	if err := ix.Replace(ctx, "/memories/a.md", []memstore.Chunk{{Path: "/memories/a.md", Text: "kept", Embedding: v}}); err != nil {
		t.Fatal(err)
	}
	q := memstore.Query{Filter: access.Filter{All: true}, Text: "kept", Vector: v}
	if _, err := ix.Search(ctx, q); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	c.Stop(t)
	t.Logf("stopped in %v", time.Since(start).Round(time.Millisecond))
	ops := []struct {
		name string
		do   func() error
	}{
		{"Search", func() error { _, err := ix.Search(ctx, q); return err }},
		{"State", func() error { _, err := ix.State(ctx); return err }},
		{"Replace", func() error { return ix.Replace(ctx, "/memories/b.md", nil) }},
	}
	for _, op := range ops {
		start := time.Now()
		err := op.do()
		elapsed := time.Since(start)
		t.Logf("%s during outage: %v after %v", op.name, err, elapsed.Round(time.Millisecond))
		if elapsed > timeout+time.Second {
			t.Errorf("%s during outage took %v, want within the %v deadline", op.name, elapsed, timeout)
		}
		if err == nil {
			t.Errorf("%s during outage succeeded", op.name)
		} else if !errors.Is(err, ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s during outage: %v, want ErrUnavailable or a deadline", op.name, err)
		}
	}

	start = time.Now()
	c.Restart(t)
	t.Logf("restarted in %v", time.Since(start).Round(time.Millisecond))
	hits, err := ix.Search(ctx, q)
	if err != nil {
		t.Fatalf("Search after restart: %v", err)
	}
	if len(hits) != 1 || hits[0].Path != "/memories/a.md" {
		t.Errorf("Search after restart = %v, want /memories/a.md", paths(hits))
	}
}

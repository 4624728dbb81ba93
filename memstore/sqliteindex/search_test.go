package sqliteindex_test

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	_ "modernc.org/sqlite"

	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

func TestSearch_AllWordsFirst(t *testing.T) {
	ctx := context.Background()
	idx := openTemp(t)
	defer idx.Close()
	if err := idx.Reset(ctx, memstore.IndexState{Embedder: "none"}); err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{
		"/memories/org/a.md": "Invoices invoices invoices: the invoice rules.",
		"/memories/org/b.md": "Invoices are archived after ten years.",
		"/memories/org/c.md": "Archived records are read-only.",
	}
	for p, text := range texts {
		if err := idx.Replace(ctx, p, []memstore.Chunk{{Path: p, Scope: memstore.ScopeOrg, Type: "note", Text: text}}); err != nil {
			t.Fatal(err)
		}
	}
	hits, err := idx.Search(ctx, memstore.Query{Text: "archived invoices"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h.Path)
	}
	// b holds both words; a holds "invoices" more often than c "archived",
	// but each holds only one.
	if want := []string{"/memories/org/b.md", "/memories/org/a.md", "/memories/org/c.md"}; !slices.Equal(got, want) {
		t.Errorf("hits %v, want %v", got, want)
	}
}

// TestSearch_TextRanking checks the full-text ranking against its definition:
// more distinct query words first, then the bm25() of the OR of the words,
// then path and seq.
func TestSearch_TextRanking(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	idx, err := sqliteindex.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if err := idx.Reset(ctx, memstore.IndexState{Embedder: "none"}); err != nil {
		t.Fatal(err)
	}
	// Words the porter stemmer leaves alone.
	words := strings.Fields("kilo lima oscar tango delta zulu echo golf hotel india")
	r := rand.New(rand.NewPCG(5, 6))
	text := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[r.IntN(len(words))]
		}
		return strings.Join(ws, " ")
	}
	for f := range 60 {
		p := fmt.Sprintf("/memories/workspaces/ws%d/f%02d.md", f%3, f)
		var chunks []memstore.Chunk
		for seq := range 3 {
			chunks = append(chunks, memstore.Chunk{Path: p, Seq: seq, Workspace: fmt.Sprintf("ws%d", f%3),
				Scope: memstore.ScopeWorkspace, Type: "note", Heading: text(1), Text: text(2 + r.IntN(8))})
		}
		if err := idx.Replace(ctx, p, chunks); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for range 40 {
		query := strings.Fields(text(1 + r.IntN(5)))
		q := memstore.Query{Text: strings.Join(query, " "), Limit: 200, Candidates: 200}
		if r.IntN(2) == 0 {
			q.Workspace = "ws1"
		}
		hits, err := idx.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, fmt.Sprintf("%s#%d", h.Path, h.Seq))
		}
		if diff := gocmp.Diff(wantTextRanking(t, db, query, q.Workspace), got); diff != "" {
			t.Errorf("Search(%q, workspace %q) (-want +got):\n%s", q.Text, q.Workspace, diff)
		}
	}
}

// wantTextRanking ranks the chunks of workspace ("" for all) containing any
// of words by definition.
func wantTextRanking(t *testing.T, db *sql.DB, words []string, workspace string) []string {
	t.Helper()
	var terms []string
	for _, w := range words {
		if !slices.Contains(terms, w) {
			terms = append(terms, w)
		}
	}
	rows, err := db.Query(`SELECT c.path, c.seq, c.heading || ' ' || c.context || ' ' || c.text, bm25(chunks_fts, 3, 1, 1)
		FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid
		WHERE chunks_fts MATCH ? AND (? = '' OR c.workspace = ?)`, strings.Join(terms, " OR "), workspace, workspace)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type match struct {
		path       string
		seq, level int
		text       string
		bm25       float64
	}
	var ms []match
	for rows.Next() {
		var m match
		if err := rows.Scan(&m.path, &m.seq, &m.text, &m.bm25); err != nil {
			t.Fatal(err)
		}
		have := strings.Fields(m.text)
		for _, w := range terms {
			if slices.Contains(have, w) {
				m.level++
			}
		}
		ms = append(ms, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(ms, func(a, b match) int {
		return cmp.Or(cmp.Compare(b.level, a.level), cmp.Compare(a.bm25, b.bm25), strings.Compare(a.path, b.path), cmp.Compare(a.seq, b.seq))
	})
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("%s#%d", m.path, m.seq))
	}
	return out
}

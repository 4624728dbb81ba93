package pgindex

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/selmem/selmem/internal/pgtest"
	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/embedder"
	"github.com/selmem/selmem/memstore/sqliteindex"
)

// TestStore_PostgresOutage runs a store on Postgres with the embedded index
// as its local fallback, and stops and restarts the cluster mid-run: writes
// keep committing, searches come from the fallback and say so, and the
// Postgres mirror catches up when the database returns. The store also
// opens while Postgres is down.
func TestStore_PostgresOutage(t *testing.T) {
	cluster := pgtest.NewCluster(t)
	dsn := cluster.NewDatabase(t)
	ctx := context.Background()
	emb := embedder.NewBuiltin()
	home := t.TempDir()
	open := func() (*memstore.Store, *Lazy) {
		t.Helper()
		local, err := sqliteindex.Open(filepath.Join(home, "index.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { local.Close() })
		pg := Open(newPool(t, dsn), &Options{Dim: emb.Dim()})
		s, err := memstore.Open(ctx, home, &memstore.Options{Index: pg, Fallback: local, Embedder: emb})
		if err != nil {
			t.Fatalf("open store: %v", err)
		}
		t.Cleanup(func() { s.Close(ctx) })
		return s, pg
	}
	search := func(s *memstore.Store, q string) memstore.SearchResult {
		t.Helper()
		res, err := s.Search(ctx, memstore.SearchRequest{Query: q, Limit: 3})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		if len(res.Hits) == 0 {
			t.Fatalf("search %q: no hits", q)
		}
		return res
	}
	p := "/memories/workspaces/ops/task.md"

	s, _ := open()
	if _, err := s.Create(ctx, p, "# Task\n\n- Escalate incidents after 30 minutes.\n", nil); err != nil {
		t.Fatal(err)
	}
	if res := search(s, "escalate incidents"); res.Degraded != "" {
		t.Fatalf("before the outage: degraded %q", res.Degraded)
	}

	cluster.Stop(t)
	if _, err := s.StrReplace(ctx, p, "30 minutes", "15 minutes", nil); err != nil {
		t.Fatalf("write while Postgres is down: %v", err)
	}
	res := search(s, "escalate incidents 15 minutes")
	if res.Degraded == "" || !strings.Contains(res.Hits[0].Text, "15 minutes") {
		t.Fatalf("during the outage: degraded %q, first hit %q", res.Degraded, res.Hits[0].Text)
	}
	// A second server starts while Postgres is down.
	s.Close(ctx)
	s, pg := open()
	if res := search(s, "escalate incidents"); res.Degraded == "" {
		t.Errorf("opened during the outage: search not marked degraded")
	}

	cluster.Restart(t)
	res = search(s, "escalate incidents 15 minutes")
	if res.Degraded != "" || !strings.Contains(res.Hits[0].Text, "15 minutes") {
		t.Fatalf("after the outage: degraded %q, first hit %q", res.Degraded, res.Hits[0].Text)
	}
	st, err := pg.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if head, _ := s.Head(); st.Commit != head {
		t.Errorf("Postgres mirror at %s, HEAD at %s", st.Commit, head)
	}
}

// TestStore_ReindexOnPostgres rebuilds a store's Postgres mirror: the
// files are loaded with the search indexes dropped, and both indexes exist
// again afterwards, with every file searchable.
func TestStore_ReindexOnPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	emb := embedder.NewBuiltin()
	ix, pool := newIndex(t, emb.Dim())
	s, err := memstore.Open(ctx, t.TempDir(), &memstore.Options{Index: ix, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(ctx) })
	const files = 40
	for i := range files {
		p := fmt.Sprintf("/memories/workspaces/ops/runbook%02d.md", i)
		if _, err := s.Create(ctx, p, fmt.Sprintf("# Runbook %d\n\n- Page team%d before restarting shard%d.\n", i, i, i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Reindex(ctx, nil); err != nil {
		t.Fatalf("Reindex: %v", err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE tablename IN ('selmem_chunks', 'selmem_postings')
		AND indexname IN ($1, $2) AND schemaname = $3`, textIndexName, vectorIndexName, ix.Schema()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("%d search indexes after Reindex, want 2", n)
	}
	for _, i := range []int{0, 17, files - 1} {
		q := fmt.Sprintf("page team%d shard%d", i, i)
		res, err := s.Search(ctx, memstore.SearchRequest{Query: q, Limit: 1})
		want := fmt.Sprintf("/memories/workspaces/ops/runbook%02d.md", i)
		if err != nil || len(res.Hits) != 1 || res.Hits[0].Path != want {
			t.Errorf("Search(%q) = %+v, %v; want %s", q, res.Hits, err, want)
		}
	}
}

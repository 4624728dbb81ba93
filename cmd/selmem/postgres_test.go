package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/selmem/selmem/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestCLI_ReindexPostgres rebuilds the demo workspace's index in a real
// Postgres with `selmem reindex --backend postgres`: the chunks are there
// afterwards with both search indexes, and searches answer from Postgres.
func TestCLI_ReindexPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	home := t.TempDir()
	if code, _, stderr := cli(t, home, "", "init", "--demo"); code != exitOK {
		t.Fatalf("init --demo: exit %d: %s", code, stderr)
	}
	t.Setenv("SELMEM_TEST_PG_DSN", dsn)
	conf := "index:\n  backend: postgres\n  dsn_env: SELMEM_TEST_PG_DSN\n  build_memory: 64MB\n  schema: demo_team\n"
	if err := os.WriteFile(filepath.Join(home, "selmem.yaml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cli(t, home, "", "reindex", "--backend", "postgres")
	if code != exitOK || !strings.Contains(stdout, "Reindexed 6 files") {
		t.Fatalf("reindex --backend postgres: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var chunks, indexes int
	// index.schema names the schema holding the index.
	err = conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM demo_team.selmem_chunks),
		(SELECT count(*) FROM pg_indexes WHERE tablename IN ('selmem_chunks', 'selmem_postings') AND schemaname = 'demo_team'
			AND indexname IN ('selmem_postings_impact_idx', 'selmem_chunks_embedding_idx'))`).Scan(&chunks, &indexes)
	if err != nil {
		t.Fatal(err)
	}
	if chunks == 0 || indexes != 2 {
		t.Errorf("after reindex: %d chunks, %d search indexes; want some chunks and 2 indexes", chunks, indexes)
	}

	code, stdout, stderr = cli(t, home, "", "search", "revenue", "--workspace", "demo")
	if code != exitOK || !strings.Contains(stdout, "/memories/workspaces/demo/") || strings.Contains(stdout+stderr, "fallback") {
		t.Errorf("search: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}

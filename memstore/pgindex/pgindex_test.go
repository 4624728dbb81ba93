package pgindex

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/selmem/selmem/internal/pgtest"
	"github.com/selmem/selmem/memstore"
	"github.com/selmem/selmem/memstore/access"
)

func TestNew_InvalidOptions(t *testing.T) {
	t.Parallel()
	pool := newPool(t, pgtest.DSN(t))
	tests := []struct {
		name string
		pool *pgxpool.Pool
		opts *Options
	}{
		{"nil pool", nil, &Options{Dim: 8}},
		{"nil options", pool, nil},
		{"zero dim", pool, &Options{}},
		{"negative dim", pool, &Options{Dim: -1}},
		{"ef_construction below 2m", pool, &Options{Dim: 8, HNSWM: 16, HNSWEfConstruction: 20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.pool, tt.opts)
			if !errors.Is(err, memstore.ErrInvalid) {
				t.Errorf("New() error = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestMigrate_ConcurrentServers(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	pools := []*pgxpool.Pool{newPool(t, dsn), newPool(t, dsn)}
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(pools))
	for _, p := range pools {
		for range 2 { // each server starts twice
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := New(p, &Options{Dim: 16})
				errs <- err
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("New: %v", err)
		}
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	checks := []struct {
		name string
		sql  string
		want int
	}{
		{"migrations recorded", "SELECT count(*) FROM selmem_schema_migrations", len(ms)},
		{"chunks tables", "SELECT count(*) FROM pg_tables WHERE tablename = 'selmem_chunks'", 1},
		{"embedding columns", `SELECT count(*) FROM pg_attribute WHERE attrelid = 'selmem_chunks'::regclass
			AND attname = 'embedding' AND NOT attisdropped`, 1},
		{"embedding dim", `SELECT atttypmod FROM pg_attribute WHERE attrelid = 'selmem_chunks'::regclass
			AND attname = 'embedding' AND NOT attisdropped`, 16},
		{"hnsw index", `SELECT count(*) FROM pg_indexes WHERE indexname = 'selmem_chunks_embedding_idx'
			AND indexdef LIKE '%hnsw%halfvec_cosine_ops%'`, 1},
		{"impact index", `SELECT count(*) FROM pg_indexes WHERE indexname = 'selmem_postings_impact_idx'`, 1},
	}
	for _, c := range checks {
		var got int
		if err := pools[0].QueryRow(ctx, c.sql).Scan(&got); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != c.want {
			t.Errorf("%s = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestMigrations_Embedded(t *testing.T) {
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 || ms[0].Version != 1 || ms[0].Name != "init" {
		t.Fatalf("migrations = %+v, want 001_init first", ms)
	}
	for i := 1; i < len(ms); i++ {
		if ms[i].Version <= ms[i-1].Version {
			t.Errorf("migration %d out of order", ms[i].Version)
		}
	}
}

// fileChunks returns n chunks of path, with vectors randVec(seed+i).
func fileChunks(path string, n int, seed uint64, dim int) []memstore.Chunk {
	cs := make([]memstore.Chunk, n)
	for i := range cs {
		cs[i] = memstore.Chunk{
			Path: path, Seq: i, Scope: memstore.ScopeOther, Type: "note",
			Text: "chunk text", Embedding: randVec(seed+uint64(i), dim),
		}
	}
	return cs
}

func TestIndex_ReplaceAndDeletePath(t *testing.T) {
	t.Parallel()
	const dim = 8
	ix, pool := newIndex(t, dim)
	ctx := context.Background()
	files := map[string]int{
		"/memories/notes/a.md":         3,
		"/memories/dir/c.md":           2,
		"/memories/dir/sub/d.md":       2,
		"/memories/dirx/e.md":          1,
		"/memories/dir.md":             1,
		"/memories/workspaces/w/b.md":  4,
		"/memories/workspaces/w/b.md~": 1,
	}
	for p, n := range files {
		if err := ix.Replace(ctx, p, fileChunks(p, n, 1, dim)); err != nil {
			t.Fatalf("Replace(%s): %v", p, err)
		}
	}
	steps := []struct {
		name   string
		do     func() error
		path   string
		want   int
		others int // rows left in the whole table
	}{
		{"replace shrinks", func() error {
			return ix.Replace(ctx, "/memories/notes/a.md", fileChunks("/memories/notes/a.md", 1, 9, dim))
		}, "/memories/notes/a.md", 1, 12},
		{"replace is idempotent", func() error {
			return ix.Replace(ctx, "/memories/notes/a.md", fileChunks("/memories/notes/a.md", 1, 9, dim))
		}, "/memories/notes/a.md", 1, 12},
		{"empty replace removes", func() error {
			return ix.Replace(ctx, "/memories/notes/a.md", nil)
		}, "/memories/notes/a.md", 0, 11},
		{"delete directory", func() error {
			return ix.DeletePath(ctx, "/memories/dir")
		}, "/memories/dir/%", 0, 7},
		{"directory delete spares siblings", func() error { return nil }, "/memories/dirx/e.md", 1, 7},
		{"directory delete spares same-prefix file", func() error { return nil }, "/memories/dir.md", 1, 7},
		{"delete file", func() error {
			return ix.DeletePath(ctx, "/memories/workspaces/w/b.md")
		}, "/memories/workspaces/w/b.md", 0, 3},
		{"delete missing path", func() error {
			return ix.DeletePath(ctx, "/memories/nothing")
		}, "/memories/nothing", 0, 3},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := count(t, pool, "path LIKE $1", s.path); got != s.want {
			t.Errorf("%s: %d rows for %s, want %d", s.name, got, s.path, s.want)
		}
		if got := count(t, pool, "true"); got != s.others {
			t.Errorf("%s: %d rows in all, want %d", s.name, got, s.others)
		}
	}
}

func TestIndex_ReplaceInvalid(t *testing.T) {
	t.Parallel()
	const dim = 8
	ix, pool := newIndex(t, dim)
	ctx := context.Background()
	const p = "/memories/notes/a.md"
	if err := ix.Replace(ctx, p, fileChunks(p, 2, 1, dim)); err != nil {
		t.Fatal(err)
	}
	wrongDim := fileChunks(p, 3, 1, dim)
	wrongDim[2].Embedding = randVec(3, dim+1)
	tests := []struct {
		name   string
		path   string
		chunks []memstore.Chunk
	}{
		{"empty path", "", nil},
		{"chunk of another path", p, fileChunks("/memories/other.md", 1, 1, dim)},
		{"wrong dimension", p, wrongDim},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ix.Replace(ctx, tt.path, tt.chunks)
			if !errors.Is(err, memstore.ErrInvalid) {
				t.Errorf("Replace() error = %v, want ErrInvalid", err)
			}
			if got, want := count(t, pool, "path = $1", p), 2; got != want {
				t.Errorf("after failed Replace: %d rows, want %d (unchanged)", got, want)
			}
		})
	}
}

func TestIndex_RoundTripFields(t *testing.T) {
	t.Parallel()
	const dim = 8
	ix, _ := newIndex(t, dim)
	ctx := context.Background()
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	want := memstore.Chunk{
		Path: "/memories/workspaces/sales/task.md", Seq: 2, Workspace: "sales",
		Scope: memstore.ScopeWorkspace, Type: "task", Heading: "Rules › Dates",
		StartLine: 10, EndLine: 14, Context: "sales › task.md › Rules › Dates",
		Text: "Fiscal year starts in February.", Source: "user_confirmed", Confidence: 0.9,
		ValidFrom: at("2025-01-02T03:04:05Z"), ExpiresAt: at("2099-01-01T00:00:00Z"),
		Commit: "abc123", Embedding: randVec(42, dim),
	}
	if err := ix.Replace(ctx, want.Path, []memstore.Chunk{want}); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search(ctx, memstore.Query{Filter: access.Filter{All: true}, Text: "fiscal february", Vector: want.Embedding})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 {
		t.Fatalf("got %d hits, want 1", len(hits))
	}
	got := hits[0].Chunk
	want.Embedding = nil
	if !got.ValidFrom.Equal(want.ValidFrom) || !got.ExpiresAt.Equal(want.ExpiresAt) || !got.InvalidAt.IsZero() {
		t.Errorf("times = %v %v %v, want %v %v zero", got.ValidFrom, got.ExpiresAt, got.InvalidAt,
			want.ValidFrom, want.ExpiresAt)
	}
	got.ValidFrom, got.ExpiresAt = want.ValidFrom, want.ExpiresAt
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hit chunk (-want +got):\n%s", diff)
	}
	// Every word is known: the vector ranking counts only when
	// Ranking.VectorWeight does.
	wantVec := 0
	if memstore.DefaultRanking().VectorWeight > 0 {
		wantVec = 1
	}
	if hits[0].TextRank != 1 || hits[0].VectorRank != wantVec {
		t.Errorf("ranks = %d, %d, want 1, %d", hits[0].TextRank, hits[0].VectorRank, wantVec)
	}
}

func TestIndex_StateAndReset(t *testing.T) {
	t.Parallel()
	const dim = 8
	ix, pool := newIndex(t, dim)
	ctx := context.Background()

	st, err := ix.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st != (memstore.IndexState{}) {
		t.Errorf("initial State() = %+v, want zero", st)
	}
	want := memstore.IndexState{Commit: "c1", Embedder: "test-8", Dim: dim}
	if err := ix.SetState(ctx, want); err != nil {
		t.Fatal(err)
	}
	want.Commit = "c2"
	if err := ix.SetState(ctx, want); err != nil {
		t.Fatal(err)
	}
	if st, err = ix.State(ctx); err != nil || st != want {
		t.Errorf("State() = %+v, %v, want %+v", st, err, want)
	}
	if err := ix.Replace(ctx, "/memories/a.md", fileChunks("/memories/a.md", 3, 1, dim)); err != nil {
		t.Fatal(err)
	}

	colDim := func() int {
		var d int
		if err := pool.QueryRow(ctx, `SELECT atttypmod FROM pg_attribute WHERE attrelid = 'selmem_chunks'::regclass
			AND attname = 'embedding' AND NOT attisdropped`).Scan(&d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	steps := []struct {
		name string
		st   memstore.IndexState
	}{
		{"same dimension", memstore.IndexState{Commit: "c3", Embedder: "test-8", Dim: dim}},
		{"new dimension", memstore.IndexState{Commit: "", Embedder: "test-12", Dim: 12}},
		{"zero dimension keeps column", memstore.IndexState{Commit: "c4", Embedder: "x"}},
	}
	wantDim := dim
	for _, s := range steps {
		if err := ix.Reset(ctx, s.st); err != nil {
			t.Fatalf("%s: Reset: %v", s.name, err)
		}
		if s.st.Dim > 0 {
			wantDim = s.st.Dim
		}
		if got := count(t, pool, "true"); got != 0 {
			t.Errorf("%s: %d chunks after Reset, want 0", s.name, got)
		}
		if got := colDim(); got != wantDim {
			t.Errorf("%s: column dim = %d, want %d", s.name, got, wantDim)
		}
		if st, err := ix.State(ctx); err != nil || st != s.st {
			t.Errorf("%s: State() = %+v, %v, want %+v", s.name, st, err, s.st)
		}
	}
	// The new dimension is in force for writes and searches.
	if err := ix.Replace(ctx, "/memories/a.md", fileChunks("/memories/a.md", 1, 1, dim)); !errors.Is(err, memstore.ErrInvalid) {
		t.Errorf("Replace with old dimension: %v, want ErrInvalid", err)
	}
	if err := ix.Replace(ctx, "/memories/a.md", fileChunks("/memories/a.md", 2, 1, 12)); err != nil {
		t.Errorf("Replace with new dimension: %v", err)
	}
	hits, err := ix.Search(ctx, memstore.Query{Filter: access.Filter{All: true}, Vector: randVec(1, 12)})
	if err != nil || len(hits) != 2 || hits[0].Seq != 0 {
		t.Errorf("Search after dimension change = %d hits, %v; want 2, seq 0 first", len(hits), err)
	}
	if _, err := ix.Search(ctx, memstore.Query{Filter: access.Filter{All: true}, Vector: randVec(1, dim)}); !errors.Is(err, memstore.ErrInvalid) {
		t.Errorf("Search with old dimension: %v, want ErrInvalid", err)
	}
}

func TestIndex_ConcurrentReplaceSamePath(t *testing.T) {
	t.Parallel()
	const dim = 8
	ix, pool := newIndex(t, dim)
	ctx := context.Background()
	const p = "/memories/race.md"
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := ix.Replace(ctx, p, fileChunks(p, 1+i%4, uint64(i), dim)); err != nil {
				t.Errorf("Replace: %v", err)
			}
		}()
	}
	wg.Wait()
	// Whichever Replace ran last, its chunks are the complete set: seqs 0..n-1.
	var n, maxSeq int
	if err := pool.QueryRow(ctx, "SELECT count(*), max(seq) FROM selmem_chunks WHERE path = $1", p).Scan(&n, &maxSeq); err != nil {
		t.Fatal(err)
	}
	if maxSeq != n-1 {
		t.Errorf("rows = %d with max seq %d: a mix of Replace calls survived", n, maxSeq)
	}
}

func TestTranslate_NoConnectionDetails(t *testing.T) {
	t.Parallel()
	cfg, err := pgxpool.ParseConfig("host=127.0.0.1 port=1 user=secretuser password=hunter2 dbname=secretdb connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	_, err = New(pool, &Options{Dim: 4, QueryTimeout: 2 * time.Second})
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("New against a closed port: %v, want ErrUnavailable", err)
	}
	for _, secret := range []string{"secretuser", "hunter2", "secretdb", "127.0.0.1"} {
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("error %q reveals %q", err, secret)
		}
	}
}

func TestVersionAtLeast(t *testing.T) {
	tests := []struct {
		v    string
		want bool
	}{
		{"0.8.0", true}, {"0.8", true}, {"0.10.1", true}, {"1.0.0", true},
		{"0.7.4", false}, {"0.5", false}, {"", false}, {"x.y", false},
	}
	for _, tt := range tests {
		if got := versionAtLeast(tt.v, 0, 8); got != tt.want {
			t.Errorf("versionAtLeast(%q, 0, 8) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

// TestIndex_WithoutAfterConnect checks that vectors also work as text, for
// pools created without AfterConnect, and that ReplaceMany's COPY, which
// needs pgvector's types, registers them itself.
func TestIndex_WithoutAfterConnect(t *testing.T) {
	t.Parallel()
	cfg, err := pgxpool.ParseConfig(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	ix, err := New(pool, &Options{Dim: 4})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v := randVec(5, 4)
	if err := ix.Replace(ctx, "/memories/a.md", []memstore.Chunk{{Path: "/memories/a.md", Text: "plain", Embedding: v}}); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search(ctx, memstore.Query{Filter: access.Filter{All: true}, Vector: v})
	if err != nil || len(hits) != 1 || hits[0].VectorRank != 1 {
		t.Errorf("Search = %+v, %v; want one vector hit", hits, err)
	}
	w := randVec(6, 4)
	err = ix.ReplaceMany(ctx, map[string][]memstore.Chunk{"/memories/b.md": {{Path: "/memories/b.md", Text: "copied", Embedding: w}}})
	if err != nil {
		t.Fatalf("ReplaceMany: %v", err)
	}
	hits, err = ix.Search(ctx, memstore.Query{Filter: access.Filter{All: true}, Vector: w, Limit: 1})
	if err != nil || len(hits) != 1 || hits[0].Path != "/memories/b.md" {
		t.Errorf("Search after ReplaceMany = %+v, %v; want /memories/b.md first", hits, err)
	}
}

// TestMigrate_ConvertsVectorColumn checks that an index whose embeddings an
// earlier version stored as vector(dim) is converted to halfvec(dim) by New,
// keeping its chunks and their vectors, with the HNSW index rebuilt.
func TestMigrate_ConvertsVectorColumn(t *testing.T) {
	t.Parallel()
	ix, pool := newIndex(t, 8)
	ctx := context.Background()
	v := randVec(11, 8)
	if err := ix.Replace(ctx, "/memories/old.md", []memstore.Chunk{{Path: "/memories/old.md", Text: "kept", Embedding: v}}); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		"DROP INDEX " + vectorIndexName,
		"ALTER TABLE selmem_chunks ALTER COLUMN embedding TYPE vector(8) USING embedding::vector(8)",
		"CREATE INDEX " + vectorIndexName + " ON selmem_chunks USING hnsw (embedding vector_cosine_ops)",
	} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	ix, err := New(pool, &Options{Dim: 8})
	if err != nil {
		t.Fatalf("New over a vector column: %v", err)
	}
	var typ, def string
	err = pool.QueryRow(ctx, `SELECT format_type(a.atttypid, a.atttypmod), i.indexdef
		FROM pg_attribute a, pg_indexes i
		WHERE a.attrelid = 'selmem_chunks'::regclass AND a.attname = 'embedding' AND NOT a.attisdropped
		AND i.indexname = '`+vectorIndexName+`'`).Scan(&typ, &def)
	if err != nil {
		t.Fatal(err)
	}
	if typ != "halfvec(8)" || !strings.Contains(def, "halfvec_cosine_ops") {
		t.Errorf("after New: column %s, index %q; want halfvec(8) with halfvec_cosine_ops", typ, def)
	}
	hits, err := ix.Search(ctx, memstore.Query{Filter: access.Filter{All: true}, Vector: v, Limit: 1})
	if err != nil || len(hits) != 1 || hits[0].Path != "/memories/old.md" || hits[0].VectorRank != 1 {
		t.Errorf("Search = %+v, %v; want the converted chunk, vector rank 1", hits, err)
	}
}

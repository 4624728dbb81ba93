package pgindex

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/selmem/selmem/internal/pgtest"
	"github.com/selmem/selmem/memstore"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// newPool connects to dsn with AfterConnect registered; closed at cleanup.
func newPool(tb testing.TB, dsn string) *pgxpool.Pool {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		tb.Fatalf("parse dsn: %v", err)
	}
	cfg.MaxConns = 4
	cfg.AfterConnect = AfterConnect
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		tb.Fatalf("pool: %v", err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// newIndex returns an Index of dimension dim over a fresh database.
func newIndex(tb testing.TB, dim int) (*Index, *pgxpool.Pool) {
	tb.Helper()
	pool := newPool(tb, pgtest.DSN(tb))
	ix, err := New(pool, &Options{Dim: dim})
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	tb.Cleanup(func() { _ = ix.Close() })
	return ix, pool
}

// randVec returns a deterministic unit vector for seed.
func randVec(seed uint64, dim int) []float32 {
	r := rand.New(rand.NewPCG(seed, 0x5e1))
	v := make([]float32, dim)
	var n float64
	for i := range v {
		x := r.NormFloat64()
		v[i] = float32(x)
		n += x * x
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

// cosineDistance is 1 - cos(a, b), as pgvector's <=> computes it.
func cosineDistance(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return 1 - dot/math.Sqrt(na*nb)
}

// count returns the number of chunk rows matching where (SQL), with args.
func count(tb testing.TB, pool *pgxpool.Pool, where string, args ...any) int {
	tb.Helper()
	var n int
	err := pool.QueryRow(context.Background(), "SELECT count(*) FROM selmem_chunks WHERE "+where, args...).Scan(&n)
	if err != nil {
		tb.Fatalf("count: %v", err)
	}
	return n
}

// words is the vocabulary of synthetic corpora.
var words = []string{
	"revenue", "invoice", "customer", "region", "quarter", "forecast", "pipeline", "churn",
	"schema", "column", "table", "join", "filter", "report", "dashboard", "metric",
	"budget", "target", "margin", "growth", "segment", "cohort", "retention", "refund",
	"supplier", "warehouse", "shipment", "delivery", "contract", "renewal", "discount", "tax",
}

// bulkLoad inserts n synthetic chunks with COPY, bypassing Replace, for
// corpora large enough for the planner to prefer indexes, then rebuilds the
// HNSW index (faster than inserting into it row by row) and analyzes. Chunk
// i has path /memories/workspaces/ws<i%8>/f<i/10>.md, seq i%10, a body of
// 60 words (Zipf-distributed over a 4,000-word vocabulary, with vocabulary
// words mixed in) plus a word unique to it ("uniq<i>"), and vector randVec(i).
func bulkLoad(tb testing.TB, ix *Index, n, dim int) {
	tb.Helper()
	ctx := context.Background()
	if err := ix.DropSearchIndexes(ctx); err != nil {
		tb.Fatal(err)
	}
	files := map[string][]memstore.Chunk{}
	var sb strings.Builder
	for i := range n {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		z := rand.NewZipf(r, 1.1, 2, 3999)
		sb.Reset()
		for j := range 60 {
			if j%10 == 0 {
				sb.WriteString(words[r.IntN(len(words))])
			} else {
				fmt.Fprintf(&sb, "lex%d", z.Uint64())
			}
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "uniq%d", i)
		p := fmt.Sprintf("/memories/workspaces/ws%d/f%d.md", i%8, i/10)
		files[p] = append(files[p], memstore.Chunk{Path: p, Seq: i % 10, Workspace: fmt.Sprintf("ws%d", i%8),
			Scope: memstore.ScopeWorkspace, Type: "note", Heading: fmt.Sprintf("Section %d", i%10),
			Context: fmt.Sprintf("ws%d › f%d.md › Section %d", i%8, i/10, i%10), Text: sb.String(), Embedding: randVec(uint64(i), dim)})
		if len(files) >= 400 || i == n-1 {
			if err := ix.ReplaceMany(ctx, files); err != nil {
				tb.Fatalf("ReplaceMany: %v", err)
			}
			clear(files)
		}
	}
	if err := ix.BuildSearchIndexes(ctx); err != nil {
		tb.Fatal(err)
	}
}
